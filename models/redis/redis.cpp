#include "models/redis/redis.hpp"

#include <fmt/format.h>

#include "models/redis/cluster.hpp"

#include <algorithm>
#include <charconv>

namespace fencesim::redis {

using namespace std::chrono_literals;

std::string Command::describe() const {
  switch (op) {
    case Op::kAcquire:
      return fmt::format("SET {} {} NX PX {}{}", key, value, ttl.count() / 1'000'000, with_token ? " +INCR" : "");
    case Op::kRenew: return fmt::format("RENEW {} {} {}", key, value, ttl.count() / 1'000'000);
    case Op::kRelease: return fmt::format("RELEASE {} {}", key, value);
    case Op::kGet: return "GET " + key;
    case Op::kDel: return "DEL " + key;
    case Op::kIncr: return "INCR " + key;
    case Op::kSet: return "SET " + key + " " + value;
  }
  return "?";
}

std::string Reply::describe() const {
  if (!error.empty()) return "-" + error;
  if (nil) return "(nil)";
  if (integer) return ":" + std::to_string(*integer);
  return "+" + text;
}

namespace {
constexpr Duration kActiveExpiryPeriod = 100ms;   // server.hz = 10
constexpr Duration kReplHeartbeatPeriod = 1s;     // repl-ping-replica-period is 10 s; 1 s keeps gaps short
constexpr Duration kSentinelPingPeriod = 1s;      // sentinel.c SENTINEL_PING_PERIOD
constexpr Duration kSentinelTick = 100ms;         // sentinelTimer runs at server.hz
constexpr Duration kSentinelHelloPeriod = 2s;     // sentinel.c SENTINEL_PUBLISH_PERIOD
constexpr Duration kSentinelInfoPeriod = 10s;     // sentinel.c SENTINEL_INFO_PERIOD
constexpr Duration kSentinelFastInfoPeriod = 1s;  // INFO period of a failing-over primary's replicas
constexpr Duration kSentinelRoleWait = 4 * kSentinelHelloPeriod;  // SENTINEL_PUBLISH_PERIOD*4

std::shared_ptr<Reply> reply_int(std::int64_t v) {
  auto r = sim::make_payload<Reply>();
  r->integer = v;
  return r;
}
/// Redis stores every value as a string; INCR parses it as a signed 64-bit
/// integer (util.c string2ll: optional '-', digits, no spaces, no '+').
std::optional<std::int64_t> as_integer(const std::string& s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  if (s.size() > 1 && (s[0] == '0' || (s[0] == '-' && s[1] == '0'))) return std::nullopt;
  return v;
}

std::shared_ptr<Reply> reply_nil() {
  auto r = sim::make_payload<Reply>();
  r->nil = true;
  return r;
}
}  // namespace

Duration failover_timeout_of(const RedisSpec& r) { return std::max<Duration>(2 * r.down_after, 3s); }

// ============================================================ RedisServer ==

RedisServer::RedisServer(RedisService& svc, sim::Node& node, int index, bool primary, NodeId primary_of)
    : svc_(svc),
      node_(node),
      index_(index),
      configured_primary_(primary),
      configured_following_(primary_of),
      primary_(primary),
      following_(primary_of) {
  node_.set_behaviour(this);
}

RedisServer::~RedisServer() = default;

void RedisServer::enable_cluster(int shard) {
  shard_ = shard;
  cluster_ = std::make_unique<ClusterNode>(svc_, *this, shard);
}

void RedisServer::start() {
  ++role_epoch_;
  if (!primary_) return;
  // Active expiry and the replication heartbeat run as node timers: a pause
  // of the primary stalls them exactly as a stalled event loop would.
  expiry_tick(role_epoch_);
  heartbeat_tick(role_epoch_);
}

// Each tick schedules the next one itself (no self-referencing closure, which
// would never be freed); a role change bumps role_epoch_ and stops the chain.
void RedisServer::expiry_tick(std::uint64_t epoch) {
  node_.after(kActiveExpiryPeriod, [this, epoch] {
    if (!primary_ || role_epoch_ != epoch) return;
    active_expire_cycle();
    expiry_tick(epoch);
  });
}

void RedisServer::heartbeat_tick(std::uint64_t epoch) {
  node_.after(kReplHeartbeatPeriod, [this, epoch] {
    if (!primary_ || role_epoch_ != epoch) return;
    heartbeat();
    heartbeat_tick(epoch);
  });
}

bool RedisServer::expired(const Entry& e) const {
  return e.has_expiry && node_.clock(svc_.expiry_clock()) >= e.expire_at;
}

bool RedisServer::holds(const std::string& key, const std::string& value) const {
  if (!node_.up()) return false;
  auto it = data_.find(key);
  return it != data_.end() && it->second.value == value && !expired(it->second);
}

Entry RedisServer::make_entry_expiry(Entry e, Duration ttl) const {
  e.has_expiry = true;
  e.expire_at = node_.clock(svc_.expiry_clock()) + ttl;
  return e;
}

void RedisServer::apply(const Effect& eff) {
  switch (eff.kind) {
    case Effect::kSet: {
      Entry e;
      e.value = eff.value;
      if (eff.has_expiry) {
        e.has_expiry = true;
        // Wall mode: the absolute deadline travels as is (PXAT). Monotonic
        // mode: each node adds the TTL to its own monotonic clock.
        e.expire_at = svc_.expiry_clock() == sim::ClockKind::kWall ? eff.expire_at : node_.monotonic() + eff.ttl;
        svc_.watch_expiry(node_.id(), e.expire_at);
      }
      data_[eff.key] = e;
      break;
    }
    case Effect::kDel: data_.erase(eff.key); break;
    case Effect::kExpire: {
      auto it = data_.find(eff.key);
      if (it == data_.end()) break;
      it->second.has_expiry = true;
      it->second.expire_at = svc_.expiry_clock() == sim::ClockKind::kWall ? eff.expire_at : node_.monotonic() + eff.ttl;
      svc_.watch_expiry(node_.id(), it->second.expire_at);
      break;
    }
    case Effect::kIncr: {
      // INCR on a missing key starts from 0; on an existing key it keeps the
      // key's TTL (t_string.c incrDecrCommand overwrites the value only).
      // The primary checked that the value is an integer before propagating.
      auto it = data_.find(eff.key);
      if (it == data_.end()) {
        Entry e;
        e.value = "1";
        data_[eff.key] = e;
      } else if (auto v = as_integer(it->second.value)) {
        it->second.value = std::to_string(*v + 1);
      }
      break;
    }
    case Effect::kSetInt: {
      Entry e;
      e.value = std::to_string(eff.integer);
      data_[eff.key] = e;
      break;
    }
  }
  aof_append(eff.key);
}

// ------------------------------------------------------------ persistence --
//
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

void RedisServer::write(std::vector<Effect> effects) {
  for (const Effect& e : effects) apply(e);
  ++offset_;
  const std::uint64_t off = offset_;
  // Asynchronous replication: answer first, send `replication_delay` later.
  // A crash before then drops this timer, and the write with it.
  auto stream = sim::make_payload<ReplStream>();
  stream->replid = replid_;
  stream->offset = off;
  stream->effects = std::move(effects);
  const std::uint64_t epoch = role_epoch_;
  node_.after(svc_.spec().replication_delay, [this, stream, epoch] {
    if (!primary_ || role_epoch_ != epoch) return;
    sent_offset_ = std::max(sent_offset_, stream->offset);
    for (NodeId r : replicas_) node_.send(r, stream);
  });
}

void RedisServer::expire_if_needed(const std::string& key) {
  auto it = data_.find(key);
  if (it == data_.end() || !expired(it->second)) return;
  if (!primary_) return;  // replicas hide, never delete
  expired_[key] = it->second.value;
  write({Effect{Effect::kDel, key, "", 0, false, Time{0}, Duration{0}}});
}

void RedisServer::active_expire_cycle() {
  std::vector<Effect> dels;
  for (const auto& [k, e] : data_) {
    if (!expired(e)) continue;
    dels.push_back(Effect{Effect::kDel, k, "", 0, false, Time{0}, Duration{0}});
    expired_[k] = e.value;
  }
  if (dels.empty()) return;
  for (Effect& d : dels) write({d});
  svc_.reevaluate();
}

void RedisServer::heartbeat() {
  auto hb = sim::make_payload<ReplHeartbeat>();
  hb->replid = replid_;
  hb->offset = sent_offset_;
  for (NodeId r : replicas_) node_.send(r, hb);
}

void RedisServer::request_sync() {
  const Time now = node_.monotonic();
  if (last_sync_request_ >= Time{0} && now - last_sync_request_ < 1s) return;
  last_sync_request_ = now;
  node_.send(following_, sim::make_payload<SyncRequest>());
}

void RedisServer::retry_sync(std::uint64_t epoch) {
  // replication.c replicationCron: a replica that is not connected to its
  // primary tries to connect and PSYNC again every second. Without this, a
  // replica whose request was lost (a partition at the failover, or a
  // primary that was not yet one) would wait forever: a primary streams
  // only to the replicas that asked it.
  node_.after(1s, [this, epoch] {
    if (primary_ || role_epoch_ != epoch || synced_) return;
    request_sync();
    retry_sync(epoch);
  });
}

/// GET: the value, or nil for a missing or logically expired key.
void RedisServer::command_get(const sim::Message& m, const Command& c) {
  auto it = data_.find(c.key);
  if (it == data_.end() || expired(it->second)) {
    node_.reply(m, reply_nil());
  } else {
    auto r = sim::make_payload<Reply>();
    r->text = it->second.value;  // a bulk string, counters included
    node_.reply(m, r);
  }
}

/// SET key value NX PX ttl and, with `with_token`, INCR of the counter key,
/// as one write (protocol.hpp kAcquire).
void RedisServer::command_acquire(const sim::Message& m, const Command& c) {
  if (data_.count(c.key) != 0) {
    node_.reply(m, reply_nil());  // SET NX fails: no INCR either
    return;
  }
  std::vector<Effect> effects;
  Effect set{Effect::kSet, c.key, c.value, 0, true, Time{0}, c.ttl};
  set.expire_at = node_.clock(svc_.expiry_clock()) + c.ttl;
  effects.push_back(set);
  std::optional<std::int64_t> token;
  if (c.with_token) {
    expire_if_needed(c.counter_key);
    effects.push_back(Effect{Effect::kIncr, c.counter_key, "", 0, false, Time{0}, Duration{0}});
  }
  write(std::move(effects));
  if (c.with_token) {
    const auto it = data_.find(c.counter_key);
    token = it != data_.end() ? as_integer(it->second.value).value_or(0) : 0;
  }
  svc_.on_grant(*this, m.from, c.key, c.value, token);
  if (token) {
    node_.reply(m, reply_int(*token));
  } else {
    auto r = sim::make_payload<Reply>();
    r->text = "OK";
    node_.reply(m, r);
  }
  svc_.reevaluate();
}

/// The renewal script: PEXPIRE key ttl if key still holds value.
void RedisServer::command_renew(const sim::Message& m, const Command& c) {
  auto it = data_.find(c.key);
  if (it == data_.end() || it->second.value != c.value) {
    node_.reply(m, reply_int(0));
    return;
  }
  Effect ex{Effect::kExpire, c.key, "", 0, true, Time{0}, c.ttl};
  ex.expire_at = node_.clock(svc_.expiry_clock()) + c.ttl;
  write({ex});
  node_.reply(m, reply_int(1));
  svc_.reevaluate();
}

/// The release script: DEL key if it still holds value.
void RedisServer::command_release(const sim::Message& m, const Command& c) {
  auto it = data_.find(c.key);
  if (it == data_.end() || it->second.value != c.value) {
    node_.reply(m, reply_int(0));
    return;
  }
  write({Effect{Effect::kDel, c.key, "", 0, false, Time{0}, Duration{0}}});
  node_.reply(m, reply_int(1));
  svc_.reevaluate();
}

void RedisServer::handle_command(const sim::Message& m, const Command& c) {
  // Cluster mode: CROSSSLOT, CLUSTERDOWN and MOVED come before the command.
  if (cluster_ && cluster_->redirect(m, c)) return;
  const bool is_write = c.op != Op::kGet;
  if (is_write && !primary_) {
    auto r = sim::make_payload<Reply>();
    r->error = "READONLY You can't write against a read only replica.";
    node_.reply(m, r);
    return;
  }
  if (primary_) expire_if_needed(c.key);
  switch (c.op) {
    case Op::kGet: command_get(m, c); return;
    case Op::kAcquire: command_acquire(m, c); return;
    case Op::kRenew: command_renew(m, c); return;
    case Op::kRelease: command_release(m, c); return;
    case Op::kDel: {
      const bool had = data_.count(c.key) != 0;
      if (had) write({Effect{Effect::kDel, c.key, "", 0, false, Time{0}, Duration{0}}});
      node_.reply(m, reply_int(had ? 1 : 0));
      svc_.reevaluate();
      return;
    }
    case Op::kIncr: {
      if (auto it = data_.find(c.key); it != data_.end() && !as_integer(it->second.value)) {
        auto r = sim::make_payload<Reply>();
        r->error = "ERR value is not an integer or out of range";
        node_.reply(m, r);
        return;
      }
      write({Effect{Effect::kIncr, c.key, "", 0, false, Time{0}, Duration{0}}});
      const auto it = data_.find(c.key);
      node_.reply(m, reply_int(it != data_.end() ? as_integer(it->second.value).value_or(0) : 0));
      return;
    }
    case Op::kSet: {
      Effect set{Effect::kSet, c.key, c.value, 0, c.ttl > Duration{0}, Time{0}, c.ttl};
      set.expire_at = node_.clock(svc_.expiry_clock()) + c.ttl;
      write({set});
      auto r = sim::make_payload<Reply>();
      r->text = "OK";
      node_.reply(m, r);
      svc_.reevaluate();
      return;
    }
  }
}

void RedisServer::on_message(const sim::Message& m) {
  if (const auto* c = m.as<Command>()) {
    handle_command(m, *c);
  } else if (const auto* cm = m.as<ClusterMsg>()) {
    if (cluster_) cluster_->on_message(m, *cm);
  } else if (m.as<ClusterSlotsRequest>() != nullptr) {
    if (!cluster_) return;
    auto r = sim::make_payload<ClusterSlotsReply>();
    r->owners = cluster_->owners();
    node_.reply(m, r);
  } else if (const auto* s = m.as<ReplStream>()) {
    if (primary_ || m.from != following_) return;
    if (s->replid != replid_) {
      request_sync();  // another history: the offsets do not compare
    } else if (s->offset == offset_ + 1) {
      for (const Effect& e : s->effects) apply(e);
      offset_ = s->offset;
      svc_.reevaluate();
    } else if (s->offset > offset_ + 1) {
      request_sync();
    }
  } else if (const auto* hb = m.as<ReplHeartbeat>()) {
    // Behind, or following a different history: in Redis a primary that
    // restarted without persistence has a new replication ID, its replicas'
    // PSYNC fails on reconnection and they take a full resync — they are
    // wiped too (redis.io replication docs, "Safety of replication when
    // master has persistence turned off"). Comparing offsets alone would
    // keep the old data whenever the restarted primary's offset is not
    // ahead of the replica's.
    if (!primary_ && m.from == following_ && (hb->replid != replid_ || hb->offset > offset_)) request_sync();
  } else if (m.as<SyncRequest>() != nullptr) {
    if (!primary_) return;
    replicas_.insert(m.from);
    auto fs = sim::make_payload<FullSync>();
    fs->replid = replid_;
    fs->offset = offset_;
    fs->data = data_;
    for (const auto& [k, e] : data_) {
      if (e.has_expiry) fs->remaining_ttl[k] = e.expire_at - node_.clock(svc_.expiry_clock());
    }
    // The snapshot goes to this replica alone (a FULLRESYNC is per replica,
    // replication.c syncCommand): the heartbeat offset, which the others
    // compare with theirs, stays what the stream has sent, or they would
    // resync early and get writes before replication_delay.
    node_.send(m.from, fs);
  } else if (const auto* fs = m.as<FullSync>()) {
    if (primary_ || m.from != following_) return;
    // FULLRESYNC: the replica's data is replaced by the primary's snapshot;
    // whatever it had and the primary did not is gone.
    data_.clear();
    for (const auto& [k, e] : fs->data) {
      Entry copy = e;
      if (copy.has_expiry && svc_.expiry_clock() == sim::ClockKind::kMonotonic) {
        copy.expire_at = node_.monotonic() + fs->remaining_ttl.at(k);
      }
      if (copy.has_expiry) svc_.watch_expiry(node_.id(), copy.expire_at);
      data_[k] = copy;
    }
    aof_rewrite();
    replid_ = fs->replid;
    synced_ = true;
    offset_ = fs->offset;
    last_sync_request_ = Time{-1};
    svc_.reevaluate();
  } else if (const auto* r = m.as<ReplicaOf>()) {
    if (r->primary == sim::kNoNode) {
      promote();
    } else if (r->primary != node_.id()) {
      follow(r->primary);
    }
    auto ok = sim::make_payload<Reply>();
    ok->text = "OK";
    node_.reply(m, ok);
  } else if (m.as<Ping>() != nullptr) {
    auto p = sim::make_payload<Pong>();
    p->primary = primary_;
    p->offset = offset_;
    p->following = primary_ ? sim::kNoNode : following_;
    node_.reply(m, p);
  }
}

void RedisServer::promote() {
  if (primary_) {
    // REPLICAOF NO ONE on a primary: replication.c replicaofCommand (7.0)
    // acts only `if (server.masterhost)` and answers +OK, changing nothing
    // here; but the promotion it was sent for (a failback to an old primary that
    // was never converted, or a SENTINEL FAILOVER to the current primary)
    // still makes this node the one the sentinels will switch to: the
    // service's current primary follows (issue #16).
    svc_.on_promoted(*this, /*already_primary=*/true);
    svc_.reevaluate();
    return;
  }
  primary_ = true;
  following_ = sim::kNoNode;
  replicas_.clear();
  replid_ = svc_.new_replid();  // shiftReplicationId on REPLICAOF NO ONE
  sent_offset_ = offset_;
  svc_.on_promoted(*this);
  start();
  svc_.reevaluate();
}

void RedisServer::follow(NodeId primary) {
  if (!primary_ && following_ == primary) return;
  const bool was_primary = primary_;
  primary_ = false;
  following_ = primary;
  ++role_epoch_;
  last_sync_request_ = Time{-1};
  synced_ = false;
  if (was_primary) {
    svc_.history().note(svc_.sim().now(), node_.name(), "demoted",
                        "demoted to a replica of " + svc_.sim().node(primary).name());
  }
  request_sync();
  retry_sync(role_epoch_);
  svc_.reevaluate();
}

void RedisServer::reset_counter(const std::string& key, std::int64_t value) {
  write({Effect{Effect::kSetInt, key, "", value, false, Time{0}, Duration{0}}});
}

void RedisServer::on_crash() {
  ++role_epoch_;
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
      if (r != node_.id()) replicas_.insert(r);
    }
    start();
  } else {
    synced_ = false;
    request_sync();
    retry_sync(role_epoch_);
  }
  if (cluster_) cluster_->start();
  svc_.reevaluate();
}

