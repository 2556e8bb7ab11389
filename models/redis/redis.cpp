// models/redis/redis.cpp — RedisService: the servers and sentinels of one
// run wired together (Sentinel groups, Redlock pools, Cluster shards), the
// current primary, the `failover` and `counter_reset` faults, and the lease
// observer that records when a lease ends at the service. The server is
// server.cpp, persistence.cpp and replication.cpp; Sentinel sentinel.cpp;
// Cluster cluster.cpp. What is modelled, with sources: redis.hpp.
#include "models/redis/redis.hpp"

#include <fmt/format.h>

#include "models/redis/cluster.hpp"

#include <algorithm>

namespace fencesim::redis {

RedisService::RedisService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> servers,
                           std::vector<NodeId> sentinels, std::vector<NodeId> clients)
    : sim_(s),
      history_(h),
      lock_(sc.lock),
      spec_(sc.lock.redis()),
      key_(sc.lock.key),
      server_ids_(std::move(servers)),
      sentinel_ids_(std::move(sentinels)),
      client_ids_(std::move(clients)),
      current_primary_(server_ids_.front()) {
  if (cluster()) {
    // redis-s0-0, redis-s0-1 …, redis-s1-0 …: shard-major, primary first.
    const int shards = spec_.cluster->shards;
    const std::size_t per = static_cast<std::size_t>(spec_.cluster->replicas) + 1;
    for (int sh = 0; sh < shards; ++sh) {
      const auto first = server_ids_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(sh) * per);
      shard_servers_.emplace_back(first, first + static_cast<std::ptrdiff_t>(per));
      shard_primary_.push_back(shard_servers_.back().front());
    }
    key_shard_ = shard_of_slot(key_hash_slot(key_), shards);
    counter_shard_ = shard_of_slot(key_hash_slot(counter_key()), shards);
    current_primary_ = shard_primary_[static_cast<std::size_t>(key_shard_)];
    for (std::size_t i = 0; i < server_ids_.size(); ++i) {
      const std::size_t sh = i / per;
      const bool primary = i % per == 0;
      servers_.push_back(std::make_unique<RedisServer>(*this, sim_.node(server_ids_[i]), static_cast<int>(i), primary,
                                                       primary ? sim::kNoNode : shard_servers_[sh].front()));
    }
    for (std::size_t i = 0; i < server_ids_.size(); ++i) servers_[i]->enable_cluster(static_cast<int>(i / per));
    return;
  }
  shard_servers_.push_back(server_ids_);
  shard_primary_.push_back(server_ids_.front());
  if (pooled()) {
    // Redlock pools: redis-<p>, redis-<p>-r1 …, pool-major; the sentinels
    // sentinel-<p>-0 …, pool-major too (RedisDescriptor::groups).
    const std::size_t per = static_cast<std::size_t>(spec_.replicas) + 1;
    const std::size_t sper = static_cast<std::size_t>(spec_.sentinels);
    for (int p = 0; p < spec_.redlock; ++p) {
      const std::size_t up = static_cast<std::size_t>(p);
      pools_.emplace_back(server_ids_.begin() + static_cast<std::ptrdiff_t>(up * per),
                          server_ids_.begin() + static_cast<std::ptrdiff_t>((up + 1) * per));
      pool_sentinels_.emplace_back(sentinel_ids_.begin() + static_cast<std::ptrdiff_t>(up * sper),
                                   sentinel_ids_.begin() + static_cast<std::ptrdiff_t>((up + 1) * sper));
      pool_primary_.push_back(pools_.back().front());
    }
    for (std::size_t i = 0; i < server_ids_.size(); ++i) {
      const bool primary = i % per == 0;
      servers_.push_back(std::make_unique<RedisServer>(*this, sim_.node(server_ids_[i]), static_cast<int>(i), primary,
                                                       primary ? sim::kNoNode : pools_[i / per].front()));
      servers_.back()->set_pool(static_cast<int>(i / per));
    }
    for (std::size_t i = 0; i < sentinel_ids_.size(); ++i) {
      sentinel_objs_.push_back(std::make_unique<Sentinel>(*this, sim_.node(sentinel_ids_[i]), static_cast<int>(i),
                                                          static_cast<int>(i / sper)));
    }
    return;
  }
  for (std::size_t i = 0; i < server_ids_.size(); ++i) {
    const bool primary = redlock() || i == 0;
    servers_.push_back(std::make_unique<RedisServer>(*this, sim_.node(server_ids_[i]), static_cast<int>(i), primary,
                                                     primary ? sim::kNoNode : server_ids_.front()));
  }
  for (std::size_t i = 0; i < sentinel_ids_.size(); ++i) {
    sentinel_objs_.push_back(std::make_unique<Sentinel>(*this, sim_.node(sentinel_ids_[i]), static_cast<int>(i)));
  }
}

