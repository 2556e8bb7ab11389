// models/redis/service.cpp — Redis as a lock service (models/lock_service.hpp):
// its descriptor (node groups, role, faults, properties) and RedisService's
// LockService methods.
#include <array>
#include <map>

#include <fmt/format.h>

#include "models/client/client.hpp"
#include "models/redis/cluster.hpp"
#include "models/redis/keys.hpp"
#include "models/redis/redis.hpp"
#include "models/rules.hpp"
#include "models/words.hpp"

namespace fencesim::redis {

namespace {

using namespace rules;  // problem, key, positive, … (models/rules.hpp)

/// lock.cluster (models/redis/cluster.hpp).
Problem validate_cluster(const RedisSpec& r) {
  const RedisClusterSpec& c = *r.cluster;
  if (r.redlock != 0) {
    return problem("lock.redlock",
                   "must be 0 (or left out) with lock.cluster: Redlock runs over independent "
                   "primaries, a cluster shards one key space over primaries with replicas");
  }
  if (r.sentinels != 0) {
    return problem("lock.sentinels",
                   "must be 0 (or left out) with lock.cluster: Redis Cluster fails over by "
                   "itself, Sentinel does not monitor a cluster");
  }
  if (r.replicas != 0) {
    return problem("lock.replicas", "must be 0 (or left out) with lock.cluster: a cluster's replicas are per shard",
                   "use lock.cluster.replicas");
  }
  FENCESIM_CHECK(in_range("lock.cluster.shards", c.shards, Ranges::kClusterShards));
  FENCESIM_CHECK(in_range("lock.cluster.replicas", c.replicas, Ranges::kClusterReplicas));
  if (c.shards * (c.replicas + 1) > Limits::kMaxServiceNodes) {
    return problem("lock.cluster.replicas", "the cluster would have " + std::to_string(c.shards * (c.replicas + 1)) +
                                                " nodes (shards × (replicas + 1)); at most " +
                                                std::to_string(Limits::kMaxServiceNodes));
  }
  FENCESIM_CHECK(positive("lock.cluster.node_timeout", c.node_timeout));
  FENCESIM_CHECK(
      in_range("lock.cluster.replica_validity_factor", c.replica_validity_factor, Ranges::kClusterValidityFactor));
  FENCESIM_CHECK(positive("lock.cluster.repl_timeout", c.repl_timeout));
  if (c.repl_timeout % std::chrono::seconds(1) != Duration::zero()) {
    return problem("lock.cluster.repl_timeout",
                   "must be a whole number of seconds (repl-timeout is an integer of seconds, compared with the "
                   "replica's clock in whole seconds), got " +
                       fmt_d(c.repl_timeout),
                   "e.g. \"60s\"");
  }
  return std::nullopt;
}

/// Redlock (lock.redlock > 0), with or without pools of replicas and sentinels.
Problem validate_redlock(const RedisSpec& r) {
  const std::string why = " when redlock > 0: Redlock runs over independent primaries";
  // Pools (RedLock.net#11, node-redlock#16): each pool a primary with
  // lock.replicas replicas and its own lock.sentinels sentinels. Both or
  // neither: a pool's replica without Sentinel is never promoted, and a
  // pool's Sentinel without a replica has nothing to promote.
  FENCESIM_CHECK(in_range("lock.replicas", r.replicas, IntRange{0, Limits::kMaxServiceNodes}));
  FENCESIM_CHECK(in_range("lock.sentinels", r.sentinels, Ranges::kSentinels));
  if (r.replicas != 0 && r.sentinels == 0) {
    return problem("lock.replicas",
                   "must be 0 (or left out) in Redlock mode without lock.sentinels: a pool's replica is only "
                   "promoted by the pool's sentinels, so without them the pools behave as with no replicas",
                   "add \"sentinels\": 3 for each pool's own sentinels, or remove lock.replicas");
  }
  if (r.sentinels != 0 && r.replicas == 0) {
    return problem("lock.sentinels",
                   "must be 0 (or left out) in Redlock mode without lock.replicas: a pool's sentinels need a "
                   "replica to promote",
                   "add \"replicas\": 1 for each pool's replicas, or remove lock.sentinels");
  }
  const int nodes = r.redlock * (1 + r.replicas + r.sentinels);
  if (nodes > Limits::kMaxServiceNodes) {
    return problem("lock.replicas",
                   "the Redlock pools would have " + std::to_string(nodes) +
                       " nodes (redlock × (1 + replicas + sentinels)); at most " +
                       std::to_string(Limits::kMaxServiceNodes),
                   "use fewer pools, replicas or sentinels");
  }
  if (r.token != RedisToken::kNone) {
    return problem("lock.token", "must be \"none\" (or left out)" + why + " and hands out no fencing token");
  }
  return std::nullopt;
}

/// lock.min_replicas_to_write and lock.min_replicas_max_lag.
Problem validate_min_replicas(const RedisSpec& r) {
  const Duration lag = r.min_replicas_max_lag;
  FENCESIM_CHECK(non_negative("lock.min_replicas_max_lag", lag));
  if (lag % std::chrono::seconds(1) != Duration::zero()) {
    return problem("lock.min_replicas_max_lag",
                   "must be a whole number of seconds (min-replicas-max-lag is an integer of seconds, compared with "
                   "the primary's clock in whole seconds), got " +
                       fmt_d(lag),
                   "e.g. \"10s\"");
  }
  if (r.min_replicas_to_write == 0) return std::nullopt;
  if (r.cluster || r.redlock > 0) {
    return problem("lock.min_replicas_to_write",
                   std::string("is modelled for one primary with replicas (and Sentinel), not with ") +
                       (r.cluster ? "lock.cluster" : "lock.redlock"),
                   "remove lock.min_replicas_to_write");
  }
  if (r.min_replicas_to_write > r.replicas) {
    return problem("lock.min_replicas_to_write",
                   "is " + std::to_string(r.min_replicas_to_write) + " but lock.replicas is " +
                       std::to_string(r.replicas) + ": the primary would refuse every write",
                   "at most lock.replicas");
  }
  return std::nullopt;
}

Problem validate_redis(const Scenario& s) {
  const RedisSpec& r = s.lock.redis();
  FENCESIM_CHECK(in_range("lock.redlock", r.redlock, Ranges::kRedlock));
  if (r.cluster) {
    FENCESIM_CHECK(validate_cluster(r));
  } else if (r.redlock > 0) {
    FENCESIM_CHECK(validate_redlock(r));
  } else {
    FENCESIM_CHECK(in_range("lock.replicas", r.replicas, Ranges::kRedisReplicas));
    FENCESIM_CHECK(in_range("lock.sentinels", r.sentinels, Ranges::kSentinels));
  }
  if (r.counter_key) {
    if (r.counter_key->empty()) return problem("lock.counter_key", "the counter key must not be empty");
    FENCESIM_CHECK(key_without_controls("lock.counter_key", *r.counter_key, "the counter key"));
    if (*r.counter_key == s.lock.key) {
      return problem("lock.counter_key",
                     "the counter key must differ from the lock key " + quote_text(s.lock.key) +
                         ": the script INCRs it after SET of the lock key, and INCR of the lock's value fails",
                     "e.g. " + quote_text(s.lock.key + ":token"));
    }
  }
  FENCESIM_CHECK(non_negative("lock.replication_delay", r.replication_delay));
  FENCESIM_CHECK(positive("lock.down_after", r.down_after));
  FENCESIM_CHECK(validate_min_replicas(r));
  if (s.lock.ttl != s.lock.requested_ttl) {
    return problem("lock.ttl", "lock.ttl (" + fmt_d(s.lock.ttl) + ") differs from lock.requested_ttl (" +
                                   fmt_d(s.lock.requested_ttl) +
                                   "); set requested_ttl and call resolve_scenario (fencesim/builder.hpp does)");
  }
  return std::nullopt;
}

void redis_notes(const Scenario& s, std::vector<std::string>& out) {
  const RedisSpec& r = s.lock.redis();
  if (r.cluster && r.token == RedisToken::kIncr) {
    const std::string counter = redis_counter_key(s.lock);
    const int a = redis::key_hash_slot(s.lock.key);
    const int b = redis::key_hash_slot(counter);
    if (a != b) {
      out.push_back("lock.key " + quote_text(s.lock.key) + " (slot " + std::to_string(a) + ") and the token counter " +
                    quote_text(counter) + " (slot " + std::to_string(b) +
                    ") hash to different slots: under lock.cluster the acquire script fails with \"CROSSSLOT Keys "
                    "in request don't hash to the same slot\" and nothing is granted; a hash tag such as " +
                    quote_text("{" + s.lock.key + "}") + " in both keys puts them in one slot");
    }
  }
  if (r.redlock == 0 && r.sentinels > 0 && r.replicas == 0) {
    out.push_back("lock.sentinels is " + std::to_string(r.sentinels) +
                  " but lock.replicas is 0: Sentinel has no replica to promote, so it never fails over");
  }
}

/// More than one lock with token "incr": each lock's counter is a key of
/// its own (redis_counter_key_of).
Problem validate_redis_locks(const LockSpec& l, const std::vector<std::string>& all) {
  if (l.redis().token != RedisToken::kIncr) return std::nullopt;
  // Each lock's counter must be a key of its own: not another lock's key, not another lock's counter.
  auto path_of = [&](std::size_t i) {
    return i == 0 ? std::string("lock.key") : "lock.keys[" + std::to_string(i - 1) + "]";
  };
  std::map<std::string, std::size_t> counter_of;  // counter → its lock
  for (std::size_t i = 0; i < all.size(); ++i) counter_of.emplace(redis_counter_key_of(l, all[i]), i);
  for (std::size_t j = 0; j < all.size(); ++j) {
    auto it = counter_of.find(all[j]);
    if (it == counter_of.end()) continue;
    return problem(it->second == 0 && l.redis().counter_key && j == 0 ? std::string("lock.counter_key") : path_of(j),
                   "the lock " + quote_text(all[j]) + " is also the token counter of lock " +
                       quote_text(all[it->second]) + ": every lock needs a counter key of its own",
                   "rename the lock (a lock's counter is \"<key>:token\"; lock.counter_key names lock.key's only)");
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto it = counter_of.find(redis_counter_key_of(l, all[i]));
    if (it->second != i) {
      return problem(
          l.redis().counter_key && (i == 0 || it->second == 0) ? std::string("lock.counter_key") : path_of(i),
          "locks " + quote_text(all[it->second]) + " and " + quote_text(all[i]) + " would share the token counter " +
              quote_text(it->first) + ": every lock needs a counter key of its own",
          "choose another lock.counter_key");
    }
  }
  return std::nullopt;
}

bool is_redisson(ClientLibrary l) { return l == ClientLibrary::kRedisson || l == ClientLibrary::kRedissonFenced; }

/// clients[].library "redisson" / "redisson-fenced" (models/client/redisson_client.cpp).
Problem validate_redisson_client(const Scenario& s, const ClientSpec& c, const std::string& path) {
  const ClientLibrary lib = library_of(s, c);
  const std::string at = key(path, "library");
  const RedisSpec& r = s.lock.redis();
  if (c.program && c.library) {
    return problem(at, "a client program runs its own code; \"library\" chooses a built-in client's library",
                   "remove \"library\", or use a \"workload\"");
  }
  // One lock key holds either the seed pattern's string or Redisson's hash:
  // the two would answer WRONGTYPE to each other.
  for (std::size_t i = 0; i < s.clients.size() && &s.clients[i] != &c; ++i) {
    const ClientSpec& o = s.clients[i];
    if (lock_of(s.lock, o) != lock_of(s.lock, c)) continue;
    if ((o.program || c.program) && (is_redisson(library_of(s, o)) || is_redisson(lib))) {
      const ClientSpec& prog = o.program ? o : c;
      const ClientSpec& rl = o.program ? c : o;
      return problem(at,
                     "client " + prog.name + " is a program and client " + rl.name +
                         " uses Redisson on the same lock: Redisson keeps the lock as a hash, and fencesim cannot "
                         "know what the program stores at the key (a string SET would answer WRONGTYPE to "
                         "Redisson's script, and the other way round)",
                     "give the program and the Redisson client each its own lock (lock.keys and clients[].lock)");
    }
    if (o.program || c.program) continue;
    if (is_redisson(library_of(s, o)) != is_redisson(lib)) {
      return problem(at,
                     "client " + c.name + " uses " + quote_text(word(lib)) + " and client " + o.name + " " +
                         quote_text(word(library_of(s, o))) +
                         " on the same lock: Redisson keeps a lock as a hash, the redis.io pattern as a string, and "
                         "each would get WRONGTYPE from the other's key",
                     "give both clients the same kind of \"library\", or each its own lock (lock.keys and "
                     "clients[].lock)");
    }
  }
  if (!is_redisson(lib)) return std::nullopt;
  if (r.cluster || r.redlock > 0) {
    return problem(at,
                   std::string("Redisson's locks are modelled on one primary with replicas and Sentinel, not with ") +
                       (r.cluster ? "lock.cluster" : "lock.redlock"),
                   "remove lock." + std::string(r.cluster ? "cluster" : "redlock") + ", or \"library\"");
  }
  if (lib == ClientLibrary::kRedisson && r.token == RedisToken::kIncr) {
    return problem(at,
                   "Redisson's RLock hands out no fencing token (its acquire script sets a hash field and INCRs "
                   "nothing), but lock.token is \"incr\" (the Redis default when left out)",
                   "set lock.token \"none\" for RLock, or use \"library\": \"redisson-fenced\": RFencedLock INCRs a "
                   "token counter in its acquire script and returns it");
  }
  if (lib == ClientLibrary::kRedissonFenced && r.token != RedisToken::kIncr) {
    return problem(at, "RFencedLock always INCRs its token counter in the acquire script, but lock.token is \"none\"",
                   "remove lock.token, or use \"library\": \"redisson\" for RLock");
  }
  if (c.renew_interval != default_renew_interval(s.lock, c) || c.renew_clock != sim::ClockKind::kMonotonic) {
    return problem(key(path, c.renew_clock != sim::ClockKind::kMonotonic ? "renew_clock" : "renew_interval"),
                   "Redisson's watchdog renews every lockWatchdogTimeout / 3 (lock.ttl / 3) on the JVM's timer",
                   "remove it; \"renew\": false is lock(leaseTime), a lease without the watchdog");
  }
  return std::nullopt;
}

/// The Go libraries' renewals run on the caller's time.Ticker: a renew
/// clock other than the monotonic one is refused.
Problem go_ticker_clock(const ClientSpec& c, const std::string& path, const std::string& who) {
  if (c.renew_clock == sim::ClockKind::kMonotonic) return std::nullopt;
  return problem(key(path, "renew_clock"), who + " on a Go ticker, and Go measures durations on the monotonic clock",
                 "remove renew_clock");
}

/// clients[].library "redsync" (models/client/redis_client.cpp, RedlockClient).
Problem validate_redsync_client(const Scenario& s, const ClientSpec& c, const std::string& path) {
  if (library_of(s, c) != ClientLibrary::kRedsync) return std::nullopt;
  const RedisSpec& r = s.lock.redis();
  if (r.redlock == 0) {
    return problem(key(path, "library"),
                   std::string("redsync is a Redlock library: it locks a quorum of independent pools, and is "
                               "modelled with lock.redlock, not ") +
                       (r.cluster ? "lock.cluster" : "one primary"),
                   "set lock.redlock (e.g. 3), or remove \"library\"");
  }
  return go_ticker_clock(c, path, "redsync's caller extends");
}

/// clients[].library "bsm-redislock" (models/client/bsm_redislock_client.cpp).
Problem validate_bsm_redislock_client(const Scenario& s, const ClientSpec& c, const std::string& path) {
  if (library_of(s, c) != ClientLibrary::kBsmRedislock) return std::nullopt;
  const RedisSpec& r = s.lock.redis();
  if (r.cluster || r.redlock > 0) {
    return problem(key(path, "library"),
                   std::string("bsm/redislock locks one Redis (a go-redis client: one primary, or Sentinel's), and "
                               "is modelled on one primary, not with ") +
                       (r.cluster ? "lock.cluster" : "lock.redlock"),
                   r.redlock > 0 ? "use \"library\": \"redsync\" for Redlock, or remove lock.redlock"
                                 : "remove lock.cluster, or \"library\"");
  }
  return go_ticker_clock(c, path, "bsm/redislock's watchdog (the caller's) refreshes");
}

/// `failover`'s rule in a scenario (docs/FORMAT.md "Faults").
std::string failover_problem(const RedisSpec& r) {
  if (r.cluster) {
    return r.cluster->replicas == 0 ? "failover needs a replica to promote: set lock.cluster.replicas to 1 or more"
                                    : "";
  }
  if (r.redlock > 0 && r.replicas > 0) {
    // Redlock pools: each pool is its own Sentinel deployment, and a
    // fault with "target": "redis" names none of them.
    const std::string last = std::to_string(r.redlock - 1);
    return "failover does not apply to Redlock pools: \"redis\" names no single pool (redis-p0 … redis-p" + last +
           "), and each pool fails over only when its own sentinels see its primary down; crash the pool's "
           "primary instead (\"kind\": \"crash\", \"target\": \"redis-<p>\", e.g. \"redis-0\" for pool redis-p0)";
  }
  if (r.redlock > 0) return "failover does not apply in Redlock mode: the primaries have no replicas";
  if (r.replicas == 0) return "failover needs a replica to promote: set lock.replicas to 1 or more";
  return "";
}

/// `counter_reset`'s rule in a scenario.
std::string counter_reset_problem(const RedisSpec& r) {
  if (r.token == RedisToken::kIncr) return "";
  return "counter_reset of \"redis\" needs the token counter: lock.token must be \"incr\"" +
         std::string(r.redlock > 0 ? " (Redlock hands out no token)" : "");
}

/// The faults only the Redis service understands (its service_faults), one
/// row per kind: its rule in a scenario, what it needs under another
/// service (nullptr: the descriptor's default words), and how the service
/// carries it out (RedisService::apply_fault).
struct RedisFault {
  FaultKind kind;
  std::string (*problem)(const RedisSpec& r);
  const char* needs;
  bool (*apply)(RedisService& svc, const FaultSpec& f, std::string& why);
};

const std::array<RedisFault, 2> kRedisFaults = {{
    {FaultKind::kFailover, failover_problem, "failover needs the Redis service (Sentinel promotes a replica)",
     [](RedisService& svc, const FaultSpec&, std::string& why) { return svc.failover_now(why); }},
    {FaultKind::kCounterReset, counter_reset_problem, nullptr,
     [](RedisService& svc, const FaultSpec& f, std::string& why) { return svc.reset_counter(f.value, why); }},
}};

const RedisFault* redis_fault(FaultKind k) {
  for (const RedisFault& f : kRedisFaults) {
    if (f.kind == k) return &f;
  }
  return nullptr;
}

class RedisDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kRedis; }
  std::string name() const override { return "redis"; }
  std::string display_name() const override { return "Redis"; }

