// models/scenario.hpp — a scenario as plain structs (no JSON).
//
// This is the resolved form of a scenario file (docs/FORMAT.md, version
// 1): defaults filled in, durations parsed to sim::Duration, `count` clients
// expanded to `name-0`, `name-1`, …, group names in node lists expanded to
// node names. The loader (loader/loader.hpp) produces it from JSON; tests and the
// C++ API may build it directly (include/fencesim/builder.hpp). `validate_scenario`
// (models/validate.hpp) checks the rules that do not depend on JSON, so a
// hand-built scenario gets the same errors as a file.
// Every struct compares field by field (==, notes and fault origins included),
// e.g. to check that a written file (loader/writer.hpp) loads back the same.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sim/clock.hpp"
#include "sim/time.hpp"

namespace fencesim {

class ResourceCheck;  // models/policy.hpp
class ClientPolicy;   // models/policy.hpp

using sim::Duration;
using namespace std::chrono_literals;

enum class ServiceKind { kRedis, kEtcd, kNone, kQueue, kTable, kZooKeeper, kHazelcast };
enum class RedisToken { kIncr, kNone };
/// What a Redis node keeps across a restart (docs/FORMAT.md `lock.persistence`).
enum class RedisPersistence { kNone, kAofAlways, kAofEverysec };
enum class EtcdToken { kCreateRevision, kHeaderRevision, kNone };
enum class ResourceKind { kUnfenced, kFenced, kCas, kIdempotent, kProgram };
enum class FenceCheck { kStrict, kMonotonic };
enum class WorkloadKind { kSequenceAllocator, kCounter, kWriter, kQueueWorker, kLeader };
/// workload.retry_backoff (docs/FORMAT.md "Workloads"): the wait before a
/// CAS retry. kJitter: exponential backoff with equal jitter drawn from the
/// client's stream "client/<name>/cas-retry"; kFixed: `retry_interval` every time.
enum class RetryBackoff { kJitter, kFixed };
/// clients[].retry_strategy: bsm/redislock's Options.RetryStrategy for
/// Obtain (retry.go): NoRetry (one attempt), LinearBackoff(retry_interval)
/// or ExponentialBackoff(0, retry_interval).
enum class RetryStrategy { kNone, kLinear, kExponential };
/// clients[].on_lease_loss (docs/FORMAT.md "Client policies").
enum class LeaseLossPolicy { kContinue, kAbort };
/// clients[].library (docs/FORMAT.md "Client libraries"): which client
/// library a client models. etcd: kGo (clientv3, its default), kJetcd;
/// ZooKeeper: kCurator (its default), kKazoo; Redis (one primary): kGeneric
/// (the redis.io pattern, its default), kRedisson (RLock), kRedissonFenced
/// (RFencedLock; models/client/redisson_client.cpp), kRedsync, kBsmRedislock;
/// the lock table: kShedLock (expiry holder_clock / db_clock) and kClientGo
/// (expiry observed; models/client/table_client.cpp). A service lists the
/// ones it takes (ServiceDescriptor::client_libraries) and says which is
/// the default (ServiceDescriptor::default_library).
enum class ClientLibrary {
  kGo,
  kJetcd,
  kCurator,
  kKazoo,
  kGeneric,
  kRedisson,
  kRedissonFenced,
  kRedsync,
  kBsmRedislock,
  kShedLock,
  kClientGo
};
enum class FaultKind {
  kPause,
  kClockJump,
  kClockDrift,
  kPartition,
  kHeal,
  kCrash,
  kFailover,
  kCounterReset,
  kSlow,
  kDiskStall
};
/// Which clock a clock_jump moves.
enum class ClockSelect { kWall, kMonotonic, kBoth };
enum class Property {
  kMutualExclusion,
  kNoStaleWrite,
  kNoLostUpdate,
  kTokenMonotonic,
  kProgress,
  kRaftSafety,
  kNoDuplicateEffect
};
enum class Expectation { kHolds, kViolated };

const char* to_string(ServiceKind);
/// "none", "aof_always", "aof_everysec".
const char* to_string(RedisPersistence);
const char* to_string(ResourceKind);
const char* to_string(WorkloadKind);
const char* to_string(RetryBackoff);  ///< "jitter", "fixed"
const char* to_string(FaultKind);
const char* to_string(Property);
const char* to_string(Expectation);
std::optional<Property> property_from_string(const std::string&);
std::optional<FaultKind> fault_kind_from_string(const std::string&);
/// All properties in report order.
/// Every property, in report order. A new Property is added here too: the
/// sweep's tallies are arrays of kPropertyCount, and the test
/// Scenario.EveryNamedPropertyIsListed fails for a property that has a name
/// (to_string) but no place here, so none can silently drop out of sweeps.
inline constexpr std::array<Property, 7> kAllProperties = {
    Property::kMutualExclusion, Property::kNoStaleWrite, Property::kNoLostUpdate,     Property::kTokenMonotonic,
    Property::kProgress,        Property::kRaftSafety,   Property::kNoDuplicateEffect};
inline constexpr std::size_t kPropertyCount = kAllProperties.size();
const std::vector<Property>& all_properties();

struct NetworkSpec {
  Duration latency_min = 1ms;  ///< uniform in [min, max]; equal = fixed
  Duration latency_max = 1ms;
  std::uint64_t loss_ppb = 0;  ///< loss probability in parts per billion