RedisService::~RedisService() = default;

void RedisService::start() {
  for (auto& s : servers_) {
    if (s->is_primary() && (!redlock() || pooled())) {
      for (NodeId r : pooled() ? monitored(s->pool()) : shard_servers(s->shard())) {
        if (r != s->node().id()) s->connect_replica(r);
      }
    }
    s->start();
    s->start_persistence();
    s->start_replication_cron();
    if (s->cluster() != nullptr) s->cluster()->start();
  }
  for (auto& s : sentinel_objs_) s->start();
}

int RedisService::majority() const {
  if (pooled()) return spec_.redlock / 2 + 1;
  return static_cast<int>(server_ids_.size()) / 2 + 1;
}

RedisServer& RedisService::server(NodeId n) {
  for (auto& s : servers_) {
    if (s->node().id() == n) return *s;
  }
  throw sim::ModelBug("not a redis server");
}

bool RedisService::is_server(NodeId n) const {
  return std::find(server_ids_.begin(), server_ids_.end(), n) != server_ids_.end();
}

Sentinel* RedisService::sentinel(NodeId n) {
  for (std::size_t i = 0; i < sentinel_ids_.size(); ++i) {
    if (sentinel_ids_[i] == n) return sentinel_objs_[i].get();
  }
  return nullptr;
}

void RedisService::on_promoted(RedisServer& s, bool already_primary) {
  if (!cluster() && !group_sentinels(s.pool()).empty()) {
    // Under Sentinel a REPLICAOF NO ONE comes from a failover; one that
    // arrives after its failover was aborted (the replica was paused or cut
    // off past the failover timeout) makes a primary that no sentinel's
    // configuration names: clients are not sent to it, and the sentinels
    // convert it. It is not the current primary (issue #16).
    bool promoting = false;
    for (NodeId id : group_sentinels(s.pool())) {
      if (const Sentinel* st = sentinel(id); st != nullptr && st->promoting() == s.node().id()) promoting = true;
    }
    if (!promoting) {
      history_.note(sim_.now(), s.node().name(), "promoted",
                    "took a REPLICAOF NO ONE from a failover no sentinel is running any more (aborted): a primary, "
                    "but not the current one");
      return;
    }
  }
  make_current(s.node().id(), s.pool(), s.shard());
  history_.note(sim_.now(), s.node().name(), "promoted",
                already_primary ? "told REPLICAOF NO ONE while already a primary: the current primary again"
                                : "became the primary");
}

void RedisService::make_current(NodeId primary, int pool, int shard) {
  if (pooled()) {
    // Each pool has its own primary; the role redis-primary is pool 0's.
    pool_primary_[static_cast<std::size_t>(pool)] = primary;
    if (pool == 0) current_primary_ = primary;
    return;
  }
  shard_primary_[static_cast<std::size_t>(shard)] = primary;
  if (shard == key_shard_) current_primary_ = primary;
}

void RedisService::on_switch_master(NodeId primary, std::uint64_t epoch, int pool) {
  // +switch-master (sentinelFailoverSwitchToPromotedSlave): the group's
  // configuration now names `primary`; a later epoch of the same group wins.
  auto& last = switch_epoch_[pool];
  if (epoch < last) return;
  last = epoch;
  const RedisServer& s = server(primary);
  const bool changed = pooled() ? pool_primary(pool) != primary : shard_primary(s.shard()) != primary;
  make_current(primary, pool, s.shard());
  if (changed) {
    history_.note(sim_.now(), s.node().name(), "current-primary",
                  "the current primary from +switch-master (epoch " + std::to_string(epoch) + ")");
  }
  reevaluate();
}