// =============================================================== Sentinel ==

Sentinel::Sentinel(RedisService& svc, sim::Node& node, int index, int pool)
    : svc_(svc),
      node_(node),
      index_(index),
      pool_(pool),
      config_primary_(svc.monitored(pool).front()),
      rng_(svc.sim().rng("sentinel-" + std::to_string(index))) {
  node_.set_behaviour(this);
}

void Sentinel::start() {
  const Time now = node_.monotonic();
  last_info_.clear();  // new links: INFO at once
  for (NodeId s : svc_.monitored(pool_)) {
    last_ok_[s] = now;
    role_primary_[s] = s == config_primary_;
    role_reported_time_[s] = now;
    node_.spawn("monitor-" + svc_.sim().node(s).name(), [this, s](sim::Process& p) { monitor(p, s); });
  }
  node_.spawn("failover", [this](sim::Process& p) { failover_loop(p); });
  node_.spawn("hello", [this](sim::Process& p) { hello_loop(p); });
}

void Sentinel::hello_loop(sim::Process& p) {
  // sentinel.c sentinelSendHello: every 2 s each sentinel publishes its view
  // of the primary with its config epoch, and one that hears a newer epoch
  // switches to it (sentinelProcessHelloMessage, "+config-update-from").
  // Without it, a sentinel that was cut off or down during a failover would
  // keep the old primary for ever and send the clients that ask it there.
  // Real hellos travel through the monitored instances' __sentinel__:hello
  // channel; here they go to the other sentinels directly, like the
  // failover announcement. Before the first failover there is nothing new to
  // tell, and nothing is sent.
  for (;;) {
    p.sleep(kSentinelHelloPeriod);
    if (config_epoch_ == 0) continue;
    auto hello = sim::make_payload<SwitchPrimary>();
    hello->primary = config_primary_;
    hello->epoch = config_epoch_;
    for (NodeId s : svc_.group_sentinels(pool_)) {
      if (s != node_.id()) node_.send(s, hello);
    }
  }
}