  bool operator==(const NetworkSpec&) const = default;
};

/// `lock.cluster`: Redis Cluster mode (models/redis/cluster.hpp). Shard s
/// has the nodes redis-s<s>-0 (its initial primary) … redis-s<s>-<replicas>.
struct RedisClusterSpec {
  int shards = 1;               ///< primaries, each owning an even share of the 16384 hash slots, in order
  int replicas = 1;             ///< replicas per shard
  Duration node_timeout = 15s;  ///< cluster-node-timeout
  /// cluster-replica-validity-factor: a replica whose data is older than
  /// repl-ping-replica-period (10 s) + node_timeout × factor, counted as
  /// clusterHandleSlaveFailover counts it, does not fail over; 0: no check.
  int replica_validity_factor = 10;
  /// repl-timeout: a replica that has received nothing from its primary for
  /// longer than this (whole seconds) notices its link down; the data age
  /// counts from then on (models/redis/cluster.hpp).
  Duration repl_timeout = 60s;
  bool operator==(const RedisClusterSpec&) const = default;
};

struct RedisSpec {
  int replicas = 1;
  Duration replication_delay = 5ms;
  int sentinels = 3;
  Duration down_after = 5s;
  sim::ClockKind expiry_clock = sim::ClockKind::kWall;
  RedisToken token = RedisToken::kIncr;
  int redlock = 0;  ///< >0: Redlock over that many independent primaries
  /// The token counter's key (lock.counter_key); nullopt: the lock key
  /// followed by ":token" (redis_counter_key).
  std::optional<std::string> counter_key;
  RedisPersistence persistence = RedisPersistence::kNone;
  /// min-replicas-to-write / min-replicas-max-lag (redis.conf; Redis 7.0
  /// replication.c refreshGoodSlavesCount, server.c processCommand): a
  /// primary refuses writes with -NOREPLICAS while fewer than this many
  /// replicas have acknowledged within the lag (whole seconds of its wall
  /// clock). 0: off (Redis's default), so runs are as before.
  int min_replicas_to_write = 0;
  Duration min_replicas_max_lag = 10s;
  /// Present: Redis Cluster mode (lock.cluster); `replicas`, `sentinels`
  /// and `redlock` do not apply then (the loader sets them to 0).
  std::optional<RedisClusterSpec> cluster;

