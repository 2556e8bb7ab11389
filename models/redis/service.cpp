// models/redis/service.cpp — Redis as a lock service (models/lock_service.hpp):
// its descriptor (node groups, role, faults, properties) and RedisService's
// LockService methods.
#include <fmt/format.h>

#include "models/client/client.hpp"
#include "models/redis/redis.hpp"
#include "models/words.hpp"

namespace fencesim::redis {

namespace {

class RedisDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kRedis; }
  std::string name() const override { return "redis"; }
  std::string display_name() const override { return "Redis"; }

  std::vector<std::string> group_names() const override { return {"redis", "sentinels"}; }
  /// "redis": the primary and its replicas (or the Redlock primaries);
  /// "sentinels": the Sentinels (none in Redlock mode).
  std::vector<NodeGroup> groups(const Scenario& s) const override {
    const RedisSpec& r = s.lock.redis;
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

  bool hands_out_tokens(const Scenario& s) const override { return s.lock.redis.token != RedisToken::kNone; }
  std::string why_no_token(const Scenario& s) const override {
    if (s.lock.redis.redlock > 0) return "Redlock hands out no fencing token (lock.token is \"none\")";
    return ServiceDescriptor::why_no_token(s);
  }

  std::vector<FaultKind> service_faults() const override { return {FaultKind::kFailover, FaultKind::kCounterReset}; }
  std::string fault_problem(const Scenario& s, const FaultSpec& f) const override {
    const RedisSpec& r = s.lock.redis;
    if (f.kind == FaultKind::kFailover && r.cluster) {
      if (r.cluster->replicas == 0) {
        return "failover needs a replica to promote: set lock.cluster.replicas to 1 or more";
      }
      return "";
    }
    if (f.kind == FaultKind::kFailover) {
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
    }
    if (f.kind == FaultKind::kCounterReset && r.token != RedisToken::kIncr) {
      return "counter_reset of \"redis\" needs the token counter: lock.token must be \"incr\"" +
             std::string(r.redlock > 0 ? " (Redlock hands out no token)" : "");
    }
    return "";
  }
  std::string fault_needs(const FaultSpec& f) const override {
    if (f.kind == FaultKind::kFailover) return "failover needs the Redis service (Sentinel promotes a replica)";
    return ServiceDescriptor::fault_needs(f);
  }

  void report_settings(const Scenario& s, KeyWriter& out) const override {
    const RedisSpec& r = s.lock.redis;
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
    if (r.cluster) {
      out.object("cluster", [&](KeyWriter& c) {
        c.integer("shards", r.cluster->shards);
        c.integer("replicas", r.cluster->replicas);
        c.duration("node_timeout", r.cluster->node_timeout);
      });
    }
  }
  /// The token counter each lock's grants INCR (lock.keys with token incr).
  void report_client_settings(const Scenario& s, const ClientSpec& c, KeyWriter& out) const override {
    if (s.lock.redis.token == RedisToken::kIncr)
      out.text("counter_key", redis_counter_key_of(s.lock, lock_of(s.lock, c)));
  }
  std::string report_design(const Scenario& s) const override {
    const RedisSpec& rs = s.lock.redis;
    const char* token = rs.token == RedisToken::kIncr ? "INCR" : "none";
    std::string o;
    if (rs.cluster) {
      o = fmt::format(
          " (Redis Cluster: {} shards of a primary and {} replicas, node_timeout {}, expiry on the {} "
          "clock, token {})",
          rs.cluster->shards, rs.cluster->replicas, sim::format_duration(rs.cluster->node_timeout),
          word(rs.expiry_clock), token);
    } else if (rs.redlock > 0) {
      o = fmt::format(" (Redlock over {} primaries)", rs.redlock);
    } else {
      o = fmt::format(" ({} replicas, {} sentinels, expiry on the {} clock, token {})", rs.replicas, rs.sentinels,
                      word(rs.expiry_clock), token);
    }
    if (rs.persistence != RedisPersistence::kNone) o += fmt::format(", persistence {}", word(rs.persistence));
    return o + ServiceDescriptor::report_design(s);
  }
  std::string summary_design(const Scenario& s) const override {
    const RedisSpec& rs = s.lock.redis;
    return ServiceDescriptor::summary_design(s) +
           (rs.cluster
                ? fmt::format(" cluster {} shards replicas {} node_timeout {} token {}", rs.cluster->shards,
                              rs.cluster->replicas, sim::format_duration(rs.cluster->node_timeout), word(rs.token))
            : rs.redlock > 0 ? fmt::format(" redlock {}", rs.redlock)
                             : fmt::format(" replicas {} sentinels {} expiry {} token {}", rs.replicas, rs.sentinels,
                                           word(rs.expiry_clock), word(rs.token)));
  }

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
  switch (f.kind) {
    case FaultKind::kFailover: return failover_now(why);
    case FaultKind::kCounterReset: return reset_counter(f.value, why);
    default: return LockService::apply_fault(f, why);
  }
}

std::unique_ptr<client::LockClient> RedisService::make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                              std::size_t index) {
  if (pooled()) return client::make_redlock_pool_client(node, h, c, lock_, pools_, pool_sentinels_);
  if (cluster()) {
    return client::make_redis_cluster_client(node, h, c, lock_, server_ids_, spec_.cluster->shards, index);
  }
  return client::make_redis_client(node, h, c, lock_for(lock_, c), server_ids_, sentinel_ids_);
}

}  // namespace fencesim::redis