  std::vector<std::string> lock_keys() const override { return redis::lock_keys(); }
  std::vector<std::pair<std::string, std::vector<std::string>>> key_sections() const override {
    return {{"redis", redis::lock_keys()}, {"cluster", redis::cluster_keys()}};
  }
  void read(KeyReader& in, LockSpec& l, ScenarioSource&) const override { read_lock(in, l); }
  /// More than one lock: a primary (with or without replicas and
  /// Sentinel), not a cluster (one key and its slot) nor Redlock.
  bool takes_more_locks(const LockSpec& l, std::string& why, std::string& fix) const override {
    if (l.redis().cluster) {
      why = "Redis Cluster (lock.cluster) is modelled with one lock key and its slot";
      fix = "remove lock.keys (and clients[].lock), or lock.cluster for one primary";
      return false;
    }
    if (l.redis().redlock > 0) {
      why = "Redlock (lock.redlock) is modelled with one lock key over its primaries";
      fix = "remove lock.keys (and clients[].lock), or lock.redlock for one primary";
      return false;
    }
    return true;
  }
  std::optional<ScenarioProblem> validate_locks(const Scenario& s, const std::vector<std::string>& all) const override {
    return validate_redis_locks(s.lock, all);
  }
  void write(const LockSpec& l, KeyWriter& out) const override { write_lock(l, out); }
  std::string foreign_key(const std::string&, const ServiceDescriptor& in) const override {
    return " is a Redis setting; it does not apply to \"service\": \"" + in.name() + "\"";
  }