  bool operator==(const RedisSpec&) const = default;
};

/// The name the sentinels monitor their primary under (sentinel.conf
/// `sentinel monitor <name> …`): in the model (a program's SENTINEL
/// get-master-addr-by-name, init's lock.sentinel_name) and in fencesim-real.
inline constexpr const char* kSentinelPrimaryName = "fencesim";

struct EtcdSpec {
  int nodes = 3;
  Duration election_timeout = 1s;
  Duration heartbeat = 100ms;
  EtcdToken token = EtcdToken::kCreateRevision;
  /// `lock.version` (models/etcd/versions.hpp): "" (none: the model's own
  /// combination, the defaults below), "3.4.3", "3.4" or "3.5". The six
  /// keys below are resolved: the version's profile, then the file's
  /// overrides.
  std::string version;
  bool pre_vote = true;
  bool keepalive_checks_leadership = false;
  /// With keepalive_checks_leadership: a leader whose Raft ticked within
  /// the last 3 heartbeats renews without the read index (etcd ≥ 3.4.34,
  /// ≥ 3.5.16 ensureLeadership's isActive; models/etcd/etcd.hpp).
  bool keepalive_skips_check_if_active = false;
  /// The lessor revokes expired leases only after ensureLeadership confirms
  /// that the member still leads (etcd ≥ 3.4.31, ≥ 3.5.13: PR #16822);
  /// false: a lessor not yet demoted revokes through whoever leads now
  /// (etcd-io/etcd#12528, #15247; models/etcd/etcd.hpp).
  bool revoke_checks_leadership = true;
  /// The Mutex re-reads its own key after waiting (etcd 3.5 mutex.go; gone
  /// → ErrSessionExpired); false: it returns as soon as the keys before it
  /// are deleted (3.4, etcd-io/etcd#11456).
  bool mutex_checks_own_key = true;
  /// A Lock waiting while its session ends fails at once (an upstream TODO,
  /// in no release); false: it keeps waiting, as every release does.
  bool lock_fails_on_session_end = true;
  /// `lock.wal_fsync`: how long one WAL fsync takes on a member's disk; a
  /// member persists entries, term and vote before it acknowledges them
  /// (models/etcd/raft/raft.hpp "WAL fsync"). 0: free (the default).
  Duration wal_fsync{0};

  bool operator==(const EtcdSpec&) const = default;
};

/// `lock.token` of ZooKeeper (docs/FORMAT.md "ZooKeeper"): what a holder
/// writes with. kCzxid: its lock node's creation zxid; kSequence: the
/// node's sequence number (restarts when the lock path is recreated).
enum class ZkToken { kCzxid, kSequence, kNone };
/// clients[].connection_policy (ZooKeeper clients): which connection state
/// ends a holder's belief — Curator's ConnectionStateErrorPolicy and the
/// listener a kazoo application adds. kStandard: SUSPENDED (and LOST);
/// kSession: only LOST; kNone: neither (the holder believes until it
/// releases, as a program that registers no listener).
enum class ConnectionPolicy { kStandard, kSession, kNone };

/// `lock.service: "zookeeper"` (models/zookeeper/zookeeper.hpp): an
/// ensemble, its sessions and the lock recipe's znodes. Every default is
/// ZooKeeper 3.8's (zoo.cfg / ZooKeeperServer.java).
struct ZooKeeperSpec {
  int nodes = 3;
  /// tickTime: the session tracker's bucket and the unit of the limits.
  Duration tick_time = 2s;
  /// minSessionTimeout / maxSessionTimeout; 0: 2 × and 20 × tick_time
  /// (zk_session_bounds, models/zookeeper/zookeeper.hpp).
  Duration min_session_timeout{0};
  Duration max_session_timeout{0};
  /// syncLimit, in ticks: a follower that hears nothing from its leader
  /// for this long drops it (and its clients), and the ensemble elects.
  int sync_limit = 5;
  ZkToken token = ZkToken::kCzxid;
  /// znode.container.checkIntervalMs: how often the leader's
  /// ContainerManager deletes empty container znodes (Curator's lock path).
  Duration container_check_interval = 60s;