void RedisService::on_grant(RedisServer& s, NodeId client, const std::string& key, const std::string& value,
                            std::optional<std::int64_t> token) {
  const std::string& name = sim_.node(client).name();
  if (!redlock()) {
    history_.grant(sim_.now(), name, value, token, s.node().name());
    live_.emplace(value, key);
    return;
  }
  // Redlock: the grant is the acceptance that completes the majority.
  if (redlock_granted_.count(value) != 0) return;
  // Counted over the primaries that accepted it. Pooled: a pool counts once
  // when ANY server of it that is a primary holds the value — the pool's
  // current primary, or an old primary the sentinels have switched away
  // from but not yet converted, which still accepts writes (issue #16). The
  // client believes from the same acceptances, so the grant is recorded;
  // when the pools' current primaries do not back it, the reevaluate() that
  // follows the SET ends the lease at once.
  int holding = 0;
  if (pooled()) {
    std::set<int> pools;
    for (auto& srv : servers_) {
      if (srv->is_primary() && srv->holds(key_, value)) pools.insert(srv->pool());
    }
    holding = static_cast<int>(pools.size());
  } else {
    for (auto& srv : servers_) {
      if (srv->holds(key_, value)) ++holding;
    }
  }
  if (holding >= majority()) {
    redlock_granted_.insert(value);
    history_.grant(sim_.now(), name, value, std::nullopt, s.node().name());
    live_.emplace(value, key_);
  }
}

void RedisService::watch_expiry(NodeId node, Time deadline) {
  sim_.observe_clock(node, spec_.expiry_clock, deadline, [this] { reevaluate(); });
}

void RedisService::watch_wall_expiry(NodeId node, Time deadline) {
  sim_.observe_clock(node, sim::ClockKind::kWall, deadline, [this] { reevaluate(); });
}

bool RedisService::authority_holds(const std::string& key, const std::string& value, LeaseEndRecord& why_not) const {
  if (redlock()) {
    // A primary blocks other clients while it holds the value or is down
    // (docs/FORMAT.md "Lease end at the service"): no one can gather a
    // majority past it. It stops blocking when it comes back without it.
    // Pooled: a pool blocks through its current primary; one that failed
    // over to a replica that missed the SET has forgotten the value.
    int blocking = 0;
    for (const auto& s : servers_) {
      if (pooled() && s->node().id() != pool_primary(s->pool())) continue;
      if (s->holds(key, value) || !s->node().up()) ++blocking;
    }
    if (blocking >= majority()) return true;
    why_not.reason = "fewer than a majority of primaries hold it or are down";
    why_not.cause = LeaseEndCause::kNoMajority;
    return false;
  }
  const RedisServer* primary = nullptr;
  for (const auto& s : servers_) {
    if (s->node().id() == current_primary_) primary = s.get();
  }
  if (primary->node().up()) {
    if (primary->holds(key, value)) return true;
    auto it = primary->data().find(key);
    if ((it != primary->data().end() && it->second.value == value) || primary->expired_value(key) == value) {
      why_not.reason =
          fmt::format("expired on {} {} clock", primary->node().name(), sim::clock_name(spec_.expiry_clock));
      why_not.cause = LeaseEndCause::kExpired;
    } else {
      why_not.reason = fmt::format("{}, the current primary, does not hold it", primary->node().name());
      why_not.cause = LeaseEndCause::kNotOnPrimary;
      why_not.who = primary->node().name();
    }
    return false;
  }
  // The primary is down and nobody has been promoted: held while a live
  // replica holds it, or while what the primary will restart with (its
  // AOF) holds it (docs/FORMAT.md "Lease end at the service").
  for (const auto& s : servers_) {
    if (s.get() != primary && s->shard() == primary->shard() && s->node().up() && !s->is_primary() &&
        s->holds(key, value)) {
      return true;
    }
  }
  if (primary->persisted_holds(key, value)) return true;
  why_not.reason = fmt::format("{} is down and no live replica holds it", primary->node().name());
  if (spec_.persistence != RedisPersistence::kNone) why_not.reason += ", nor its AOF";
  why_not.cause = LeaseEndCause::kServiceDown;
  return false;
}

