// models/validate.hpp — the rules of a scenario that do not depend on JSON,
// in one place: defaults that depend on other settings (resolution), the
// semantic checks (ranges, cross-field rules, targets that exist, properties
// that apply to the design), and the notes for input that loads but has no
// effect or cannot mean what it seems to.
//
//   fencesim::Scenario s = …;                      // built in code
//   fencesim::resolve_scenario(s);                 // ttl/3 renewals, etcd TTL, notes
//   if (auto p = fencesim::validate_scenario(s)) {
//     std::cerr << p->to_string() << "\n";         // "at clients[1].renew_interval: must be …"
//   }
//
// The loader (loader/loader.hpp) reads JSON, checks syntax, types and keys,
// and then calls these same functions, so a file and a Scenario built in code
// (see fencesim/builder.hpp) get the same message at the same JSON path.
// run_scenario (models/world.hpp) calls validate_scenario first and throws
// InvalidScenario rather than run a scenario that breaks a rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario.hpp"

namespace fencesim {

/// The first rule a scenario breaks.
struct ScenarioProblem {
  std::string path;        ///< JSON path a file would have, e.g. "clients[1].renew_interval"; "" for the whole
  std::string message;     ///< what is wrong and what was expected (the loader's words)
  std::string suggestion;  ///< e.g. `did you mean "A"?`, or ""
  /// "at PATH: message (suggestion)", or "message (suggestion)" without a path.
  std::string to_string() const;
};

/// Thrown by run_scenario for a Scenario that validate_scenario refuses;
/// what() is problem.to_string().
struct InvalidScenario : std::invalid_argument {
  explicit InvalidScenario(ScenarioProblem p);
  ScenarioProblem problem;
};

/// Where the parts of a Scenario came from in a file, so errors name the
/// file's JSON path. A Scenario built in code leaves it empty: client i is
/// then "clients[i]" and every setting counts as given.
struct ScenarioSource {
  /// For each (expanded) client: the index of its entry in the file's
  /// clients[] and whether its name was expanded by a `count` above 1
  /// ("w-0", "w-1" … of the entry "w").
  struct Client {
    std::size_t index = 0;
    bool expanded = false;
  };
  std::vector<Client> clients;
  bool election_timeout_given = true;  ///< lock.election_timeout was written (else heartbeat is blamed)
  bool nemesis_interval_given = true;  ///< nemesis.interval was written (else "nemesis" is blamed)
  /// Client i's source (identity when `clients` is empty).
  Client client(std::size_t i) const { return i < clients.size() ? clients[i] : Client{i, false}; }
  /// "clients[N]" for client i.
  std::string client_path(std::size_t i) const;
};

/// The renewal interval a client gets when it names none: a third of the
/// TTL in effect for it (at least 1 ns). The one owner of this rule:
/// resolution, the writer (which leaves the default out) and the jetcd check
/// all call it.
Duration default_renew_interval(const LockSpec& l, const ClientSpec& c);

/// For a service whose built-in clients keep their session alive by
/// themselves (ZooKeeper's pings, Hazelcast's session heartbeats):
///  * `self_renewing_client_problem`: a program client (the protocol has no
///    requests for `service`, e.g. "ZooKeeper"; `suggestion` says what to
///    use) and `"renew": false` (`why_renew` says why it does not apply) are
///    refused, at `path` ("clients[0]").
///  * `self_renewing_notes`: a note for each built-in client whose
///    renew_clock or renew_interval is not the default, which it does not
///    use (`clock_why`, `interval_why`: the words after "has no effect: ").
std::optional<ScenarioProblem> self_renewing_client_problem(const ClientSpec& c, const std::string& path,
                                                            const std::string& service, const std::string& suggestion,
                                                            const std::string& why_renew);
void self_renewing_notes(const Scenario& s, const std::string& clock_why, const std::string& interval_why,
                         std::vector<std::string>& out);

/// Fills in what depends on other settings, as the format defines it:
///  * etcd: lock.ttl = lock.requested_ttl raised to etcd's minimum lease TTL,
///    ceil(1.5 × election_timeout) whole seconds, with a note when raised;
///    other services: lock.ttl = lock.requested_ttl;
///  * each client whose renew_interval is kResolveRenewInterval: ttl/3;
///  * Scenario::notes: every note of scenario_notes() not already there.
/// Call it once the settings are in; it is idempotent. A requested etcd TTL
/// that is not whole seconds is left for validate_scenario to refuse.
void resolve_scenario(Scenario& s);
/// The first two of those alone (lock.ttl with the etcd note, renew
/// intervals), for the loader, which resolves before it checks the clients.
void resolve_defaults(Scenario& s);

/// Notes on input that loads but has no effect or cannot mean what it seems
/// (docs/FORMAT.md "Notes"), in a fixed order; the etcd TTL raise is made by
/// resolve_scenario, not here.
std::vector<std::string> scenario_notes(const Scenario& s);

/// Every rule, in the order a file is read (top level, network, lock,
/// resource, clients, faults, nemesis, expect); nullopt when it holds.
std::optional<ScenarioProblem> validate_scenario(const Scenario& s, const ScenarioSource& src = {});

/// The same rules one block at a time, for the loader, which checks each
/// block as soon as it is read (so a file gets its first error first).
std::optional<ScenarioProblem> validate_top(const Scenario& s);
std::optional<ScenarioProblem> validate_network(const Scenario& s);
std::optional<ScenarioProblem> validate_lock(const Scenario& s, const ScenarioSource& src = {});
std::optional<ScenarioProblem> validate_resource(const Scenario& s);
/// The clients, then the locks (lock.keys and clients[].lock: docs/FORMAT.md
/// "More than one lock"), which need both blocks.
std::optional<ScenarioProblem> validate_clients(const Scenario& s, const ScenarioSource& src = {});
std::optional<ScenarioProblem> validate_faults(const Scenario& s);
std::optional<ScenarioProblem> validate_nemesis(const Scenario& s, const ScenarioSource& src = {});
std::optional<ScenarioProblem> validate_expect(const Scenario& s);

/// etcd's minimum lease TTL for an election timeout: ceil(1.5 × et) in whole
/// seconds (etcd lessor.go minLeaseTTL).
Duration etcd_min_ttl(Duration election_timeout);

/// The lease TTL in effect for client `c`: its own `ttl` (clients[].ttl) or
/// else lock.ttl; for etcd a client's own whole-second TTL is raised to
/// etcd_min_ttl as lock.ttl is (the member raises it when it grants).
Duration client_ttl(const LockSpec& l, const ClientSpec& c);

/// The one wording of the jetcd keepalive rule (a client with "library":
/// "jetcd" takes no renew_interval or renew_clock): the loader (the key is
/// present) and validate_clients (the value differs from the default) both
/// say it. `field`: the key named.
std::string jetcd_keepalive_setting_message(const std::string& field);
/// Why client library `lib` does not apply to `s`'s service (a message and
/// a suggestion; the caller adds the JSON path), nullopt when it does.
std::optional<std::pair<std::string, std::string>> library_problem(const Scenario& s, ClientLibrary lib);

/// Name lengths (bytes) the rules allow.
struct NameLimits {
  static constexpr std::size_t kScenario = 100;  ///< `scenario` (it names the report folder)
  static constexpr std::size_t kClient = 64;     ///< a client's name before `count` expansion
};

/// An inclusive integer range with the words the loader uses for it.
struct IntRange {
  std::int64_t lo;
  std::int64_t hi;
  const char* extra = "";  ///< appended after the range, e.g. " (at most 25 copies)"
  /// "expected an integer from LO to HI EXTRA, got GOT"
  std::string message(std::string_view got) const;
  bool contains(std::int64_t v) const { return v >= lo && v <= hi; }
};
/// The ranges of the integer settings (loader and validator share them).
struct Ranges {
  // lock.redlock, lock.replicas (without Redlock), lock.sentinels, lock.nodes (etcd)
  static constexpr IntRange kRedlock{0, 25};
  static constexpr IntRange kRedisReplicas{0, 24, " (the primary and its replicas are at most 25 nodes)"};
  static constexpr IntRange kSentinels{0, 25};
  static constexpr IntRange kEtcdNodes{1, 25};
  // lock.cluster.shards, lock.cluster.replicas (Redis Cluster; at most 25 nodes in all)
  static constexpr IntRange kClusterShards{1, 25};
  static constexpr IntRange kClusterReplicas{0, 24};
  // lock.cluster.replica_validity_factor (Redis accepts 0 … INT_MAX; the
  // bound keeps node_timeout × factor far from overflow)
  static constexpr IntRange kClusterValidityFactor{0, 1000};
  // resource.replicas, resource.initial
  static constexpr IntRange kResourceReplicas{0, 24, " (at most 25 copies)"};
  static constexpr IntRange kInitial{-1'000'000'000'000'000, 1'000'000'000'000'000};
  // clients[].count, workload.iterations, workload.block
  static constexpr IntRange kCount{1, 200};
  static constexpr IntRange kIterations{1, 100'000};
  static constexpr IntRange kBlock{1, 1'000'000'000};
  // lock.messages, lock.max_receives (the queue design; SQS's maxReceiveCount is 1 to 1000)
  static constexpr IntRange kQueueMessages{1, 100'000};
  static constexpr IntRange kMaxReceives{0, 1000, " (0: no dead-letter queue)"};
  // workload.retries (a cas resource)
  static constexpr IntRange kRetries{0, 1'000};
  // clients[].tries (redsync's WithTries, bsm/redislock's LimitRetry + 1)
  static constexpr IntRange kTries{1, 1'000};
  // a count bound in expect.metrics
  static constexpr IntRange kMetricCount{0, 1'000'000'000'000'000};
};

// Text helpers the loader shares, so its messages and these match.

/// A user string made safe for a one-line message: in double quotes, control
/// characters escaped, cut after `max` bytes.
std::string quote_text(std::string_view s, std::size_t max = 48);
/// `did you mean "x"?` for the nearest of `candidates` within a few edits
/// (case-insensitive, transpositions count one), or "".
std::string suggest_nearest(std::string_view got, const std::vector<std::string>& candidates);
/// "a, b, c" (", …" after max_items).
std::string join_names(const std::vector<std::string>& items, std::size_t max_items = 12);

}  // namespace fencesim