  bool operator==(const ZooKeeperSpec&) const = default;
};

/// `lock.token` of Hazelcast (docs/FORMAT.md "Hazelcast"): kFence, the
/// fence FencedLock hands out (the Raft commit index of the acquiring
/// operation); kNone: the holder writes without one (lock() instead of
/// lockAndGetFence()).
enum class HzToken { kFence, kNone };

/// `lock.service: "hazelcast"` (models/hazelcast/hazelcast.hpp): a CP group
/// of CP members running FencedLock, with CP sessions. The session TTL is
/// lock.ttl (session-time-to-live-seconds, default 300 s). Every default is
/// Hazelcast 5.3's (CPSubsystemConfig, FencedLockConfig, RaftAlgorithmConfig).
struct HazelcastSpec {
  /// cp-member-count: the CP group's members, 3, 5 or 7 (the METADATA and
  /// DEFAULT groups span them all here).
  int cp_member_count = 3;
  /// session-heartbeat-interval-seconds: how often a client with a lock
  /// held or wanted heartbeats its CP session. Whole seconds, below lock.ttl.
  Duration session_heartbeat_interval = 5s;
  /// FencedLockConfig lock-acquire-limit: 0 re-entrant without a limit, 1
  /// not re-entrant, n at most n nested acquires by the holder.
  int lock_acquire_limit = 0;
  HzToken token = HzToken::kFence;
  /// RaftAlgorithmConfig leader-heartbeat-period-in-millis and
  /// max-missed-leader-heartbeat-count: a follower that has heard nothing
  /// from its leader for their product starts an election.
  Duration leader_heartbeat_period = 5s;
  int max_missed_leader_heartbeat_count = 5;

  bool operator==(const HazelcastSpec&) const = default;
};

/// `lock.service: "queue"`: a work queue with visibility timeouts (models/queue/queue.hpp).
struct QueueSpec {
  /// How long a received message stays invisible (on the queue's wall
  /// clock); also the lease TTL of the design (LockSpec::ttl).
  Duration visibility_timeout = 30s;
  int messages = 1;      ///< enqueued at time 0: msg-0 … msg-(messages-1)
  bool fifo = false;     ///< one message group: in order, one in flight at a time
  int max_receives = 0;  ///< > 0: past this many receives a message goes to the dead-letter queue

  bool operator==(const QueueSpec&) const = default;
};

/// `lock.service: "table"` (models/table/table.hpp): whose clock decides
/// that a lock record's lease has run out.
enum class TableExpiry {
  kHolderClock,  ///< ShedLock's default: lock_until and :now from the acquirer's wall clock
  kDbClock,      ///< ShedLock's usingDbTime(): the database's wall clock for both
  kObserved      ///< client-go leaderelection, DynamoDB lock client: the candidate's own monotonic clock
};
/// "holder_clock", "db_clock", "observed".
const char* to_string(TableExpiry);
enum class TableToken { kNone, kVersion };

/// `lock.service: "table"`: lock records in one database node `db`.
struct TableSpec {
  TableExpiry expiry = TableExpiry::kHolderClock;
  TableToken token = TableToken::kNone;
  /// After a lease ends at the service other than by release (its
  /// lock_until passed), nobody can acquire for this long (Consul sessions'
  /// LockDelay, Chubby's lock-delay); 0: no delay. Not with `observed`.
  Duration lock_delay = 0s;

  bool operator==(const TableSpec&) const = default;
};

/// The settings of a lock service registered at run time (register_service,
/// models/lock_service.hpp), which has no alternative of its own in
/// ServiceSpec: its descriptor's `read` stores them with
/// LockSpec::set_other, its `write`, `validate` and LockService read them
/// back with LockSpec::other (a dynamic_cast to its own type). Compared by
/// value.
struct ServiceSettings {
  virtual ~ServiceSettings() = default;
  virtual bool equals(const ServiceSettings& o) const = 0;
};

/// The settings of a service registered at run time: its kind and what its
/// descriptor's `read` stored (nullptr: none given). Compared by value.
struct OtherServiceSettings {
  ServiceKind kind = ServiceKind::kNone;
  std::shared_ptr<const ServiceSettings> settings;
  bool operator==(const OtherServiceSettings& o) const {
    if (kind != o.kind) return false;
    if (!settings || !o.settings) return !settings && !o.settings;
    return settings->equals(*o.settings);
  }
};

/// LockSpec::settings: the scenario's service with its own settings, one
/// alternative per built-in service (std::monostate: `"service": "none"`,
/// which has none) and OtherServiceSettings for a registered one.
using ServiceSpec = std::variant<std::monostate, RedisSpec, EtcdSpec, QueueSpec, TableSpec, ZooKeeperSpec,
                                 HazelcastSpec, OtherServiceSettings>;

struct LockSpec {
  /// The lease TTL in effect. For etcd, already raised to the minimum etcd
  /// applies (see `requested_ttl` and Scenario::notes).
  Duration ttl = 10s;
  Duration requested_ttl = 10s;
  std::string key = "lock";
  /// `lock.keys`: further locks of the scenario besides `key` (redis
  /// without cluster or redlock, and etcd). A client takes the lock its
  /// ClientSpec::lock names; each lock has its own lock record (Redis: its
  /// own key and token counter, redis_counter_key_of; etcd: its own mutex
  /// prefix "<key>/"). Empty: one lock, `key` (every scenario before
  /// multiple locks).
  std::vector<std::string> keys;
  /// The service and its own settings (`lock.service` and its keys). Set
  /// through set_service, read through service() and the accessors below.
  ServiceSpec settings = RedisSpec{};

