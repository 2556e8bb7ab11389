// models/redis/keys.cpp — Redis's keys of the `lock` section (keys.hpp).
#include "models/redis/keys.hpp"

#include "models/validate.hpp"

namespace fencesim::redis {

const std::vector<std::string>& lock_keys() {
  static const std::vector<std::string> kKeys = {"replicas",
                                                 "replication_delay",
                                                 "sentinels",
                                                 "down_after",
                                                 "expiry_clock",
                                                 "token",
                                                 "redlock",
                                                 "counter_key",
                                                 "persistence",
                                                 "min_replicas_to_write",
                                                 "min_replicas_max_lag",
                                                 "cluster"};
  return kKeys;
}

const std::vector<std::string>& cluster_keys() {
  static const std::vector<std::string> kKeys = {"shards", "replicas", "node_timeout", "replica_validity_factor",
                                                 "repl_timeout"};
  return kKeys;
}

namespace {

/// `lock.cluster`: Redis Cluster mode. Sentinel, Redlock and the single
/// primary's replicas do not apply beside it; each of those keys may still
/// be given as the integer 0, its "none", which is what a cluster implies.
void read_cluster(KeyReader& in, RedisSpec& r) {
  // The value shown in the message: `"sentinels": 3 does not apply ...`.
  const auto beside = [&](const char* key) -> std::optional<std::string> {
    const KeyReader::Shape shape = in.shape(key);
    if (shape == KeyReader::Shape::kAbsent || (shape == KeyReader::Shape::kInteger && in.spelling(key) == "0")) {
      return std::nullopt;
    }
    return quote_text(key) + (shape == KeyReader::Shape::kInteger ? ": " + in.spelling(key) : "");
  };
  if (const auto shown = beside("sentinels")) {
    in.fail("sentinels",
            *shown +
                " does not apply with lock.cluster: Redis Cluster fails over by itself (the primaries "
                "elect a replica), Sentinel does not monitor a cluster",
            "remove lock.sentinels");
  }
  if (const auto shown = beside("redlock")) {
    in.fail("redlock",
            *shown +
                " does not apply with lock.cluster: Redlock runs over independent primaries, a cluster "
                "shards one key space over primaries with replicas; choose one",
            "remove lock.redlock or lock.cluster");
  }
  if (const auto shown = beside("replicas")) {
    in.fail("replicas", *shown + " does not apply with lock.cluster: a cluster's replicas are per shard",
            "use lock.cluster.replicas");
  }
  RedisClusterSpec c;
  in.object("cluster", "the Redis Cluster settings, e.g. {\"shards\": 3}", cluster_keys(), [&](KeyReader& cl) {
    c.shards =
        static_cast<int>(*cl.integer(cl.require("shards", "the number of primaries, e.g. 3"), Ranges::kClusterShards));
    if (const auto x = cl.integer("replicas", Ranges::kClusterReplicas)) c.replicas = static_cast<int>(*x);
    if (const auto x = cl.duration("node_timeout")) c.node_timeout = *x;
    if (const auto x = cl.integer("replica_validity_factor", Ranges::kClusterValidityFactor)) {
      c.replica_validity_factor = static_cast<int>(*x);
    }
    if (const auto x = cl.duration("repl_timeout")) c.repl_timeout = *x;
  });
  r.cluster = c;
  r.replicas = 0;
  r.sentinels = 0;
}

}  // namespace

void read_lock(KeyReader& in, LockSpec& l) {
  RedisSpec& r = l.redis();
  if (in.has("cluster")) {
    read_cluster(in, r);
  } else if (const auto x = in.integer("redlock", Ranges::kRedlock)) {
    r.redlock = static_cast<int>(*x);
  }
  if (r.redlock > 0) {
    // Redlock's defaults: independent primaries, no replicas, no Sentinel,
    // no token (validate refuses a token; replicas and sentinels, per pool,
    // come together or not at all).
    r.replicas = 0;
    r.sentinels = 0;
    r.token = RedisToken::kNone;
  }
  const IntRange replicas = r.redlock > 0 ? IntRange{0, Limits::kMaxServiceNodes} : Ranges::kRedisReplicas;
  if (const auto x = in.integer("replicas", replicas)) r.replicas = static_cast<int>(*x);
  if (const auto x = in.integer("sentinels", Ranges::kSentinels)) r.sentinels = static_cast<int>(*x);
  if (const auto x = in.word<RedisToken>("token")) r.token = *x;
  if (const auto x = in.duration("replication_delay")) r.replication_delay = *x;
  if (const auto x = in.duration("down_after")) r.down_after = *x;
  if (const auto x = in.word<sim::ClockKind>("expiry_clock")) r.expiry_clock = *x;
  if (auto x = in.text("counter_key", 1024)) r.counter_key = std::move(*x);
  if (const auto x = in.word<RedisPersistence>("persistence")) r.persistence = *x;
  if (const auto x = in.integer("min_replicas_to_write", Ranges::kRedisReplicas)) {
    r.min_replicas_to_write = static_cast<int>(*x);
  }
  if (const auto x = in.duration("min_replicas_max_lag")) r.min_replicas_max_lag = *x;
}

void write_lock(const LockSpec& l, KeyWriter& out) {
  const RedisSpec& r = l.redis();
  const RedisSpec rd;
  if (r.cluster) {
    // The loader sets replicas 0 and sentinels 0 itself.
    const RedisClusterSpec cd;
    out.object("cluster", [&](KeyWriter& c) {
      c.integer("shards", r.cluster->shards);
      if (r.cluster->replicas != cd.replicas) c.integer("replicas", r.cluster->replicas);
      if (r.cluster->node_timeout != cd.node_timeout) c.duration("node_timeout", r.cluster->node_timeout);
      if (r.cluster->replica_validity_factor != cd.replica_validity_factor)
        c.integer("replica_validity_factor", r.cluster->replica_validity_factor);
      if (r.cluster->repl_timeout != cd.repl_timeout) c.duration("repl_timeout", r.cluster->repl_timeout);
    });
    if (r.token != rd.token) out.text("token", word(r.token));
  } else if (r.redlock > 0) {
    // The loader sets replicas 0, sentinels 0 and token none itself;
    // pools with replicas and Sentinel write both.
    out.integer("redlock", r.redlock);
    if (r.replicas > 0 || r.sentinels > 0) {
      out.integer("replicas", r.replicas);
      out.integer("sentinels", r.sentinels);
    }
  } else {
    out.integer("replicas", r.replicas);
    out.integer("sentinels", r.sentinels);
    if (r.token != rd.token) out.text("token", word(r.token));
  }
  if (r.replication_delay != rd.replication_delay) out.duration("replication_delay", r.replication_delay);
  if (r.down_after != rd.down_after) out.duration("down_after", r.down_after);
  if (r.expiry_clock != rd.expiry_clock) out.text("expiry_clock", word(r.expiry_clock));
  if (r.counter_key) out.text("counter_key", *r.counter_key);
  if (r.persistence != rd.persistence) out.text("persistence", to_string(r.persistence));
  if (r.min_replicas_to_write != rd.min_replicas_to_write)
    out.integer("min_replicas_to_write", r.min_replicas_to_write);
  if (r.min_replicas_max_lag != rd.min_replicas_max_lag) out.duration("min_replicas_max_lag", r.min_replicas_max_lag);
}

}  // namespace fencesim::redis