  std::vector<std::string> group_names() const override { return {"redis", "sentinels"}; }
  /// "redis": the primary and its replicas (or the Redlock primaries);
  /// "sentinels": the Sentinels (none in Redlock mode).
  std::vector<NodeGroup> groups(const Scenario& s) const override {
    const RedisSpec& r = s.lock.redis();
    if (r.cluster) {
      // Redis Cluster: redis-s<s>-0 (the shard's initial primary), then its
      // replicas; "redis" holds them all, "redis-s<s>" one shard (an alias).
      NodeGroup servers{"redis", {}};
      std::vector<NodeGroup> shards;
      for (int sh = 0; sh < r.cluster->shards; ++sh) {
        NodeGroup g{"redis-s" + std::to_string(sh), {}, true};
        for (int i = 0; i <= r.cluster->replicas; ++i) {
          g.nodes.push_back(fmt::format("redis-s{}-{}", sh, i));
          servers.nodes.push_back(g.nodes.back());
        }
        shards.push_back(std::move(g));
      }
      std::vector<NodeGroup> out{std::move(servers), NodeGroup{"sentinels", {}}};
      for (NodeGroup& g : shards) out.push_back(std::move(g));
      return out;
    }
    if (r.redlock > 0 && r.replicas > 0) {
      // Redlock pools: pool p is redis-<p> (its initial primary) and its
      // replicas redis-<p>-r1 …, with its sentinels sentinel-<p>-0 …;
      // "redis-p<p>" holds one pool's servers (an alias).
      NodeGroup servers{"redis", {}};
      NodeGroup sentinels{"sentinels", {}};
      std::vector<NodeGroup> pools;
      for (int p = 0; p < r.redlock; ++p) {
        NodeGroup g{"redis-p" + std::to_string(p), {}, true};
        g.nodes.push_back("redis-" + std::to_string(p));
        for (int k = 1; k <= r.replicas; ++k) g.nodes.push_back(fmt::format("redis-{}-r{}", p, k));
        for (const std::string& n : g.nodes) servers.nodes.push_back(n);
        for (int k = 0; k < r.sentinels; ++k) sentinels.nodes.push_back(fmt::format("sentinel-{}-{}", p, k));
        pools.push_back(std::move(g));
      }
      std::vector<NodeGroup> out{std::move(servers), std::move(sentinels)};
      for (NodeGroup& g : pools) out.push_back(std::move(g));
      return out;
    }
    const int primaries = r.redlock > 0 ? r.redlock : 1;
    const int nodes = primaries + (r.redlock > 0 ? 0 : r.replicas);
    NodeGroup servers{"redis", {}};
    for (int i = 0; i < nodes; ++i) servers.nodes.push_back("redis-" + std::to_string(i));
    NodeGroup sentinels{"sentinels", {}};
    for (int i = 0; i < r.sentinels; ++i) sentinels.nodes.push_back("sentinel-" + std::to_string(i));
    return {std::move(servers), std::move(sentinels)};
  }
  std::vector<std::string> role_names() const override { return {"redis-primary"}; }