  /// `lock.service`: which alternative `settings` holds.
  ServiceKind service() const;
  /// Makes `k` the service: its default settings, unless it is already the
  /// service (then its settings stay as they are).
  void set_service(ServiceKind k);
  /// The same by the settings' type (std::monostate: "none"), returning
  /// them: the C++ builder's verbs (include/fencesim/builder.hpp).
  template <class Spec>
  Spec& use() {
    if (!std::holds_alternative<Spec>(settings)) settings = Spec{};
    return std::get<Spec>(settings);
  }
  /// The service's own settings. Each throws std::logic_error, naming the
  /// service the scenario has, when it has another one: a caller asks for
  /// the settings of the service it serves.
  RedisSpec& redis();
  const RedisSpec& redis() const;
  EtcdSpec& etcd();
  const EtcdSpec& etcd() const;
  QueueSpec& queue();
  const QueueSpec& queue() const;
  TableSpec& table();
  const TableSpec& table() const;
  ZooKeeperSpec& zookeeper();
  const ZooKeeperSpec& zookeeper() const;
  HazelcastSpec& hazelcast();
  const HazelcastSpec& hazelcast() const;
  /// A registered service's settings (nullptr when its `read` stored none).
  const ServiceSettings* other() const;
  /// Stores a registered service's settings; the service must be one.
  void set_other(std::shared_ptr<const ServiceSettings> settings);

  bool operator==(const LockSpec&) const = default;
};

struct ClientSpec;

/// The key the token script INCRs: lock.counter_key, or the lock key
/// followed by ":token" when it is not given (always, for a service other
/// than Redis: a program client's init names it whatever the service).
std::string redis_counter_key(const LockSpec& l);
/// The counter of lock `key` (lock.key or one of lock.keys): lock.key's is
/// redis_counter_key(l) (lock.counter_key, or "<key>:token"); every other
/// lock's is "<key>:token" (lock.counter_key names lock.key's counter only).
std::string redis_counter_key_of(const LockSpec& l, const std::string& key);
/// More than one lock: lock.keys is not empty.
inline bool multiple_locks(const LockSpec& l) { return !l.keys.empty(); }
/// The lock `c` takes: clients[].lock, or lock.key.
const std::string& lock_of(const LockSpec& l, const ClientSpec& c);
/// The LockSpec a client's lock client works with: `key` is the client's
/// lock and redis.counter_key that lock's counter (models/client/).
LockSpec lock_for(const LockSpec& l, const ClientSpec& c);

/// clients[].program (docs/FORMAT.md "Program clients", docs/PROTOCOL.md):
/// the client is the user's program, run in lockstep with simulated time;
/// resource.program: the resource's check is (docs/PROTOCOL.md "Resource
/// programs").
struct ProgramSpec {
  std::vector<std::string> command;        ///< argv; command[0] looked up in PATH
  std::map<std::string, std::string> env;  ///< added to fencesim's environment
  /// The folder the program runs in: absolute once loaded from a file (the
  /// file's folder joined with program.cwd, which defaults to "."); a
  /// hand-built spec's relative cwd is taken from fencesim's own.
  std::string cwd;
  /// Real time allowed for each answer of the program (its hello, each
  /// yield, its ready after end) before the run stops with exit code 3.
  Duration yield_timeout = 10s;