void RedisService::reevaluate() {
  if (evaluating_) return;
  evaluating_ = true;
  for (auto it = live_.begin(); it != live_.end();) {
    LeaseEndRecord why;
    if (!authority_holds(it->second, it->first, why)) {
      history_.lease_end(sim_.now(), it->first, std::move(why.reason), why.cause, std::move(why.who));
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  evaluating_ = false;
}

void RedisService::announce(NodeId from, NodeId primary, std::uint64_t epoch, int pool) {
  auto sw = sim::make_payload<SwitchPrimary>();
  sw->primary = primary;
  sw->epoch = epoch;
  for (NodeId s : group_sentinels(pool)) {
    if (s != from) sim_.send(from, s, sw);
  }
  for (NodeId c : client_ids_) sim_.send(from, c, sw);
}

bool RedisService::failover_now(std::string& why) {
  if (pooled()) {
    why =
        "Redlock pools: \"redis\" names no single pool; a pool fails over when its own sentinels see its primary down";
    return false;
  }
  if (redlock()) {
    why = "Redlock has no replicas";
    return false;
  }
  RedisServer* old = &server(current_primary_);
  RedisServer* best = nullptr;
  for (auto& s : servers_) {
    if (s.get() == old || !s->node().up() || s->shard() != old->shard()) continue;
    // Under lock.cluster a replica of the shard may already have won an
    // election (the service's primary is then stale): only a replica can
    // take over (CLUSTER FAILOVER is refused on a primary).
    if (cluster() && s->is_primary()) continue;
    if (best == nullptr || s->offset() > best->offset()) best = s.get();
  }
  if (best == nullptr) {
    why = "no live replica to promote";
    return false;
  }
  if (cluster()) {
    // CLUSTER FAILOVER TAKEOVER on the best replica of the lock key's shard;
    // the others learn the new owner from the cluster bus.
    best->cluster()->takeover();
    return true;
  }
  std::uint64_t epoch = next_epoch();
  for (auto& s : sentinel_objs_) epoch = std::max(epoch, s->epoch() + 1);
  observe_epoch(epoch);
  if (!sentinel_objs_.empty()) {
    // SENTINEL FAILOVER on the first sentinel that is up: the real, stepwise
    // failover (Sentinel::run_failover); the old primary stays a writable
    // primary until a sentinel converts it.
    for (auto& s : sentinel_objs_) {
      if (s->node().up()) return s->force_failover(best->node().id(), epoch, why);
    }
    why = "no sentinel is up to run SENTINEL FAILOVER";
    return false;
  }
  // No Sentinel: the operator's REPLICAOF NO ONE and REPLICAOF, in one step.
  best->promote();
  for (auto& s : servers_) {
    if (s.get() != best && s->node().up()) s->follow(best->node().id());
  }
  announce(best->node().id(), best->node().id(), epoch);
  return true;
}

bool RedisService::reset_counter(std::int64_t value, std::string& why) {
  RedisServer& p = server(shard_primary(counter_shard_));
  if (!p.node().up()) {
    why = "the primary is down";
    return false;
  }
  p.reset_counter(counter_key(), value);
  if (multiple_locks(lock_)) {
    // More than one lock: say whose counter it was (docs/FORMAT.md "More than one lock").
    std::string others;
    for (const std::string& k : lock_.keys) others += (others.empty() ? "" : ", ") + k;
    history_.note(sim_.now(), p.node().name(), "counter_reset",
                  fmt::format("reset {} to {}: the token counter of lock {} (lock.key); the counters of {} are "
                              "untouched",
                              counter_key(), value, lock_.key, others));
  }
  return true;
}

}  // namespace fencesim::redis