void Sentinel::adopt(NodeId primary, std::uint64_t epoch) {
  if (epoch < config_epoch_) return;
  const bool changed = primary != config_primary_;
  config_primary_ = primary;
  config_epoch_ = epoch;
  current_epoch_ = std::max(current_epoch_, epoch);
  const Time now = node_.monotonic();
  last_ok_[primary] = now;
  if (!changed) return;
  // sentinelResetMasterAndChangeAddress: the new primary and every other
  // server (the old primary among them) become fresh instances, the old
  // ones as replicas, each with a new link that sends INFO at once.
  for (NodeId s : svc_.monitored(pool_)) {
    role_primary_[s] = s == primary;
    role_reported_time_[s] = now;
    last_info_.erase(s);
  }
}

void Sentinel::monitor(sim::Process& p, NodeId target) {
  for (;;) {
    const Time started = node_.monotonic();
    auto reply = p.call(target, sim::make_payload<Ping>(), kSentinelPingPeriod);
    if (reply) {
      if (const auto* pong = reply->as<Pong>()) {
        last_ok_[target] = node_.monotonic();
        last_pong_[target] = *pong;
        refresh_info(target, *pong);
      }
    }
    if (node_.monotonic() - last_ok_[target] > svc_.spec().down_after) last_sdown_[target] = node_.monotonic();
    p.sleep_until(sim::ClockKind::kMonotonic, started + kSentinelPingPeriod);
  }
}