  bool operator==(const ProgramSpec&) const = default;
};

struct ResourceSpec {
  ResourceKind kind = ResourceKind::kFenced;
  FenceCheck check = FenceCheck::kStrict;
  bool fence_reads = false;
  /// A fenced ledger (queue design) that also applies each message's effect
  /// once: `"kind": "fenced", "idempotent": true`.
  bool idempotent = false;
  std::int64_t initial = 0;
  int replicas = 0;  ///< further copies resource-replica-0 …
  Duration replication_delay = 50ms;
  /// `"kind": "program"`: the program that decides each read and write
  /// (docs/PROTOCOL.md "Resource programs"); nullopt for every other kind.
  std::optional<ProgramSpec> program;
  /// `"kind": "program"`: writes carry the version (and value) the client
  /// read, and a rejected write is a conflict the workload re-reads and
  /// retries (workload.retries), as with `cas`.
  bool compare_versions = false;
  /// A check of the user's (models/policy.hpp, C++ only: a file cannot
  /// name one); nullptr: the built-in check `kind`, `check` and
  /// `fence_reads` describe. Shared by every copy and run; compared by identity.
  std::shared_ptr<const ResourceCheck> custom_check;

  bool operator==(const ResourceSpec&) const = default;
};

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::kSequenceAllocator;
  std::int64_t block = 100;  ///< sequence_allocator only
  Duration work = 100ms;     ///< between read and write (a range: its min)
  int iterations = 1;
  Duration think = 1s;  ///< between iterations (a range: its min)
  /// A `cas` resource only: how many times a write rejected for a version
  /// conflict is re-read and re-applied, after a wait (retry_backoff), before the
  /// iteration fails (0: never).
  int retries = 10;
  /// A `cas` resource only: how the wait before each of those retries is
  /// chosen (RetryBackoff); the default desynchronises identical clients.
  RetryBackoff retry_backoff = RetryBackoff::kJitter;
  /// A range {"min": work, "max": work_max}: each iteration's work is drawn
  /// uniformly (in nanoseconds) from the client's own stream
  /// "client/<name>/workload"; nullopt: always `work`. Likewise think.
  std::optional<Duration> work_max;
  std::optional<Duration> think_max;

  bool operator==(const WorkloadSpec&) const = default;
};

/// A client's renew_interval left for the resolver (ClientSpec's default):
/// resolve_scenario — and run_scenario, on its own copy — sets it to
/// default_renew_interval (models/validate.hpp), a third of the TTL in effect.
inline constexpr Duration kResolveRenewInterval = Duration::min();

