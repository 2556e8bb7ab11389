// models/lock_service.hpp — the seam between a run and its lock service.
//
// What a run, the checkers and the reports know about one kind of lock
// service (Redis with Sentinel, Cluster or Redlock, etcd, the work queue, the
// lock table, `none`) sits behind two objects. Not behind them: its settings
// struct in LockSpec (models/scenario.hpp); its `lock` keys, which
// loader/loader.cpp reads and loader/writer.cpp writes service by service;
// and the rules of models/validate.cpp that tie it to other settings (etcd's
// minimum lease TTL, clients[].ttl, the lock.keys a design can take). See
// docs/ARCHITECTURE.md, "Adding a lock service". The two objects:
//
//  * a `ServiceDescriptor`: static knowledge of one `ServiceKind`, usable
//    from a Scenario before any world exists. Its node groups (names, node
//    names, node order), role aliases, which service-specific faults it
//    takes and why the loader refuses one, whether it takes a lock and hands
//    out tokens, the properties it checks itself. The loader validates
//    targets and node lists against it; `directory()` (scenario.hpp) lists
//    the nodes from it.
//  * a `LockService`: the running service in one world, built by the
//    descriptor on the world's nodes. It starts, resolves a role alias at a
//    given moment, applies the faults only it understands, makes each
//    client's LockClient (models/client/client.hpp) and, after the run,
//    reports the verdicts of the properties it checks itself (etcd: the Raft
//    safety verdict).
//
// The registry (`service_registry()`) holds one descriptor per kind: the
// built-in ones (redis, etcd, none, queue, table, zookeeper, hazelcast) in this order, then any registered with
// `register_service` (tests use it for a fake service). The order fixes the
// order of node groups and of group and role names in messages.
//
//   const ServiceDescriptor& d = service_descriptor(s.lock.service);
//   for (const NodeGroup& g : d.groups(s)) ...         // "redis": redis-0 …
//   auto svc = d.build(ctx);                           // in a world
//   svc->start();
//   std::string why;
//   auto node = svc->resolve_role("redis-primary", why);
//
// Errors: `service_descriptor` of a kind nobody registered throws
// std::out_of_range; `register_service` of a kind already registered throws
// std::invalid_argument. A method that cannot do what a fault asks returns
// false (or nullopt) with the reason in `why`, which the run records as the
// fault's skip reason; it never throws for that.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/checkers/verdict.hpp"
#include "models/history.hpp"
#include "models/key_reader.hpp"
#include "models/key_writer.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim {

namespace client {
class LockClient;
}
struct ScenarioProblem;
struct ScenarioSource;

/// What a service is built from in a world. `groups[i]` holds the node ids
/// of the descriptor's `groups(scenario)[i]`, in the same order; the nodes
/// exist in `sim` already.
struct ServiceContext {
  sim::Simulation& sim;
  History& history;
  const Scenario& scenario;
  std::vector<std::vector<sim::NodeId>> groups;
  std::vector<sim::NodeId> clients;  ///< every client node, in scenario order
};

/// The running service of one world. Owned by the world; it outlives the
/// clients' LockClients and is destroyed before the simulation.
class LockService {
 public:
  virtual ~LockService() = default;

  /// Starts every node's periodic work; called once, before the run, before
  /// the clients start.
  virtual void start() = 0;

  /// The node that has `role` (one of the descriptor's `roles(scenario)`)
  /// now, at the simulation's current instant; nullopt with `why` when no
  /// node has it now (etcd without a leader: "there is no etcd leader").
  virtual std::optional<sim::NodeId> resolve_role(const std::string& role, std::string& why) const {
    why = "unknown target " + role;
    return std::nullopt;
  }

  /// Applies a fault only this service understands (one of the descriptor's
  /// `service_faults()`, target the service's name): `failover`, or
  /// `counter_reset` of the service's own token counter. Returns false with
  /// `why` when the fault is skipped (no live replica to promote, ...).
  virtual bool apply_fault(const FaultSpec& f, std::string& why) {
    why = std::string("the lock service takes no ") + to_string(f.kind) + " fault";
    return false;
  }

  /// The LockClient of client `index` (its position in the expanded client
  /// list, on node `node`); nullptr for a design that takes no lock.
  virtual std::unique_ptr<client::LockClient> make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                          std::size_t index) = 0;

  /// After the run, before the world is torn down: one verdict per property
  /// of the descriptor's `own_properties()` (expectation not yet applied;
  /// check_all does that).
  virtual std::vector<Verdict> own_verdicts() const { return {}; }

  /// After the run, before the world is torn down: a hash of the service's
  /// own record of the run that the History does not hold (etcd: the Raft
  /// events, models/fingerprint.hpp raft_fingerprint), folded into the run's
  /// fingerprint; nullopt when it keeps none.
  virtual std::optional<std::uint64_t> fingerprint() const { return std::nullopt; }
};

