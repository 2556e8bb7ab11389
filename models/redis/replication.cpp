// models/redis/replication.cpp — asynchronous replication between a
// primary and its replicas (Redis 7.0 replication.c): the write stream sent
// `replication_delay` after the reply, the heartbeat, PSYNC answered with a
// full resync, REPLICAOF (promotion and following). The rest of the server:
// server.cpp; what is modelled, with sources: redis.hpp.
#include "models/redis/redis.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/redis/commands/wire.hpp"

namespace fencesim::redis {

using namespace std::chrono_literals;

namespace {
constexpr Duration kReplHeartbeatPeriod = 1s;  // repl-ping-replica-period is 10 s; 1 s keeps gaps short
}  // namespace

// As expiry_tick (server.cpp): each tick schedules the next one itself, and a
// role change (role_epoch_) stops the chain.
void RedisServer::heartbeat_tick(std::uint64_t epoch) {
  node_.after(kReplHeartbeatPeriod, [this, epoch] {
    if (!primary_ || role_epoch_ != epoch) return;
    heartbeat();
    heartbeat_tick(epoch);
  });
}

void RedisServer::start_replication_cron() {
  if (svc_.spec().min_replicas_to_write == 0) return;
  node_.every(1s, [this] { replication_cron(); });
}

void RedisServer::replication_cron() {
  if (primary_) {
    refresh_good_replicas();
  } else if (following_ != sim::kNoNode && synced_) {
    // replicationSendAck: REPLCONF ACK <offset>, once a second.
    auto ack = sim::make_payload<ReplAck>();
    ack->offset = offset_;
    node_.send(following_, ack);
  }
}

namespace {
std::int64_t whole_seconds(Time t) { return std::chrono::floor<std::chrono::seconds>(t).count(); }
}  // namespace

void RedisServer::replica_online(NodeId r) {
  replicas_.insert(r);
  if (svc_.spec().min_replicas_to_write == 0) return;
  ack_seconds_[r] = whole_seconds(node_.wall());
}

void RedisServer::refresh_good_replicas() {
  // `if (!server.repl_min_slaves_to_write || !server.repl_min_slaves_max_lag) return;`
  if (svc_.spec().min_replicas_max_lag == Duration::zero()) return;
  const std::int64_t now = whole_seconds(node_.wall());
  const std::int64_t max_lag =
      std::chrono::duration_cast<std::chrono::seconds>(svc_.spec().min_replicas_max_lag).count();
  int good = 0;
  for (NodeId r : replicas_) {
    // `lag <= server.repl_min_slaves_max_lag`, lag = unixtime - repl_ack_time.
    if (auto it = ack_seconds_.find(r); it != ack_seconds_.end() && now - it->second <= max_lag) ++good;
  }
  const int min = svc_.spec().min_replicas_to_write;
  const bool was_short = good_replicas_ >= 0 && good_replicas_ < min;  // -1: not counted since it became primary
  if ((good < min) != was_short && primary_) {
    svc_.history().note(svc_.sim().now(), node_.name(), good < min ? "noreplicas" : "replicas-ok",
                        good < min ? fmt::format("refuses writes (-NOREPLICAS): {} of its replicas acknowledged "
                                                 "within min-replicas-max-lag {}, min-replicas-to-write is {}",
                                                 good, sim::format_duration(svc_.spec().min_replicas_max_lag), min)
                                   : fmt::format("accepts writes again: {} of its replicas acknowledged within {}",
                                                 good, sim::format_duration(svc_.spec().min_replicas_max_lag)));
  }
  good_replicas_ = good;
}

std::int64_t RedisServer::unixtime() const { return whole_seconds(node_.wall()); }

void RedisServer::repl_timeout_check() {
  // replicationCron: `(time(NULL)-server.master->lastinteraction) >
  // server.repl_timeout` on a connected replica frees the master client:
  // replicationHandleMasterDisconnection sets repl_down_since = unixtime.
  if (primary_ || !link_.connected || !svc_.spec().cluster) return;
  const std::int64_t timeout =
      std::chrono::duration_cast<std::chrono::seconds>(svc_.spec().cluster->repl_timeout).count();
  const std::int64_t now = unixtime();
  if (now - link_.last_interaction <= timeout) return;
  link_.connected = false;
  link_.down_since = now;
  svc_.history().note(svc_.sim().now(), node_.name(), "link-down",
                      fmt::format("MASTER timeout: no data nor PING received from {} since {} s for more than "
                                  "repl-timeout {}: its link is down since {} s",
                                  svc_.sim().node(following_).name(), link_.last_interaction,
                                  sim::format_duration(svc_.spec().cluster->repl_timeout), now));
}

void RedisServer::link_interaction() {
  // Data or a ping arrives only on an established link: a replica that has
  // not synchronised since it (re)started or changed primary has none. A
  // replica whose link had dropped reconnects and resynchronises
  // (replicationCron connects every second); both leave it connected with
  // lastinteraction now.
  if (!synced_) return;
  link_.connected = true;
  link_.last_interaction = unixtime();
}

void RedisServer::link_down(bool restarted) {
  // replicationHandleMasterDisconnection: repl_down_since = unixtime, when
  // there was a connected primary. A restarted server has never connected
  // (server.c initServerConfig: 0, "down since EVER"), nor has a primary
  // turned replica (replicationUnsetMaster resets it to 0 on promotion).
  if (restarted || primary_) {
    link_.down_since.reset();
  } else if (link_.connected) {
    link_.down_since = unixtime();
  }
  link_.connected = false;
}

bool RedisServer::too_few_good_replicas() const {
  // checkGoodReplicasStatus: never on a replica; a max lag of 0 turns the
  // feature off, as min-replicas-to-write 0 does.
  const int min = svc_.spec().min_replicas_to_write;
  return min > 0 && svc_.spec().min_replicas_max_lag > Duration::zero() && primary_ && good_replicas_ < min;
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

void RedisServer::replication_message(const sim::Message& m) {
  if (const auto* s = m.as<ReplStream>()) {
    if (primary_ || m.from != following_) return;
    link_interaction();
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
    if (primary_ || m.from != following_) return;
    link_interaction();
    if (hb->replid != replid_ || hb->offset > offset_) request_sync();
  } else if (m.as<SyncRequest>() != nullptr) {
    sync_command(m);
  } else if (const auto* fs = m.as<FullSync>()) {
    full_resync(m, *fs);
  } else if (const auto* r = m.as<ReplicaOf>()) {
    if (r->primary == sim::kNoNode) {
      promote();
    } else if (r->primary != node_.id()) {
      follow(r->primary);
    }
    auto ok = sim::make_payload<Reply>();
    ok->text = "OK";
    node_.reply(m, ok);
  }
}

/// replication.c syncCommand: a PSYNC that cannot continue is answered with
/// a full snapshot of the data set (FULLRESYNC).
void RedisServer::sync_command(const sim::Message& m) {
  if (!primary_) return;
  replica_online(m.from);
  if (svc_.spec().min_replicas_to_write > 0) refresh_good_replicas();
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
}

/// FULLRESYNC on a replica (replication.c readSyncBulkPayload, then
/// restartAOFAfterSYNC): the primary's snapshot replaces its data set.
void RedisServer::full_resync(const sim::Message& m, const FullSync& fs) {
  if (primary_ || m.from != following_) return;
  // FULLRESYNC: the replica's data is replaced by the primary's snapshot;
  // whatever it had and the primary did not is gone.
  data_.clear();
  for (const auto& [k, e] : fs.data) {
    Entry copy = e;
    if (copy.has_expiry && svc_.expiry_clock() == sim::ClockKind::kMonotonic) {
      copy.expire_at = node_.monotonic() + fs.remaining_ttl.at(k);
    }
    if (copy.has_expiry) svc_.watch_expiry(node_.id(), copy.expire_at);
    data_[k] = copy;
  }
  aof_rewrite();
  replid_ = fs.replid;
  synced_ = true;
  link_interaction();  // the link is established: REPL_STATE_CONNECTED
  offset_ = fs.offset;
  last_sync_request_ = Time{-1};
  svc_.reevaluate();
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
  ack_seconds_.clear();
  good_replicas_ = -1;
  replid_ = svc_.new_replid();  // shiftReplicationId on REPLICAOF NO ONE
  sent_offset_ = offset_;
  svc_.on_promoted(*this);
  start();
  svc_.reevaluate();
}

void RedisServer::follow(NodeId primary) {
  if (!primary_ && following_ == primary) return;
  link_down(/*restarted=*/false);
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

}  // namespace fencesim::redis