struct ClientSpec {
  std::string name;  ///< node name (expanded: "worker-0" for count > 1)
  Duration start = 0s;
  bool fencing = true;
  bool renew = true;
  /// kResolveRenewInterval (the default) becomes a third of this client's TTL in effect (default_renew_interval)
  /// in resolve_scenario, and run_scenario does it on its copy: a hand-built ClientSpec{} runs, though
  /// validate_scenario alone refuses it unresolved.
  Duration renew_interval = kResolveRenewInterval;
  sim::ClockKind renew_clock = sim::ClockKind::kMonotonic;
  Duration retry_interval = 100ms;
  Duration command_timeout = 1s;
  std::string resource = "resource";  ///< copy this client talks to
  /// clients[].lock: the lock this client takes, lock.key or one of
  /// lock.keys; empty: lock.key (lock_of).
  std::string lock;
  WorkloadSpec workload;
  // Client policies (docs/FORMAT.md "Client policies"); the defaults are
  // the client that never consults its lease.
  /// The margin of the lease check before each write; nullopt: no check
  /// (`false`). A write goes out only while the client's monotonic time since
  /// the last confirmed grant or renewal was sent is below TTL − margin.
  std::optional<Duration> check_lease_before_write;
  LeaseLossPolicy on_lease_loss = LeaseLossPolicy::kContinue;
  /// The client ends its belief itself when no acquire or renewal has
  /// succeeded for this long on its monotonic clock; nullopt: `"none"`.
  std::optional<Duration> lease_loss_after;
  /// clients[].ttl: this client's lease TTL as asked (etcd raises it to its
  /// minimum, as for lock.ttl); nullopt: lock.ttl. The TTL in effect is
  /// client_ttl(lock, client) (models/validate.hpp).
  std::optional<Duration> ttl;
  /// clients[].library: the client library modelled; nullopt: the
  /// service's default (library_of, models/lock_service.hpp). etcd:
  /// models/client/etcd_client.cpp; ZooKeeper: models/zookeeper/client.cpp.
  std::optional<ClientLibrary> library;
  /// clients[].library_version: the library's release line whose behaviour
  /// is modelled, where it changed ("" : the library's default). Redisson:
  /// "3.40", "3.45", "3.52" (models/client/redisson_client.cpp); client-go:
  /// "8.0", "0.36" (models/client/table_client.cpp).
  std::string library_version;
  /// clients[].retry_strategy (bsm/redislock only): how Obtain retries a
  /// lock held by another; nullopt: the library's default, NoRetry.
  std::optional<RetryStrategy> retry_strategy;
  /// clients[].tries (redsync, bsm/redislock): the most attempts one
  /// acquire makes — redsync's WithTries (default 32), bsm/redislock's
  /// LimitRetry(strategy, tries − 1) (default: no limit); nullopt: the
  /// library's default. 1 … Ranges::kTries.
  std::optional<int> tries;
  /// clients[].connection_policy (ZooKeeper clients only): which
  /// connection state ends the holder's belief; nullopt: kStandard.
  std::optional<ConnectionPolicy> connection_policy;
  /// A client policy of the user's (models/policy.hpp, C++ only); nullptr:
  /// the built-in one made of renew, renew_interval, renew_clock and the
  /// client policies above, which a custom policy replaces (they must keep
  /// their defaults). Compared by identity.
  std::shared_ptr<const ClientPolicy> policy;
  /// clients[].program: the client is this program (it has no built-in
  /// workload; `workload` keeps its default and is not used).
  std::optional<ProgramSpec> program;

  bool operator==(const ClientSpec&) const = default;
};

struct FaultSpec {
  Duration at = 0s;
  /// With a value, `at` is a range {at, at_max}: each run draws the start
  /// (draw_fault_times, models/nemesis.hpp) and runs the fault as if `at`
  /// were the drawn time. Unset: `at` is fixed.
  std::optional<Duration> at_max;
  FaultKind kind = FaultKind::kPause;
  std::string target;                ///< node name or role alias (pause, crash, clock_*, slow, failover, counter_reset)
  std::optional<Duration> duration;  ///< pause, clock_drift, partition, slow
  Duration by = 0s;                  ///< clock_jump
  ClockSelect clock = ClockSelect::kWall;
  std::int64_t ppm = 0;                          ///< clock_drift
  std::vector<std::vector<std::string>> groups;  ///< partition
  std::vector<std::string> isolate;              ///< partition
  bool one_way = false;
  std::optional<Duration> restart_after;  ///< crash
  bool power_loss = false;                ///< crash: the machine loses power (what was not fsynced is lost)
  std::int64_t value = 0;                 ///< counter_reset
  Duration delay = 0s;                    ///< slow
  std::string origin;                     ///< "faults[2]" or "nemesis#5", for reports

  bool operator==(const FaultSpec&) const = default;
};

struct NemesisSpec {
  std::vector<FaultKind> kinds;
  std::vector<std::string> targets;  ///< expanded to single nodes
  /// Instead of targets: each draw picks one group and hits all its nodes at
  /// once (each group expanded, duplicates dropped; roles stay roles).
  std::vector<std::vector<std::string>> groups;
  Duration interval_min = 10s;
  Duration interval_max = 10s;
  Duration max_duration = 15s;
  /// Swarm testing: each run draws only from a random non-empty subset of
  /// the kinds and of the targets (draw_swarm, models/nemesis.hpp).
  bool swarm = false;

  bool operator==(const NemesisSpec&) const = default;
};

/// One bound of `expect.metrics`: a count, or a duration in nanoseconds for
/// a duration metric (models/metric_expect.hpp says which is which).
struct MetricBound {
  std::optional<std::int64_t> min;  ///< the value must be ≥ min
  std::optional<std::int64_t> max;  ///< the value must be ≤ max

