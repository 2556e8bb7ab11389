// models/redis/server.cpp — one Redis server's command side: the commands
// the lock clients send (GET, SET NX PX with the token's INCR, the renewal
// and release scripts, DEL, INCR, SET), the keyspace and its expiry (lazy on
// access, db.c expireIfNeeded; active, expire.c activeExpireCycle), and the
// dispatch of every message a server receives. As Redis splits it (7.0:
// server.c, t_string.c, db.c, expire.c), the rest of the server is in
// persistence.cpp (aof.c, restart), replication.cpp (replication.c) and
// cluster.cpp (cluster.c); Sentinel is sentinel.cpp, the service around
// them redis.cpp. What is modelled, with sources: redis.hpp.
#include "models/redis/redis.hpp"

#include <fmt/format.h>

#include "models/redis/cluster.hpp"
#include "models/redis/commands/script.hpp"
#include "models/redis/commands/wire.hpp"

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
    case Op::kRedissonAcquire:
      return fmt::format("EVAL RLock.tryLock {} {} {}{}", key, owner, ttl.count() / 1'000'000,
                         with_token ? " +INCR" : "");
    case Op::kRedissonRenew: return fmt::format("EVAL RLock.renew {} {} {}", key, owner, ttl.count() / 1'000'000);
    case Op::kRedissonRelease: return fmt::format("EVAL RLock.unlock {} {}", key, owner);
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
constexpr Duration kActiveExpiryPeriod = 100ms;  // server.hz = 10

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

RedisServer::RedisServer(RedisService& svc, sim::Node& node, int index, bool primary, NodeId primary_of)
    : svc_(svc),
      node_(node),
      index_(index),
      configured_primary_(primary),
      configured_following_(primary_of),
      primary_(primary),
      following_(primary_of) {
  node_.set_behaviour(this);
  link_.last_interaction = unixtime();  // at time 0 every replica is connected and in sync
}

RedisServer::~RedisServer() = default;

void RedisServer::enable_cluster(int shard) {
  shard_ = shard;
  cluster_ = std::make_unique<ClusterNode>(svc_, *this, shard);
}