/// Static knowledge of one kind of lock service. Methods that take a
/// Scenario are called only with `s.lock.service == kind()` unless they say
/// otherwise.
class ServiceDescriptor {
 public:
  virtual ~ServiceDescriptor() = default;

  virtual ServiceKind kind() const = 0;
  /// The `lock.service` word ("redis"); also the `target` of its service
  /// faults and the word messages use for "this scenario's lock service is".
  virtual std::string name() const = 0;
  /// How messages name the service: "the Redis service".
  virtual std::string display_name() const { return name(); }

  /// Every group name this kind can have, in node order. They are reserved
  /// in every scenario (no client may take them); in a scenario of another
  /// service they are groups without nodes.
  virtual std::vector<std::string> group_names() const { return {}; }
  /// The groups of `s`, named and ordered as `group_names()` (a group may be
  /// empty: "sentinels" with lock.sentinels 0). Node names are unique.
  virtual std::vector<NodeGroup> groups(const Scenario& s) const {
    (void)s;
    return {};
  }
  /// Every role alias this kind can have ("redis-primary"); reserved in
  /// every scenario.
  virtual std::vector<std::string> role_names() const { return {}; }
  /// The role aliases valid in `s` (default: all of `role_names()`).
  virtual std::vector<std::string> roles(const Scenario& s) const {
    (void)s;
    return role_names();
  }

  /// False for a design that takes no lock (`none`): mutual_exclusion and
  /// no_stale_write do not apply.
  virtual bool takes_lock() const { return true; }
  /// Whether grants carry a fencing token (token_monotonic applies).
  virtual bool hands_out_tokens(const Scenario& s) const {
    (void)s;
    return false;
  }
  /// Why token_monotonic does not apply, when `hands_out_tokens(s)` is false
  /// (the loader's message after "because ").
  virtual std::string why_no_token(const Scenario& s) const {
    (void)s;
    return "the lock service hands out no token (lock.token is \"none\")";
  }
  /// Properties this service checks itself (LockService::own_verdicts):
  /// raft_safety for etcd.
  virtual std::vector<Property> own_properties() const { return {}; }

  /// Fault kinds only this service understands; such a fault names the
  /// service (`name()`) as its target.
  virtual std::vector<FaultKind> service_faults() const { return {}; }
  /// Why the loader refuses `f` (of `service_faults()`) in `s`, "" when it
  /// runs: "failover needs a replica to promote: set lock.replicas to 1 or
  /// more".
  virtual std::string fault_problem(const Scenario& s, const FaultSpec& f) const {
    (void)s;
    (void)f;
    return "";
  }
  /// What `f` (of `service_faults()`) needs when the scenario runs another
  /// service; the loader appends "; this scenario's lock service is …".
  virtual std::string fault_needs(const FaultSpec& f) const;

  // --- Its keys of the `lock` section (the loader reads them through a
  // --- KeyReader, `fencesim write` writes them through a KeyWriter).

  /// Its own keys of `lock`, in docs/FORMAT.md's order, besides "service"
  /// and — when `has_lock_key()` — the keys every such lock shares: "ttl"
  /// (required), "key", "keys". Any other key is refused (`refuse_key`).
  virtual std::vector<std::string> lock_keys() const { return {}; }
  /// The sections of `format_keys` (loader/loader.hpp) this service owns,
  /// each a name and its keys: by default {name(), lock_keys()}; Redis adds
  /// "cluster" (lock.cluster's keys).
  virtual std::vector<std::pair<std::string, std::vector<std::string>>> key_sections() const {
    return {{name(), lock_keys()}};
  }
  /// Reads its keys of `lock` into `l`, after the loader has checked the
  /// keys and read "ttl", "key" and "keys". Units and errors: KeyReader
  /// (a bad value ends the load with its JSON path). `src` records what a
  /// rule needs to know of the file's spelling (which key was written).
  virtual void read(KeyReader& in, LockSpec& l, ScenarioSource& src) const {
    (void)in;
    (void)l;
    (void)src;
  }
  /// Writes its keys back as a scenario file spells them (`fencesim write`,
  /// loader/writer.cpp), after "service", "ttl", "key", "keys": what
  /// `read` needs to give `l` again, defaults left out where the format
  /// allows.
  virtual void write(const LockSpec& l, KeyWriter& out) const {
    (void)l;
    (void)out;
  }
  /// The message for `key` — one of this service's `lock_keys()` — found in
  /// the lock of service `in` (" is a Redis setting; it does not apply to
  /// \"service\": \"etcd\""), after the quoted key; "" to let the
  /// unknown-key message stand.
  virtual std::string foreign_key(const std::string& key, const ServiceDescriptor& in) const {
    (void)key;
    (void)in;
    return "";
  }
  /// Why `key`, not one of this lock's keys, is refused in this service's
  /// lock section: a message and a suggestion (the loader adds the path),
  /// or nullopt for the unknown-key message with the nearest key. Default:
  /// the first other registered service (in registry order) that has the
  /// key and says so in its `foreign_key`.
  virtual std::optional<std::pair<std::string, std::string>> refuse_key(const std::string& key) const;