  bool operator==(const MetricBound&) const = default;
};

struct Scenario {
  int version = 1;
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  Duration duration = 60s;
  Duration settle = 30s;
  NetworkSpec network;
  LockSpec lock;
  ResourceSpec resource;
  std::vector<ClientSpec> clients;
  std::vector<FaultSpec> faults;
  std::optional<NemesisSpec> nemesis;
  std::map<Property, Expectation> expect;
  /// expect.metrics, by metric name (models/metric_expect.hpp).
  std::map<std::string, MetricBound> expect_metrics;
  /// Remarks the loader made that the report repeats (e.g. a raised TTL).
  std::vector<std::string> notes;

  bool operator==(const Scenario&) const = default;
};

/// One named group of nodes ("redis": redis-0, redis-1 …), in node order.
struct NodeGroup {
  std::string name;
  std::vector<std::string> nodes;
  /// A named subset of nodes that another group lists already (Redis
  /// Cluster's "redis-s0" …): usable in node lists, but not a second copy
  /// of its nodes (NodeDirectory::all and service_nodes skip it).
  bool alias = false;
};

/// Node names of a scenario in declaration order, and its group names.
/// Generic: ordered groups of node names. First "clients", then every
/// registered lock service's groups (models/lock_service.hpp; only the
/// scenario's own service has nodes, the others' groups are kept empty so
/// their names stay known), then "resources" (resource,
/// resource-replica-0 …). Node ids follow this order (clients, redis-*,
/// sentinel-*, etcd-*, resource, resource-replica-*), so it is part of what
/// makes a run deterministic.
struct NodeDirectory {
  std::vector<NodeGroup> groups;
  /// Role aliases valid for this scenario ("redis-primary", "etcd-leader").
  std::vector<std::string> role_names;

  /// Every node, in group order.
  std::vector<std::string> all() const;
  /// Expands a group name to its nodes; nullopt if `name` is not a group.
  std::optional<std::vector<std::string>> group(const std::string& name) const;
  bool is_node(const std::string& name) const;
  /// Role aliases valid for this scenario.
  const std::vector<std::string>& roles() const { return role_names; }
  /// The "clients" and "resources" groups.
  const std::vector<std::string>& clients() const;
  const std::vector<std::string>& resources() const;
  /// The nodes of the lock service (every group but clients and resources).
  std::vector<std::string> service_nodes() const;
};
/// The directory of `s`, from its clients, its service's descriptor
/// (models/lock_service.hpp) and its resource copies.
NodeDirectory directory(const Scenario& s);

/// Does `p` apply to this design (docs/FORMAT.md "Properties"
/// apply")? Decided by the property's checker (models/checkers/registry.hpp).
bool property_applies(const Scenario& s, Property p);

/// Hard limits that keep a run bounded (checked by the loader).
struct Limits {
  static constexpr int kMaxClients = 200;
  static constexpr int kMaxServiceNodes = 25;
  static constexpr int kMaxResourceCopies = 25;
  static constexpr int kMaxIterations = 100'000;
  static constexpr int kMaxFaults = 10'000;
  static constexpr Duration kMaxDuration = 24h;
  /// A run that needs more events than this is stopped (exit 2): a few
  /// seconds of CPU and about 2 to 3 GB of memory at most (the trace and history
  /// of every event are kept for the reports; at 20 M a fresh-user trial saw
  /// 4.2 GB), so a mistaken scenario fails fast instead of looking hung or
  /// exhausting memory. The shipped scenarios need well under 1 M.
  static constexpr std::uint64_t kEventBudget = 5'000'000;
  /// A run with more events than this waiting at once is stopped the same
  /// way: a scenario that schedules faster than it runs (25 members with a
  /// 1 ns heartbeat and 1 ms of latency) grew to 14 GB of waiting messages
  /// within the event budget. A waiting message costs ≈ 250 bytes, so this
  /// is ≈ 250 MB; the shipped scenarios keep under a thousand waiting.
  static constexpr std::size_t kPendingBudget = 1'000'000;
};

}  // namespace fencesim