void RedisServer::start() {
  ++role_epoch_;
  if (!primary_) return;
  for (NodeId r : replicas_) replica_online(r);  // connected now: acknowledged now
  refresh_good_replicas();
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

bool RedisServer::expired(const Entry& e) const {
  return e.has_expiry && node_.clock(svc_.expiry_clock()) >= e.expire_at;
}

bool RedisServer::holds(const std::string& key, const std::string& value) const {
  if (!node_.up()) return false;
  auto it = data_.find(key);
  return it != data_.end() && it->second.value == value && !expired(it->second);
}

Effect RedisServer::pexpire(const std::string& key, Duration ttl) const {
  Effect ex{Effect::kExpire, key, "", 0, true, Time{0}, ttl};
  ex.expire_at = node_.clock(svc_.expiry_clock()) + ttl;
  return ex;
}

Entry RedisServer::make_entry_expiry(Entry e, Duration ttl) const {
  e.has_expiry = true;
  e.expire_at = node_.clock(svc_.expiry_clock()) + ttl;
  return e;
}

void RedisServer::apply(const Effect& eff) {
  if (!connections_.empty()) ++key_versions_[eff.key];  // a program WATCHes (raw.cpp)
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
    case Effect::kHashIncr: {
      if (auto it = data_.find(eff.key); it != data_.end()) it->second.holds += eff.integer;
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
  const Effect ex = pexpire(c.key, c.ttl);
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

bool RedisServer::owned_by(const Entry& e, const std::string& owner) {
  return e.value.size() > owner.size() && e.value[owner.size()] == '|' && e.value.compare(0, owner.size(), owner) == 0;
}

/// RedissonLock.tryLockInnerAsync (RedissonFencedLock's with `with_token`).
void RedisServer::redisson_acquire(const sim::Message& m, const Command& c) {
  auto it = data_.find(c.key);
  if (it != data_.end() && !owned_by(it->second, c.owner)) {
    // return redis.call('pttl', KEYS[1]); the waiter subscribes to the channel.
    auto r = reply_nil();
    r->integer =
        it->second.has_expiry
            ? std::max<std::int64_t>(0, (it->second.expire_at - node_.clock(svc_.expiry_clock())).count() / 1'000'000)
            : -1;
    node_.reply(m, r);
    subscribers_[c.key].insert(m.from);
    return;
  }
  // hincrby KEYS[1] ARGV[2] 1; pexpire KEYS[1] ARGV[1]
  const bool reentry = it != data_.end();
  std::vector<Effect> effects;
  if (!reentry) effects.push_back(Effect{Effect::kSet, c.key, c.value, 0, false, Time{0}, Duration{0}});
  effects.push_back(Effect{Effect::kHashIncr, c.key, "", 1, false, Time{0}, Duration{0}});
  const Effect ex = pexpire(c.key, c.ttl);
  effects.push_back(ex);
  if (c.with_token) {
    expire_if_needed(c.counter_key);
    effects.push_back(Effect{Effect::kIncr, c.counter_key, "", 0, false, Time{0}, Duration{0}});
  }
  write(std::move(effects));
  last_write_[{m.from, 0}] = offset_;
  std::optional<std::int64_t> token;
  if (c.with_token) {
    const auto ct = data_.find(c.counter_key);
    token = ct != data_.end() ? as_integer(ct->second.value).value_or(0) : 0;
  }
  if (!reentry) svc_.on_grant(*this, m.from, c.key, c.value, token);
  auto r = sim::make_payload<Reply>();
  r->integer = token;
  r->text = reentry ? data_.at(c.key).value : c.value;  // the grant the owner holds
  node_.reply(m, r);
  svc_.reevaluate();
}

/// RedissonBaseLock.renewExpirationAsync: PEXPIRE if the owner's field exists.
void RedisServer::redisson_renew(const sim::Message& m, const Command& c) {
  auto it = data_.find(c.key);
  if (it == data_.end() || !owned_by(it->second, c.owner)) {
    node_.reply(m, reply_int(0));
    return;
  }
  const Effect ex = pexpire(c.key, c.ttl);
  write({ex});
  last_write_[{m.from, 0}] = offset_;
  node_.reply(m, reply_int(1));
  svc_.reevaluate();
}

/// RedissonLock.unlockInnerAsync: nil when the owner holds nothing; a
/// re-entered lock counts down and keeps the lease (0); the last hold DELs
/// and PUBLISHes the unlock message (1).
void RedisServer::redisson_release(const sim::Message& m, const Command& c) {
  auto it = data_.find(c.key);
  if (it == data_.end() || !owned_by(it->second, c.owner)) {
    node_.reply(m, reply_nil());
    return;
  }
  if (it->second.holds > 1) {
    const Effect ex = pexpire(c.key, c.ttl);
    write({Effect{Effect::kHashIncr, c.key, "", -1, false, Time{0}, Duration{0}}, ex});
    last_write_[{m.from, 0}] = offset_;
    node_.reply(m, reply_int(0));
    svc_.reevaluate();
    return;
  }
  write({Effect{Effect::kDel, c.key, "", 0, false, Time{0}, Duration{0}}});
  node_.reply(m, reply_int(1));
  publish_release(c.key);
  svc_.reevaluate();
}

void RedisServer::publish_release(const std::string& key) {
  auto it = subscribers_.find(key);
  if (it == subscribers_.end()) return;
  auto msg = sim::make_payload<LockReleased>();
  msg->key = key;
  for (NodeId n : it->second) node_.send(n, msg);
  subscribers_.erase(it);
}

/// min-replicas-to-write: answers -NOREPLICAS and returns true when the
/// command would write and too few replicas are good. The acquire (SET NX,
/// or the script whose first write is SET), a renewal or release script that
/// would write, DEL, INCR, SET are refused before any write (processCommand;
/// in a script, its first write call). A script whose key holds another
/// value writes nothing and answers as usual.
bool RedisServer::refused_for_replicas(const sim::Message& m, const Command& c) {
  if (!too_few_good_replicas()) return false;
  auto it = data_.find(c.key);
  const bool writes_nothing = [&] {
    switch (c.op) {
      case Op::kRenew:
      case Op::kRelease: return it == data_.end() || it->second.value != c.value;
      case Op::kRedissonAcquire: return it != data_.end() && !owned_by(it->second, c.owner);
      case Op::kRedissonRenew:
      case Op::kRedissonRelease: return it == data_.end() || !owned_by(it->second, c.owner);
      default: return false;
    }
  }();
  if (writes_nothing) return false;
  auto r = sim::make_payload<Reply>();
  r->error = "NOREPLICAS Not enough good replicas to write.";
  node_.reply(m, r);
  return true;
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
  if (is_write && refused_for_replicas(m, c)) return;
  if (primary_) expire_if_needed(c.key);
  switch (c.op) {
    case Op::kGet: command_get(m, c); return;
    case Op::kAcquire: command_acquire(m, c); return;
    case Op::kRenew: command_renew(m, c); return;
    case Op::kRelease: command_release(m, c); return;
    case Op::kRedissonAcquire: redisson_acquire(m, c); return;
    case Op::kRedissonRenew: redisson_renew(m, c); return;
    case Op::kRedissonRelease: redisson_release(m, c); return;
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
  } else if (const auto* raw = m.as<RawCommand>()) {
    handle_raw(m, *raw);
  } else if (m.as<ReplGetAck>() != nullptr) {
    auto ack = sim::make_payload<ReplAck>();
    ack->offset = offset_;
    node_.send(m.from, ack);
  } else if (const auto* ack = m.as<ReplAck>()) {
    on_replica_ack(m.from, ack->offset);
  } else if (const auto* cm = m.as<ClusterMsg>()) {
    if (cluster_) cluster_->on_message(m, *cm);
  } else if (m.as<ClusterSlotsRequest>() != nullptr) {
    if (!cluster_) return;
    auto r = sim::make_payload<ClusterSlotsReply>();
    r->owners = cluster_->owners();
    node_.reply(m, r);
  } else if (m.as<Ping>() != nullptr) {
    auto p = sim::make_payload<Pong>();
    p->primary = primary_;
    p->offset = offset_;
    p->following = primary_ ? sim::kNoNode : following_;
    node_.reply(m, p);
  } else {
    // The stream, the heartbeat, PSYNC / FULLRESYNC and REPLICAOF (replication.cpp).
    replication_message(m);
  }
}

void RedisServer::reset_counter(const std::string& key, std::int64_t value) {
  write({Effect{Effect::kSetInt, key, "", value, false, Time{0}, Duration{0}}});
}

}  // namespace fencesim::redis