void Sentinel::refresh_info(NodeId target, const Pong& pong) {
  // sentinelSendPeriodicCommands: INFO every 10 s, every 1 s for the
  // replicas of a primary that is objectively down or being failed over
  // (here: subjectively down, or this sentinel's failover in progress).
  const Time now = node_.monotonic();
  const bool fast = target != config_primary_ && (failover_in_progress_ || subjectively_down());
  const Duration period = fast ? kSentinelFastInfoPeriod : kSentinelInfoPeriod;
  if (auto it = last_info_.find(target); it != last_info_.end() && now - it->second < period) return;
  last_info_[target] = now;
  auto [role, inserted] = role_primary_.try_emplace(target, pong.primary);
  if (inserted || role->second != pong.primary) {
    role->second = pong.primary;
    role_reported_time_[target] = now;
  }
  // sentinelRefreshInstanceInfo, "a slave turned into a master": force our
  // view only once the instance has reported role master for longer than
  // SENTINEL_PUBLISH_PERIOD*4, has not been down for as long, and the
  // configured primary looks sane. Until then the old primary of a failover
  // is still a writable primary.
  if (!pong.primary || target == config_primary_ || config_epoch_ == 0 || failover_in_progress_ ||
      target == promoted_) {
    return;
  }
  const auto ok = last_ok_.find(config_primary_);
  const auto pp = last_pong_.find(config_primary_);
  const bool primary_sane = ok != last_ok_.end() && now - ok->second <= svc_.spec().down_after &&
                            pp != last_pong_.end() && pp->second.primary;
  const auto down = last_sdown_.find(target);
  const bool no_down = down == last_sdown_.end() || now - down->second > kSentinelRoleWait;
  if (!primary_sane || !no_down || now - role_reported_time_[target] <= kSentinelRoleWait) return;
  auto r = sim::make_payload<ReplicaOf>();
  r->primary = config_primary_;
  r->epoch = config_epoch_;
  node_.send(target, r);
  svc_.history().note(
      svc_.sim().now(), node_.name(), "convert-to-slave",
      fmt::format("tells {} (reporting role master for {} ms) to replicate {}", svc_.sim().node(target).name(),
                  (now - role_reported_time_[target]).count() / 1'000'000, svc_.sim().node(config_primary_).name()));
}