  /// The client libraries a client may choose (clients[].library), its
  /// default first unless default_library says otherwise: etcd's Go client
  /// and jetcd; ZooKeeper's Curator and kazoo. Empty: the service has no
  /// choice of library.
  virtual std::vector<ClientLibrary> client_libraries() const { return {}; }
  /// The library of a client of `s` that leaves clients[].library out: the
  /// first of client_libraries() (kGo when there is none). The lock table's
  /// depends on lock.expiry (ShedLock or client-go).
  virtual ClientLibrary default_library(const Scenario& s) const;
  /// The release lines of library `lib` a client may choose
  /// (clients[].library_version), its default last; empty: no choice.
  virtual std::vector<std::string> library_versions(ClientLibrary lib) const {
    (void)lib;
    return {};
  }
  /// The lease TTL (ZooKeeper: the session timeout) a client of library
  /// `lib` asks when the file leaves lock.ttl out (Curator 60 s, kazoo
  /// 10 s); nullopt: lock.ttl is required. resolve_defaults gives lock.ttl
  /// the first client's and clients[].ttl to a client whose library asks
  /// another.
  virtual std::optional<Duration> default_ttl(ClientLibrary lib) const {
    (void)lib;
    return std::nullopt;
  }

  // --- Rules and notes (models/validate.cpp asks, after the rules every
  // --- lock with a key shares).

  /// The first problem of the service's own settings in `s` (its lock.*
  /// keys), with the JSON path and words a file would get; nullopt when
  /// they are valid. models/rules.hpp has the vocabulary.
  virtual std::optional<ScenarioProblem> validate(const Scenario& s, const ScenarioSource& src) const;
  /// The lease TTL the service grants when a client asks for `asked` with
  /// lock settings `l` (etcd raises a TTL below its minimum, lessor.go
  /// minLeaseTTL); default: `asked`. resolve_defaults and client_ttl ask.
  virtual Duration granted_ttl(const LockSpec& l, Duration asked) const {
    (void)l;
    return asked;
  }
  /// Why `granted_ttl` raised a TTL to `granted`: the note's words after
  /// "lock.ttl raised from 1s to 2s: ".
  virtual std::string why_ttl_raised(Duration granted) const {
    (void)granted;
    return "";
  }
  /// A client's own lease TTL (clients[].ttl, at `path`) the service cannot
  /// grant; checked after the rules every TTL has (positive, at most 24h).
  virtual std::optional<ScenarioProblem> client_ttl_problem(const std::string& path, Duration ttl) const;
  /// The service's rules for one client (at `path`, "clients[0]") beyond
  /// those every client has: the lock table's leader-election clients.
  virtual std::optional<ScenarioProblem> validate_client(const Scenario& s, const ClientSpec& c,
                                                         const std::string& path) const;
  /// Whether the lock `l` may have further locks (lock.keys). When not,
  /// `why` (after "more than one lock is not supported for lock.service
  /// \"x\": ") and `fix` (the suggestion, preset to the generic one) say so.
  virtual bool takes_more_locks(const LockSpec& l, std::string& why, std::string& fix) const {
    (void)l;
    (void)fix;
    why = "only \"redis\" (one primary, with or without replicas and Sentinel) and \"etcd\" model more than one lock";
    return false;
  }
  /// The service's rules on a scenario's locks (lock.key then lock.keys,
  /// `all`, each non-empty and distinct), when there are more than one.
  virtual std::optional<ScenarioProblem> validate_locks(const Scenario& s, const std::vector<std::string>& all) const;
  /// How often a built-in client confirms its lease when the service, not
  /// clients[].renew_interval, decides it (ZooKeeper's pings, Hazelcast's
  /// session heartbeats): the interval and how notes name it ("the session
  /// heartbeat interval 5s"); nullopt: renew_interval is what it uses.
  virtual std::optional<std::pair<Duration, std::string>> own_renewal(const Scenario& s, const ClientSpec& c) const {
    (void)s;
    (void)c;
    return std::nullopt;
  }
  /// Notes on settings that cannot do what they seem to (Scenario::notes).
  virtual void notes(const Scenario& s, std::vector<std::string>& out) const {
    (void)s;
    (void)out;
  }