  bool hands_out_tokens(const Scenario& s) const override { return s.lock.redis().token != RedisToken::kNone; }
  std::string why_no_token(const Scenario& s) const override {
    if (s.lock.redis().redlock > 0) return "Redlock hands out no fencing token (lock.token is \"none\")";
    return ServiceDescriptor::why_no_token(s);
  }

  std::vector<FaultKind> service_faults() const override {
    std::vector<FaultKind> out;
    for (const RedisFault& f : kRedisFaults) out.push_back(f.kind);
    return out;
  }
  std::string fault_problem(const Scenario& s, const FaultSpec& f) const override {
    const RedisFault* rf = redis_fault(f.kind);
    return rf ? rf->problem(s.lock.redis()) : "";
  }
  std::string fault_needs(const FaultSpec& f) const override {
    const RedisFault* rf = redis_fault(f.kind);
    return rf && rf->needs ? rf->needs : ServiceDescriptor::fault_needs(f);
  }

  void report_settings(const Scenario& s, KeyWriter& out) const override {
    const RedisSpec& r = s.lock.redis();
    out.integer("replicas", r.replicas);
    out.duration("replication_delay", r.replication_delay);
    out.integer("sentinels", r.sentinels);
    out.duration("down_after", r.down_after);
    out.text("expiry_clock", word(r.expiry_clock));
    out.text("token", word(r.token));
    out.integer("redlock", r.redlock);
    // Written only when set, so reports of files without them stay as they were.
    if (r.counter_key) out.text("counter_key", *r.counter_key);
    if (r.persistence != RedisPersistence::kNone) out.text("persistence", word(r.persistence));
    if (r.min_replicas_to_write > 0) {
      out.integer("min_replicas_to_write", r.min_replicas_to_write);
      out.duration("min_replicas_max_lag", r.min_replicas_max_lag);
    }
    if (r.cluster) {
      out.object("cluster", [&](KeyWriter& c) {
        c.integer("shards", r.cluster->shards);
        c.integer("replicas", r.cluster->replicas);
        c.duration("node_timeout", r.cluster->node_timeout);
        // Written when not Redis's defaults (10, 60 s), so the reports of the
        // files that came before them stay byte for byte as they were.
        const RedisClusterSpec cd;
        if (r.cluster->replica_validity_factor != cd.replica_validity_factor)
          c.integer("replica_validity_factor", r.cluster->replica_validity_factor);
        if (r.cluster->repl_timeout != cd.repl_timeout) c.duration("repl_timeout", r.cluster->repl_timeout);
      });
    }
  }
  /// The token counter each lock's grants INCR (lock.keys with token incr).
  void report_client_settings(const Scenario& s, const ClientSpec& c, KeyWriter& out) const override {
    if (s.lock.redis().token == RedisToken::kIncr)
      out.text("counter_key", redis_counter_key_of(s.lock, lock_of(s.lock, c)));
  }
  std::string report_design(const Scenario& s) const override {
    const RedisSpec& rs = s.lock.redis();
    const char* token = rs.token == RedisToken::kIncr ? "INCR" : "none";
    std::string o;
    if (rs.cluster) {
      o = fmt::format(
          " (Redis Cluster: {} shards of a primary and {} replicas, node_timeout {}, expiry on the {} "
          "clock, token {})",
          rs.cluster->shards, rs.cluster->replicas, sim::format_duration(rs.cluster->node_timeout),
          word(rs.expiry_clock), token);
      const RedisClusterSpec cd;
      if (rs.cluster->replica_validity_factor != cd.replica_validity_factor ||
          rs.cluster->repl_timeout != cd.repl_timeout) {
        o.insert(o.size() - 1,
                 fmt::format(", replica validity factor {}, repl-timeout {}", rs.cluster->replica_validity_factor,
                             sim::format_duration(rs.cluster->repl_timeout)));
      }
    } else if (rs.redlock > 0) {
      o = fmt::format(" (Redlock over {} primaries)", rs.redlock);
    } else {
      o = fmt::format(" ({} replicas, {} sentinels, expiry on the {} clock, token {})", rs.replicas, rs.sentinels,
                      word(rs.expiry_clock), token);
    }
    if (rs.persistence != RedisPersistence::kNone) o += fmt::format(", persistence {}", word(rs.persistence));
    if (rs.min_replicas_to_write > 0) {
      o += fmt::format(", min-replicas-to-write {} (max lag {})", rs.min_replicas_to_write,
                       sim::format_duration(rs.min_replicas_max_lag));
    }
    return o + ServiceDescriptor::report_design(s);
  }
  std::string summary_design(const Scenario& s) const override {
    const RedisSpec& rs = s.lock.redis();
    return ServiceDescriptor::summary_design(s) +
           (rs.cluster
                ? fmt::format(" cluster {} shards replicas {} node_timeout {} token {}", rs.cluster->shards,
                              rs.cluster->replicas, sim::format_duration(rs.cluster->node_timeout), word(rs.token))
            : rs.redlock > 0 ? fmt::format(" redlock {}", rs.redlock)
                             : fmt::format(" replicas {} sentinels {} expiry {} token {}", rs.replicas, rs.sentinels,
                                           word(rs.expiry_clock), word(rs.token)));
  }