bool Sentinel::subjectively_down() const {
  auto it = last_ok_.find(config_primary_);
  if (it == last_ok_.end()) return false;
  return node_.monotonic() - it->second > svc_.spec().down_after;
}

void Sentinel::failover_loop(sim::Process& p) {
  const Duration failover_timeout = failover_timeout_of(svc_.spec());
  for (;;) {
    p.sleep(kSentinelTick);
    if (!subjectively_down()) continue;
    if (!try_failover(p)) {
      // Not elected, or the promotion failed: wait before the next attempt
      // (sentinel.c failover-timeout, shortened to keep runs short).
      p.sleep(failover_timeout);
    }
  }
}

namespace {
constexpr Duration kSentinelAskTimeout = 1s;
}  // namespace

int Sentinel::count_down_votes(sim::Process& p, NodeId primary) {
  std::vector<std::uint64_t> calls;
  for (NodeId s : svc_.group_sentinels(pool_)) {
    if (s == node_.id()) continue;
    auto q = sim::make_payload<IsDown>();
    q->primary = primary;
    calls.push_back(p.send_request(s, q));
  }
  int agree = 1;
  const Time deadline = node_.monotonic() + kSentinelAskTimeout;
  for (std::uint64_t c : calls) {
    auto r = p.await_reply(c, deadline);
    if (r) {
      if (const auto* d = r->as<IsDownReply>(); d != nullptr && d->down) ++agree;
    }
  }
  return agree;
}