  // --- What reports say of the service (report/report.cpp asks; the words
  // --- and the keys are the service's own).

  /// Whether the design names a lock key (lock.key, lock.keys): false for
  /// the queue, whose leases are its messages.
  virtual bool has_lock_key() const { return takes_lock(); }
  /// Whether every message is its own lease and the resource is a ledger
  /// of per-message effects (the work queue): updates_lost and
  /// resource.idempotent belong to it.
  virtual bool per_message() const { return false; }
  /// report.json's settings.lock: the service's own keys, written after
  /// "service", "ttl", "key" and "keys".
  virtual void report_settings(const Scenario& s, KeyWriter& out) const {
    (void)s;
    (void)out;
  }
  /// report.json's settings.clients[i] with more than one lock: the
  /// service's own keys for client `c` after its "lock".
  virtual void report_client_settings(const Scenario& s, const ClientSpec& c, KeyWriter& out) const {
    (void)s;
    (void)c;
    (void)out;
  }
  /// report.md's "- lock service: <name>" line goes on with this, e.g.
  /// " (2 replicas, 3 sentinels, expiry on the wall clock, token INCR), TTL 10s".
  /// Default: ", TTL <ttl>" for a design that takes a lock, else "".
  virtual std::string report_design(const Scenario& s) const;
  /// The terminal summary's "service <name>" goes on with this, e.g.
  /// " ttl 10s replicas 2 sentinels 3 expiry wall token incr".
  /// Default: " ttl <ttl>" for a design that takes a lock, else "".
  virtual std::string summary_design(const Scenario& s) const;

  /// Builds the running service in a world (ctx.scenario's service is this).
  virtual std::unique_ptr<LockService> build(ServiceContext& ctx) const = 0;
};

/// Every registered descriptor, built-in ones first (redis, etcd, none, queue, table, zookeeper, hazelcast).
const std::vector<const ServiceDescriptor*>& service_registry();
/// The descriptor of `kind`; throws std::out_of_range if none is registered.
const ServiceDescriptor& service_descriptor(ServiceKind kind);
/// The client libraries of `s`'s service (its descriptor's
/// `client_libraries()`; empty for a kind nobody registered).
std::vector<ClientLibrary> client_libraries_of(const Scenario& s);
/// The library client `c` models: its clients[].library, or the service's
/// default (ServiceDescriptor::default_library); kGo for a kind nobody
/// registered.
ClientLibrary library_of(const Scenario& s, const ClientSpec& c);
/// The library a client of `s` that leaves clients[].library out models.
ClientLibrary default_library_of(const Scenario& s);
/// The descriptor whose `name()` is `name`, or nullptr.
const ServiceDescriptor* find_service(const std::string& name);
/// Registers a further kind (the registry keeps it for the process's life).
/// Not thread-safe: call before any run. Throws std::invalid_argument if the
/// kind is registered already.
void register_service(std::unique_ptr<ServiceDescriptor> d);

/// Every group name a node list may use, in node order: "clients", every
/// registered service's `group_names()`, "resources".
std::vector<std::string> all_group_names();
/// Every registered service's role names, in registry order.
std::vector<std::string> all_role_names();
/// The descriptor that has role alias `role`, or nullptr.
const ServiceDescriptor* role_owner(const std::string& role);
/// Names of the services that take fault kind `k` as their own (failover:
/// "redis"), in registry order: the valid `target`s of such a fault.
std::vector<std::string> services_taking(FaultKind k);
/// The descriptor that checks property `p` itself, or nullptr.
const ServiceDescriptor* property_owner(Property p);

/// The built-in descriptors (defined beside each service).
namespace redis {
const ServiceDescriptor& descriptor();
}
namespace etcd {
const ServiceDescriptor& descriptor();
}
namespace queue {
/// The work queue with visibility timeouts (models/queue/queue.hpp).
const ServiceDescriptor& descriptor();
}  // namespace queue
namespace table {
/// The lock table (models/table/table.hpp).
const ServiceDescriptor& descriptor();
}  // namespace table
namespace zookeeper {
/// ZooKeeper with Curator's and kazoo's lock recipe (models/zookeeper/zookeeper.hpp).
const ServiceDescriptor& descriptor();
}  // namespace zookeeper
namespace hazelcast {
/// Hazelcast's CP subsystem with FencedLock (models/hazelcast/hazelcast.hpp).
const ServiceDescriptor& descriptor();
}  // namespace hazelcast
/// `none`: CAS at the resource without a lock; no nodes, no lock clients.
const ServiceDescriptor& none_descriptor();

}  // namespace fencesim