  std::optional<ScenarioProblem> validate(const Scenario& s, const ScenarioSource&) const override {
    return validate_redis(s);
  }
  /// clients[].library: the redis.io pattern (the default), Redisson's RLock or RFencedLock, redsync.
  std::vector<ClientLibrary> client_libraries() const override {
    return {ClientLibrary::kGeneric, ClientLibrary::kRedisson, ClientLibrary::kRedissonFenced, ClientLibrary::kRedsync,
            ClientLibrary::kBsmRedislock};
  }
  std::optional<ScenarioProblem> validate_client(const Scenario& s, const ClientSpec& c,
                                                 const std::string& path) const override {
    FENCESIM_CHECK(validate_redisson_client(s, c, path));
    FENCESIM_CHECK(validate_bsm_redislock_client(s, c, path));
    return validate_redsync_client(s, c, path);
  }
  /// Redisson's release lines whose lock behaviour differs (models/client/redisson_client.cpp).
  std::vector<std::string> library_versions(ClientLibrary lib) const override {
    if (!is_redisson(lib)) return {};
    return {"3.40", "3.45", "3.52"};
  }
  void notes(const Scenario& s, std::vector<std::string>& out) const override { redis_notes(s, out); }

  std::unique_ptr<LockService> build(ServiceContext& ctx) const override {
    return std::make_unique<RedisService>(ctx.sim, ctx.history, ctx.scenario, ctx.groups.at(0), ctx.groups.at(1),
                                          ctx.clients);
  }
};

}  // namespace