int Sentinel::request_votes(sim::Process& p, NodeId primary, std::uint64_t epoch) {
  int votes = 1;
  std::vector<std::uint64_t> calls;
  for (NodeId s : svc_.group_sentinels(pool_)) {
    if (s == node_.id()) continue;
    auto q = sim::make_payload<IsDown>();
    q->primary = primary;
    q->epoch = epoch;
    q->candidate = node_.id();
    calls.push_back(p.send_request(s, q));
  }
  const Time deadline = node_.monotonic() + kSentinelAskTimeout;
  for (std::uint64_t c : calls) {
    auto r = p.await_reply(c, deadline);
    if (!r) continue;
    if (const auto* d = r->as<IsDownReply>(); d != nullptr && d->vote_epoch == epoch && d->voted_for == node_.id()) {
      ++votes;
    }
  }
  return votes;
}

NodeId Sentinel::best_replica(NodeId primary) {
  NodeId best = sim::kNoNode;
  std::uint64_t best_offset = 0;
  for (NodeId s : svc_.monitored(pool_)) {
    if (s == primary) continue;
    auto ok = last_ok_.find(s);
    if (ok == last_ok_.end() || node_.monotonic() - ok->second > svc_.spec().down_after) continue;
    const std::uint64_t off = last_pong_.count(s) != 0 ? last_pong_[s].offset : 0;
    if (best == sim::kNoNode || off > best_offset) {
      best = s;
      best_offset = off;
    }
  }
  return best;
}

