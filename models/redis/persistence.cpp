// models/redis/persistence.cpp — what a Redis server keeps across a crash:
// the AOF (lock.persistence; Redis 7.0.15 aof.c), a power loss, and the
// restart (with what the AOF held, or empty; in which role). The rest of
// the server: server.cpp; what is modelled, with sources: redis.hpp.
#include "models/redis/commands/script.hpp"
#include "models/redis/redis.hpp"

#include <fmt/format.h>

#include "models/redis/cluster.hpp"

namespace fencesim::redis {

using namespace std::chrono_literals;

// aof.c (Redis 7.0.15): every write is appended to server.aof_buf and
// flushAppendOnlyFile writes the buffer to the file in beforeSleep, before
// the replies are sent ("we are required to write the AOF before replying to
// the client"). With appendfsync always it fsyncs there too; with everysec a
// background fsync runs once a second. So what a process crash loses is
// nothing acknowledged (the kernel still has the page cache); what a power
// loss loses under everysec is what was written since the last fsync.
// Deviation: 7.0 tests the second on the wall clock in whole seconds
// (server.unixtime > server.aof_last_fsync); the model fsyncs every second
// on the node's monotonic clock (later Redis versions use mstime).

void RedisServer::aof_append(const std::string& key) {
  const RedisPersistence p = svc_.spec().persistence;
  if (p == RedisPersistence::kNone) return;
  AofRecord rec{key, std::nullopt};
  if (auto it = data_.find(key); it != data_.end()) {
    Entry e = it->second;
    // The AOF holds absolute Unix times (SET PXAT / PEXPIREAT since 7.0).
    if (e.has_expiry && svc_.expiry_clock() == sim::ClockKind::kMonotonic) {
      e.expire_at = node_.wall() + (e.expire_at - node_.monotonic());
    }
    rec.entry = e;
  }
  if (p == RedisPersistence::kAofAlways) {
    if (rec.entry) {
      aof_durable_[key] = *rec.entry;
    } else {
      aof_durable_.erase(key);
    }
  } else {
    aof_unsynced_.push_back(std::move(rec));
  }
}

void RedisServer::aof_fsync() {
  for (AofRecord& r : aof_unsynced_) {
    if (r.entry) {
      aof_durable_[r.key] = std::move(*r.entry);
    } else {
      aof_durable_.erase(r.key);
    }
  }
  aof_unsynced_.clear();
}

void RedisServer::aof_rewrite() {
  if (svc_.spec().persistence == RedisPersistence::kNone) return;
  // replication.c restartAOFAfterSYNC: after loading the primary's RDB the
  // replica rewrites its AOF from the new data set; the rewrite fsyncs the
  // new file before it replaces the old one (modelled as done at once).
  aof_unsynced_.clear();
  aof_durable_.clear();
  for (const auto& [k, e] : data_) aof_append(k);
  aof_fsync();
}

bool RedisServer::persisted_holds(const std::string& key, const std::string& value) const {
  if (node_.up()) return false;
  auto it = aof_durable_.find(key);
  return it != aof_durable_.end() && it->second.value == value &&
         !(it->second.has_expiry && node_.wall() >= it->second.expire_at);
}

void RedisServer::start_persistence() {
  if (svc_.spec().persistence != RedisPersistence::kAofEverysec) return;
  node_.every(1s, [this] { aof_fsync(); });
}

void RedisServer::on_power_loss() {
  // The page cache is gone; under aof_always it holds nothing unsynced.
  aof_unsynced_.clear();
}

void RedisServer::on_crash() {
  ++role_epoch_;
  scripts_.reset();  // the script cache lives in memory only
  connections_.clear();
  key_versions_.clear();
  acked_.clear();
  ack_seconds_.clear();
  good_replicas_ = -1;
  subscribers_.clear();
  last_write_.clear();
  waits_.clear();  // a WAIT's client gets no answer from a crashed server
  asking_ = false;
  // A process crash: what was written to the AOF file reaches the disk
  // from the page cache (on_power_loss has emptied it for a machine crash).
  aof_fsync();
  // The lease observer re-evaluates when a persisted key's deadline passes
  // while the node is down (persisted_holds).
  for (const auto& [k, e] : aof_durable_) {
    if (e.has_expiry) svc_.watch_wall_expiry(node_.id(), e.expire_at);
  }
  svc_.reevaluate();
}

void RedisServer::on_restart() {
  // No persistence: the node comes back empty. With the AOF: with what the
  // AOF held durably, each expiry at its stored absolute wall-clock time
  // (a key already past it is expired at once, lazily or by the cycle).
  data_.clear();
  const bool persistent = svc_.spec().persistence != RedisPersistence::kNone;
  if (persistent) {
    for (const auto& [k, stored] : aof_durable_) {
      Entry e = stored;
      if (e.has_expiry) {
        if (svc_.expiry_clock() == sim::ClockKind::kMonotonic)
          e.expire_at = node_.monotonic() + (e.expire_at - node_.wall());
        svc_.watch_expiry(node_.id(), e.expire_at);
      }
      data_[k] = e;
    }
  }
  start_persistence();
  start_replication_cron();
  replid_ = svc_.new_replid();  // a fresh run: a new replication ID
  offset_ = 0;
  sent_offset_ = 0;
  replicas_.clear();
  last_sync_request_ = Time{-1};
  ++role_epoch_;
  if (cluster_) {
    // nodes.conf: the role the node's saved view gives it (the owner of its
    // shard's slots, or a replica of that owner).
    cluster_->on_restart();
    const NodeId owner = cluster_->owner(shard_);
    primary_ = owner == node_.id();
    following_ = primary_ ? sim::kNoNode : owner;
  } else if (!svc_.group_sentinels(pool_).empty() && (!svc_.redlock() || svc_.pooled())) {
    const NodeId cur = svc_.pooled() ? svc_.pool_primary(pool_) : svc_.current_primary();
    if (cur == node_.id()) {
      primary_ = true;  // still the primary: nobody was promoted meanwhile
      following_ = sim::kNoNode;
    } else {
      primary_ = false;
      following_ = cur;
    }
  } else {
    primary_ = configured_primary_;
    following_ = configured_following_;
  }
  const std::string role = primary_ ? "as primary" : "as a replica";
  svc_.history().note(
      svc_.sim().now(), node_.name(), "restart",
      persistent ? fmt::format("restarted from its AOF ({} keys) {}", data_.size(), role) : "restarted empty " + role);
  if (primary_) {
    // Replicas reconnect to a restarted primary and resync from it.
    for (NodeId r : svc_.pooled() ? svc_.monitored(pool_) : svc_.shard_servers(shard_)) {
      if (r != node_.id()) replica_online(r);
    }
    start();
  } else {
    synced_ = false;
    link_down(/*restarted=*/true);
    request_sync();
    retry_sync(role_epoch_);
  }
  if (cluster_) cluster_->start();
  svc_.reevaluate();
}

}  // namespace fencesim::redis