const ServiceDescriptor& descriptor() {
  static const RedisDescriptor kRedis;
  return kRedis;
}

std::optional<NodeId> RedisService::resolve_role(const std::string& role, std::string& why) const {
  if (role == "redis-primary") return current_primary();
  return LockService::resolve_role(role, why);
}

bool RedisService::apply_fault(const FaultSpec& f, std::string& why) {
  if (const RedisFault* rf = redis_fault(f.kind)) return rf->apply(*this, f, why);
  return LockService::apply_fault(f, why);
}

std::unique_ptr<client::LockClient> RedisService::make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                              std::size_t index) {
  if (pooled()) return client::make_redlock_pool_client(node, h, c, lock_, pools_, pool_sentinels_);
  if (cluster()) {
    return client::make_redis_cluster_client(node, h, c, lock_, server_ids_, spec_.cluster->shards, index);
  }
  if (c.library == ClientLibrary::kBsmRedislock) {
    return client::make_bsm_redislock_client(node, h, c, lock_for(lock_, c), server_ids_, sentinel_ids_);
  }
  if (c.library == ClientLibrary::kRedisson || c.library == ClientLibrary::kRedissonFenced) {
    return client::make_redisson_client(node, h, c, lock_for(lock_, c), server_ids_, sentinel_ids_,
                                        c.library == ClientLibrary::kRedissonFenced,
                                        c.library_version.empty() ? "3.52" : c.library_version);
  }
  return client::make_redis_client(node, h, c, lock_for(lock_, c), server_ids_, sentinel_ids_);
}

}  // namespace fencesim::redis