bool Sentinel::try_failover(sim::Process& p) {
  const NodeId primary = config_primary_;
  const int majority = static_cast<int>(svc_.group_sentinels(pool_).size()) / 2 + 1;
  // 1. Objectively down: a majority of all sentinels (self included) agree.
  const int agree = count_down_votes(p, primary);
  if (agree < majority || config_primary_ != primary) return true;  // not odown: keep watching
  const Duration failover_timeout = failover_timeout_of(svc_.spec());
  if (failover_start_time_ && node_.monotonic() - *failover_start_time_ < 2 * failover_timeout) return true;
  svc_.history().note(svc_.sim().now(), node_.name(), "odown",
                      "sees " + svc_.sim().node(primary).name() + " objectively down");
  // 2. Random desynchronisation before the election (SENTINEL_MAX_DESYNC).
  p.sleep(Duration{rng_.uniform(0, 1'000'000'000)});
  if (config_primary_ != primary || !subjectively_down()) return true;
  // Voted for another leader meanwhile: its failover goes first.
  if (failover_start_time_ && node_.monotonic() - *failover_start_time_ < 2 * failover_timeout) return true;
  // 3. Leader election for a new epoch: vote for self, ask the others.
  failover_start_time_ = node_.monotonic();
  const std::uint64_t epoch = std::max(current_epoch_, svc_.next_epoch()) + 0;
  svc_.observe_epoch(epoch);
  current_epoch_ = epoch;
  voted_epoch_ = epoch;
  voted_for_ = node_.id();
  const int votes = request_votes(p, primary, epoch);
  if (votes < majority || config_primary_ != primary) return false;
  // 4. Select the best replica: reachable recently, largest offset, lowest index.
  const NodeId best = best_replica(primary);
  if (best == sim::kNoNode) {
    svc_.history().note(svc_.sim().now(), node_.name(), "failover-abort", "no suitable replica");
    return false;
  }
  // SELECT_SLAVE, then SEND_SLAVEOF_NOONE on the next sentinelTimer tick.
  p.sleep(kSentinelTick);
  return run_failover(p, primary, best, epoch);
}

bool Sentinel::force_failover(NodeId replica, std::uint64_t epoch, std::string& why) {
  if (!node_.up()) {
    why = node_.name() + " is down";
    return false;
  }
  if (failover_in_progress_) {
    why = "INPROG: " + node_.name() + " is already failing over";
    return false;
  }
  // sentinelCommand "failover": SRI_FORCE_FAILOVER, sentinelStartFailover
  // (a new epoch, state WAIT_START); no election is needed.
  const NodeId old = config_primary_;
  current_epoch_ = std::max(current_epoch_, epoch);
  failover_in_progress_ = true;
  failover_start_time_ = node_.monotonic();
  promoted_ = replica;
  svc_.history().note(svc_.sim().now(), node_.name(), "failover-start",
                      fmt::format("SENTINEL FAILOVER of {} to {} (epoch {})", svc_.sim().node(old).name(),
                                  svc_.sim().node(replica).name(), epoch));
  node_.spawn("failover-forced", [this, old, replica, epoch](sim::Process& p) {
    // WAIT_START → SELECT_SLAVE → SEND_SLAVEOF_NOONE: one state per tick.
    p.sleep(kSentinelTick);
    p.sleep(kSentinelTick);
    run_failover(p, old, replica, epoch);
  });
  return true;
}

bool Sentinel::run_failover(sim::Process& p, NodeId old_primary, NodeId best, std::uint64_t epoch) {
  const Duration failover_timeout = failover_timeout_of(svc_.spec());
  const Time started = node_.monotonic();
  failover_in_progress_ = true;
  promoted_ = best;
  promotion_seen_ = false;
  failover_epoch_ = epoch;
  const auto end = [this] {
    failover_in_progress_ = false;
    promoted_ = sim::kNoNode;
    promotion_seen_ = false;
  };
  const std::string& best_name = svc_.sim().node(best).name();
  // sentinelFailoverSendSlaveOfNoOne: REPLICAOF NO ONE, not awaited.
  auto promote = sim::make_payload<ReplicaOf>();
  promote->epoch = epoch;
  node_.send(best, promote);
  svc_.history().note(svc_.sim().now(), node_.name(), "failover-send-slaveof-noone",
                      fmt::format("REPLICAOF NO ONE to {} (epoch {})", best_name, epoch));
  // WAIT_PROMOTION: the promotion is seen in an INFO reply (every 1 s to
  // the replicas during a failover); sentinelFailoverWaitPromotion aborts
  // once failover_timeout has passed since the state was entered
  // (failover_state_change_time, set when REPLICAOF NO ONE was sent).
  int answers = 0;  // INFO replies from `best` in this state, all as a replica
  for (;;) {
    p.sleep(kSentinelFastInfoPeriod);
    if (node_.monotonic() - started > failover_timeout) {
      const std::string why =
          answers == 0 ? fmt::format("the promoted replica {} never answered INFO within the failover timeout ({})",
                                     best_name, sim::format_duration(failover_timeout))
                       : fmt::format(
                             "the promoted replica {} answered INFO {} time(s) within the failover timeout "
                             "({}), always as a replica (REPLICAOF NO ONE never took effect)",
                             best_name, answers, sim::format_duration(failover_timeout));
      svc_.history().note(svc_.sim().now(), node_.name(), "failover-abort", "-failover-abort-slave-timeout: " + why);
      end();
      return false;
    }
    auto r = p.call(best, sim::make_payload<Ping>(), kSentinelAskTimeout);
    if (!r) continue;
    if (const auto* pong = r->as<Pong>(); pong != nullptr) {
      if (pong->primary) break;
      ++answers;
    }
  }
  promotion_seen_ = true;
  // RECONF_SLAVES starts here: its timeout counts from this state change
  // (sentinelRefreshInstanceInfo sets failover_state_change_time on
  // +promoted-slave; sentinelFailoverDetectEnd compares with it).
  const Time reconf_started = node_.monotonic();
  svc_.history().note(svc_.sim().now(), node_.name(), "promoted-slave",
                      "+promoted-slave: INFO of " + best_name + " reports role master");
  // sentinelForceHelloUpdateForMaster: the other sentinels hear the new
  // configuration (and switch) through the next hello.
  auto hello = sim::make_payload<SwitchPrimary>();
  hello->primary = best;
  hello->epoch = epoch;
  for (NodeId s : svc_.group_sentinels(pool_)) {
    if (s != node_.id()) node_.send(s, hello);
  }
  // RECONF_SLAVES: REPLICAOF to every other replica; the old primary is not
  // one of them. Done when each reports following `best` (or is down), or
  // at failover_timeout (sentinelFailoverDetectEnd).
  std::vector<NodeId> pending;
  for (NodeId s : svc_.monitored(pool_)) {
    if (s == best || s == old_primary) continue;
    auto f = sim::make_payload<ReplicaOf>();
    f->primary = best;
    f->epoch = epoch;
    node_.send(s, f);
    pending.push_back(s);
  }
  while (!pending.empty() && node_.monotonic() - reconf_started <= failover_timeout) {
    p.sleep(kSentinelFastInfoPeriod);
    std::vector<NodeId> still;
    for (NodeId s : pending) {
      auto ok = last_ok_.find(s);
      if (ok == last_ok_.end() || node_.monotonic() - ok->second > svc_.spec().down_after) continue;
      auto r = p.call(s, sim::make_payload<Ping>(), kSentinelAskTimeout);
      const auto* pong = r ? r->as<Pong>() : nullptr;
      if (pong == nullptr || pong->primary || pong->following != best) still.push_back(s);
    }
    pending = std::move(still);
  }
  // UPDATE_CONFIG on the next tick: sentinelFailoverSwitchToPromotedSlave.
  p.sleep(kSentinelTick);
  end();
  adopt(best, epoch);
  svc_.history().note(svc_.sim().now(), node_.name(), "failover",
                      fmt::format("+switch-master: promoted {} (epoch {})", best_name, epoch));
  svc_.on_switch_master(best, epoch, pool_);
  svc_.announce(node_.id(), best, epoch, pool_);
  return true;
}

void Sentinel::on_message(const sim::Message& m) {
  if (m.as<GetPrimary>() != nullptr) {
    auto r = sim::make_payload<PrimaryIs>();
    r->primary = promotion_seen_ ? promoted_ : config_primary_;
    r->epoch = promotion_seen_ ? failover_epoch_ : config_epoch_;
    node_.reply(m, r);
  } else if (const auto* q = m.as<IsDown>()) {
    auto r = sim::make_payload<IsDownReply>();
    r->down = q->primary == config_primary_ && subjectively_down();
    if (q->candidate != sim::kNoNode) {
      // sentinelVoteLeader: one vote per epoch, to the first that asks.
      if (q->epoch > voted_epoch_) {
        voted_epoch_ = q->epoch;
        voted_for_ = q->candidate;
        current_epoch_ = std::max(current_epoch_, q->epoch);
        // Voting for another leader holds this sentinel's own failover back.
        if (q->candidate != node_.id()) {
          failover_start_time_ = node_.monotonic() + Duration{rng_.uniform(0, 1'000'000'000)};
        }
      }
      r->voted_for = voted_for_;
      r->vote_epoch = voted_epoch_;
    }
    node_.reply(m, r);
  } else if (const auto* s = m.as<SwitchPrimary>()) {
    if (s->epoch > config_epoch_) adopt(s->primary, s->epoch);
  }
}

void Sentinel::on_crash() {
  // The failover state is not persisted: a crashed leader's failover stops
  // (the others retry after failover_timeout).
  failover_in_progress_ = false;
  promoted_ = sim::kNoNode;
  promotion_seen_ = false;
}

void Sentinel::on_restart() {
  // Sentinel persists its configuration (sentinel.conf is rewritten on every
  // change), so it comes back with its epoch and primary.
  start();
}

// =========================================================== RedisService ==

RedisService::RedisService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> servers,
                           std::vector<NodeId> sentinels, std::vector<NodeId> clients)
    : sim_(s),
      history_(h),
      lock_(sc.lock),
      spec_(sc.lock.redis),
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

bool RedisService::authority_holds(const std::string& key, const std::string& value, std::string& why_not) const {
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
    why_not = "fewer than a majority of primaries hold it or are down";
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
      why_not = fmt::format("expired on {} {} clock", primary->node().name(), sim::clock_name(spec_.expiry_clock));
    } else {
      why_not = fmt::format("{}, the current primary, does not hold it", primary->node().name());
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
  why_not = fmt::format("{} is down and no live replica holds it", primary->node().name());
  if (spec_.persistence != RedisPersistence::kNone) why_not += ", nor its AOF";
  return false;
}

void RedisService::reevaluate() {
  if (evaluating_) return;
  evaluating_ = true;
  for (auto it = live_.begin(); it != live_.end();) {
    std::string why;
    if (!authority_holds(it->second, it->first, why)) {
      history_.lease_end(sim_.now(), it->first, why);
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
