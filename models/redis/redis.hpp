// models/redis/redis.hpp — the Redis-like lease service.
//
// Shape: `RedisService` owns one `RedisServer` behaviour per node redis-0 …
// (a primary and asynchronous replicas, or in Redlock mode independent
// primaries) and one `Sentinel` behaviour per sentinel-0 …. Clients talk to
// it with the commands of protocol.hpp. Units: every duration is a
// sim::Duration (ns); expiries are readings of a node's clock in ns.
//
// Behaviour modelled, with sources:
//  * Expiry is decided on the primary's wall clock by default: Redis stores
//    an expiry as absolute Unix milliseconds (db.c setExpire, `when` in ms)
//    and decides with the server's clock (db.c keyIsExpired: now > when,
//    mstime()). Redis 7 propagates SET PX / PEXPIRE as PXAT / PEXPIREAT
//    (absolute), so replicas hold the same absolute deadline. With
//    `expiry_clock: monotonic`, each node computes the deadline on its own
//    monotonic clock when it applies the command. (Deviation: nanosecond
//    resolution, and a key is expired from the instant its deadline is
//    reached rather than one millisecond later.)
//  * Lazy expiry on access plus active expiry every 100 ms (server.hz = 10,
//    expire.c activeExpireCycle; with the handful of keys a lock uses, the
//    sampled cycle visits every key). Expired keys are deleted by the primary
//    and the DEL is propagated (db.c deleteExpiredKeyAndPropagate).
//  * Replicas never expire keys on their own; a read on a replica hides a
//    logically expired key (db.c expireIfNeeded: "if we are running in the
//    context of a replica ... return 1 but don't delete", since Redis 3.2).
//    A promoted replica expires on its own clock.
//  * Replication is asynchronous: the primary applies a write, answers, and
//    sends it to its replicas `replication_delay` later; a primary that
//    crashes or is partitioned first never delivers it. A replica that sees
//    a gap asks for a full resynchronisation (PSYNC → FULLRESYNC), which
//    replaces its data with the primary's.
//  * A node without persistence restarts empty (no RDB/AOF), as a replica of
//    the current primary where Sentinel runs (Sentinel reconfigures a
//    returning old master as a replica: sentinel.c "+convert-to-slave"),
//    otherwise in its configured role.
//  * With the AOF (lock.persistence; Redis 7.0.15, the Debian 12 server):
//    aof.c feedAppendOnlyFile appends every write (a replica's replicated
//    ones too) to server.aof_buf, and flushAppendOnlyFile write(2)s the
//    buffer in beforeSleep, before the replies go out ("we are required to
//    write the AOF before replying to the client"); appendfsync always
//    fsyncs there, everysec in a background job about once a second. So a
//    process crash loses nothing acknowledged (the page cache survives it)
//    and only a power loss (RedisServer::on_power_loss) loses what everysec
//    had not fsynced. The AOF stores absolute expiries (SET … PXAT and
//    PEXPIREAT: t_string.c setGenericCommand, 7.0), and a node loading it expires keys by those wall-clock
//    times. A replica rewrites its AOF after a full resync (replication.c
//    restartAOFAfterSYNC). A restarted node starts a new replication ID.
//  * min-replicas-to-write / min-replicas-max-lag (lock.min_replicas_*;
//    Redis 7.0.15 replication.c replicationSendAck, replconfCommand,
//    refreshGoodSlavesCount, checkGoodReplicasStatus; server.c
//    processCommand; script.c scriptVerifyWriteCommandAllow): replicas ACK
//    once a second, the primary stamps each ACK with its wall clock's whole
//    second and counts good replicas once a second (lag <= max lag); below
//    the minimum it answers writes -NOREPLICAS. Replicas never check;
//    expiry is never refused.
//  * Sentinel (sentinel.c): PING every second; subjectively down after
//    `down_after` with no valid reply; objectively down when a majority of all
//    sentinels agree (is-master-down-by-addr); leader election by epoch, one
//    vote per epoch to the first asker (sentinelVoteLeader), a majority of
//    all sentinels needed; a random 0–1 s delay before the election
//    (SENTINEL_MAX_DESYNC); the best replica has the largest replication
//    offset, lowest index on a tie (sentinelSelectSlave sorts by priority,
//    offset, run id). The failover is not atomic (Redis 7.0 sentinel.c
//    sentinelFailoverStateMachine): REPLICAOF NO ONE to the replica
//    (sentinelFailoverSendSlaveOfNoOne); the promotion seen in an INFO reply,
//    sent every 1 s during a failover (sentinelRefreshInstanceInfo,
//    WAIT_PROMOTION); REPLICAOF to the other replicas, never to the old
//    primary (sentinelFailoverReconfNextSlave); then +switch-master
//    (sentinelFailoverSwitchToPromotedSlave), announced to the clients; the
//    switched-to node is then the service's current primary, even when
//    REPLICAOF NO ONE found it a primary already (a failback to an old
//    primary not yet converted: replicaofCommand then only answers +OK).
//    Every waiting state is bounded by the failover timeout from the moment
//    it was entered (failover_state_change_time): Redis's failover-timeout,
//    180 s by default, shortened to max(2 × down_after, 3 s).
//    The old primary is converted ("+convert-to-slave") only by a sentinel
//    whose INFO samples (every SENTINEL_INFO_PERIOD, 10 s, after the switch)
//    have shown it reporting role master for longer than
//    SENTINEL_PUBLISH_PERIOD*4 (8 s); until then it is a writable primary,
//    and what it accepts is lost when it resyncs from the new one.
//  * Redlock (redis.io "Distributed Locks with Redis", redsync): N independent
//    primaries, no token (the client side is in models/client).
//    Pools (lock.replicas and lock.sentinels with lock.redlock): each pool a
//    Sentinel deployment, as a Redlock client over Sentinel-backed
//    connections gets (samcook/RedLock.net#11, mike-marcacci/node-redlock#16,
//    go-redsync/redsync#24; the failure is the one redis.io "Distributed
//    Locks with Redis" gives under "Why failover-based implementations are
//    not enough", and sewenew/redis-plus-plus#44 for Redlock over a
//    cluster's replicated shards). Pool p is redis-<p> (its initial primary), its
//    replicas redis-<p>-r1 … and its own sentinels sentinel-<p>-0 …, a
//    Sentinel group per pool monitoring only that pool, with the replication
//    and stepwise failover above. A pool that fails over to a replica that
//    missed the SET has forgotten the key: at the service it no longer
//    blocks others (its current primary neither holds the value nor is down).
//    A pooled grant is counted over every primary of each pool (an old
//    primary not yet converted still accepts the SET, and the client
//    believes from it); the lease then ends at once unless the pools'
//    current primaries block (issue #16).
//    At the service a Redlock lease is held while a majority of primaries
//    block others: they hold the value, or are down (antirez, "Is Redlock
//    safe?": a primary restarted only after the TTL cannot hand the lock out).
//  * Redis Cluster (lock.cluster): shards of a primary and replicas each,
//    redis-s<s>-0 …; the cluster bus, slots, CROSSSLOT / CLUSTERDOWN / MOVED
//    and the replica election are in cluster.hpp (Redis 7.0.15 cluster.c
//    and the Redis Cluster specification). Replication within a shard is
//    the same asynchronous replication as above, so a failover loses what
//    the primary acknowledged but had not yet sent.
//
// The lease observer (an outside view, not node code) records in the History
// when each lease ends at the service, as docs/FORMAT.md "Lease end at the service" defines it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/history.hpp"
#include "models/lock_service.hpp"
#include "models/redis/commands/commands.hpp"
#include "models/redis/protocol.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::redis {

namespace commands {
class ScriptCache;
}
struct RawCommand;

class RedisService;
class ClusterNode;

/// Sentinel's failover-timeout (Redis 7.0 sentinel.c; the default,
/// SENTINEL_DEFAULT_FAILOVER_TIMEOUT, is 3 minutes), shortened to
/// max(2 × down_after, 3 s) to keep runs short (docs/FORMAT.md, Redis). As in
/// sentinel.c it bounds each waiting state from the moment the state was
/// entered (failover_state_change_time): WAIT_PROMOTION aborts with
/// -failover-abort-slave-timeout (sentinelFailoverWaitPromotion), and
/// RECONF_SLAVES ends with +failover-end-for-timeout
/// (sentinelFailoverDetectEnd); 2 × it spaces a sentinel's failover
/// attempts (sentinelStartFailoverIfNeeded). The one owner of this rule:
/// fencesim-real configures its real Sentinels from it too.
Duration failover_timeout_of(const RedisSpec& r);

/// One Redis server (primary or replica).
class RedisServer final : public sim::NodeBehaviour {
 public:
  RedisServer(RedisService& svc, sim::Node& node, int index, bool primary, NodeId primary_of);
  ~RedisServer() override;
  /// Cluster mode: this node belongs to `shard` and joins the cluster bus.
  void enable_cluster(int shard);
  int shard() const { return shard_; }
  /// The node's cluster bus part (cluster mode), else nullptr.
  ClusterNode* cluster() const { return cluster_.get(); }

  void on_message(const sim::Message& m) override;
  void on_crash() override;
  void on_restart() override;
  /// Power loss: the AOF writes not yet fsynced are gone (lock.persistence).
  void on_power_loss() override;

  /// Starts the AOF's once-a-second fsync under aof_everysec (at time 0 and
  /// on each restart; a crash drops the timer).
  void start_persistence();

  /// Starts the primary's periodic work (active expiry, replication
  /// heartbeat). Called at time 0 and on promotion.
  void start();
  /// With lock.min_replicas_to_write: the once-a-second part of
  /// replicationCron (Redis 7.0 replication.c) that it needs — a replica
  /// sends REPLCONF ACK <offset> to its primary (replicationSendAck), a
  /// primary counts its good replicas (refreshGoodSlavesCount). Started at
  /// time 0 and on each restart (a crash drops the timer). Without the
  /// setting nothing is sent: WAIT asks with GETACK itself, and runs stay
  /// as they were.
  void start_replication_cron();

  bool is_primary() const { return primary_; }
  NodeId following() const { return following_; }
  std::uint64_t offset() const { return offset_; }
  int index() const { return index_; }
  sim::Node& node() const { return node_; }
  const std::map<std::string, Entry>& data() const { return data_; }

  /// Present with `value` and not logically expired on this node's deciding
  /// clock (what a read of this node would see).
  bool holds(const std::string& key, const std::string& value) const;
  bool expired(const Entry& e) const;
  /// While the node is down: what it will come back with (its durable AOF;
  /// lock.persistence) holds `key` with `value`, unexpired on its wall clock
  /// (the AOF stores absolute wall-clock deadlines). Always false without
  /// persistence.
  bool persisted_holds(const std::string& key, const std::string& value) const;
  /// The value `key` had when expiry (lazy or active) last deleted it here.
  std::string expired_value(const std::string& key) const {
    auto it = expired_.find(key);
    return it == expired_.end() ? std::string() : it->second;
  }

  /// Pooled Redlock: the pool this server belongs to.
  int pool() const { return pool_; }
  void set_pool(int p) { pool_ = p; }
  /// A replica's link to its primary as replication.c keeps it, for Redis
  /// Cluster's data-age check (cluster.hpp): REPL_STATE_CONNECTED,
  /// master->lastinteraction (the last data or ping received on the
  /// established link) and repl_down_since, in whole seconds of this node's
  /// wall clock (server.unixtime). Outside cluster mode it is kept and never read.
  struct ReplicaLink {
    bool connected = true;
    std::int64_t last_interaction = 0;
    /// repl_down_since; nullopt: never connected since the node started
    /// (Redis: 0, "down since EVER").
    std::optional<std::int64_t> down_since;
  };
  ReplicaLink replica_link() const { return link_; }
  /// replicationCron's repl-timeout check (lock.cluster.repl_timeout),
  /// called once a second by the cluster cron: a connected replica that
  /// has received nothing for longer drops its link (noted `link-down`).
  void repl_timeout_check();
  /// The node's wall clock in whole seconds (server.unixtime).
  std::int64_t unixtime() const;
  /// REPLICAOF NO ONE.
  void promote();
  /// REPLICAOF `primary`: drop to replica and ask for a full resync.
  void follow(NodeId primary);
  /// A replica connected to this primary (at time 0 every replica is).
  void connect_replica(NodeId r) { replicas_.insert(r); }
  /// Rebuild the counter key at `value` (counter_reset fault), as a write.
  void reset_counter(const std::string& key, std::int64_t value);

 private:
  void handle_command(const sim::Message& m, const Command& c);
  bool refused_for_replicas(const sim::Message& m, const Command& c);
  /// A program's command (commands/wire.hpp, raw.cpp).
  void handle_raw(const sim::Message& m, const RawCommand& c);
  /// MULTI, EXEC, DISCARD, WATCH, UNWATCH of one connection (raw.cpp).
  commands::RespValue transaction_command(const sim::Message& m, const RawCommand& c, const std::string& name);
  /// WAIT numreplicas timeout (raw.cpp): answered now, or when enough
  /// replicas have acknowledged the connection's last write, or at the timeout.
  void wait_command(const sim::Message& m, const RawCommand& c);
  /// A replica's REPLCONF ACK (raw.cpp): answers the WAITs it completes.
  void on_replica_ack(NodeId replica, std::uint64_t offset);
  /// Asks the replicas for their offsets every 100 ms while a WAIT is pending.
  void ask_for_acks(std::uint64_t epoch);
  /// The replicas whose acknowledged offset is at least `offset`.
  std::int64_t acked_at_least(std::uint64_t offset) const;
  /// Runs `cmds` as one atomic step (one command, or an EXEC's queue):
  /// their replies, their effects written, grants noted.
  std::vector<commands::RespValue> run_atomically(NodeId client, const std::vector<std::vector<std::string>>& cmds,
                                                  std::uint32_t connection = 0);
  /// A program's command or script has run: what it did to the lock keys
  /// is a grant when a key now holds a value it did not hold (raw.cpp).
  void note_raw_grants(NodeId client, const std::map<std::string, std::string>& before,
                       const std::vector<Effect>& effects);
  void command_get(const sim::Message& m, const Command& c);
  void command_acquire(const sim::Message& m, const Command& c);
  void command_renew(const sim::Message& m, const Command& c);
  void command_release(const sim::Message& m, const Command& c);
  /// Redisson's RLock / RFencedLock scripts (protocol.hpp Op::kRedisson*).
  static bool owned_by(const Entry& e, const std::string& owner);
  void redisson_acquire(const sim::Message& m, const Command& c);
  void redisson_renew(const sim::Message& m, const Command& c);
  void redisson_release(const sim::Message& m, const Command& c);
  /// PUBLISH of Redisson's unlock message to the lock channel's subscribers.
  void publish_release(const std::string& key);
  /// Lazy expiry: deletes `key` if expired (primary only) and propagates.
  void expire_if_needed(const std::string& key);
  void write(std::vector<Effect> effects);
  void apply(const Effect& e);
  void active_expire_cycle();
  void expiry_tick(std::uint64_t epoch);
  void heartbeat_tick(std::uint64_t epoch);
  void heartbeat();
  void request_sync();
  /// Asks again every second until a full resync arrives (see replication.cpp).
  void retry_sync(std::uint64_t epoch);
  /// The replication messages (replication.cpp): the stream, the heartbeat,
  /// PSYNC (SyncRequest), FULLRESYNC (FullSync) and REPLICAOF; others are ignored.
  void replication_message(const sim::Message& m);
  /// A primary answers PSYNC with a snapshot of its data set (syncCommand).
  void sync_command(const sim::Message& m);
  /// A replica replaces its data set with its primary's snapshot.
  void full_resync(const sim::Message& m, const FullSync& fs);
  Entry make_entry_expiry(Entry e, Duration ttl) const;
  /// PEXPIRE key ttl as a replicated effect: the deadline on this node's
  /// deciding clock (wall mode: absolute, PEXPIREAT), the TTL for monotonic.
  Effect pexpire(const std::string& key, Duration ttl) const;
  /// Appends the state of `key` after a write to the AOF (a no-op without
  /// persistence); under aof_always it is durable at once.
  void aof_append(const std::string& key);
  /// A full resync replaced the data set: the AOF is rewritten from it.
  void aof_rewrite();
  /// fsync: what the AOF holds in the page cache becomes durable.
  void aof_fsync();

  RedisService& svc_;
  sim::Node& node_;
  int index_;
  int shard_ = 0;                         ///< cluster mode: the node's shard
  int pool_ = 0;                          ///< pooled Redlock: the node's pool
  std::unique_ptr<ClusterNode> cluster_;  ///< cluster mode only
  bool configured_primary_;
  NodeId configured_following_;
  bool primary_;
  NodeId following_;  ///< the primary a replica follows
  /// Replication ID of the history `offset_` counts in. Every server starts
  /// in history 1 (at time 0 the replicas are in sync); a primary that
  /// restarts empty or is promoted starts a new one (replication.c
  /// changeReplicationId / shiftReplicationId).
  std::uint64_t replid_ = 1;
  std::uint64_t offset_ = 0;       ///< replication offset (one per write)
  std::uint64_t sent_offset_ = 0;  ///< primary: offset streamed so far
  std::map<std::string, Entry> data_;
  std::map<std::string, std::string> expired_;  ///< key → value deleted by expiry (for reports)
  /// The script cache and Lua interpreter, made at a program's first
  /// command (built-in clients never need it); lost on a crash.
  std::unique_ptr<commands::ScriptCache> scripts_;
  /// A program connection's MULTI/WATCH state (multi.c), by (client node,
  /// connection number); lost on a crash.
  struct Connection {
    bool in_multi = false;
    bool queue_failed = false;  ///< a command was refused while queueing: EXEC answers EXECABORT
    std::vector<std::vector<std::string>> queued;
    std::map<std::string, std::uint64_t> watched;  ///< key -> its version at WATCH
  };
  std::map<std::pair<NodeId, std::uint32_t>, Connection> connections_;
  /// Each key's count of writes, kept while any connection exists (WATCH
  /// compares it; multi.c touchWatchedKey).
  std::map<std::string, std::uint64_t> key_versions_;
  /// WAIT: each replica's acknowledged offset, each program connection's
  /// last write (its offset), and the WAITs not yet answered.
  std::map<NodeId, std::uint64_t> acked_;
  std::map<std::pair<NodeId, std::uint32_t>, std::uint64_t> last_write_;
  struct PendingWait {
    sim::Message request;
    std::uint64_t target = 0;
    std::int64_t needed = 0;
    std::uint64_t id = 0;
  };
  std::vector<PendingWait> waits_;
  /// Redisson: who waits on each lock's channel (subscribed by a refused
  /// acquire, until the next release); lost on a crash.
  std::map<std::string, std::set<NodeId>> subscribers_;
  /// min-replicas-to-write: each online replica's last REPLCONF ACK, in
  /// whole seconds of this primary's wall clock (repl_ack_time, set from
  /// server.unixtime), and the good replicas counted by the last cron
  /// (repl_good_slaves_count); -1 before the first count as a primary.
  std::map<NodeId, std::int64_t> ack_seconds_;
  int good_replicas_ = -1;
  /// A replica is online at its primary (putSlaveOnline: repl_ack_time is
  /// now); the caller counts the good replicas again.
  void replica_online(NodeId r);
  void replication_cron();
  /// refreshGoodSlavesCount: replicas whose last ACK is at most
  /// min_replicas_max_lag old, in whole seconds.
  void refresh_good_replicas();
  /// server.c processCommand / script.c scriptVerifyWriteCommandAllow
  /// (checkGoodReplicasStatus): a write is refused with -NOREPLICAS.
  bool too_few_good_replicas() const;
  std::uint64_t next_wait_ = 0;
  bool asking_ = false;        ///< the GETACK loop runs
  std::set<NodeId> replicas_;  ///< primary: connected replicas
  Time last_sync_request_{-1};
  /// A replica has received a full resync from the primary it follows (at
  /// time 0 every replica is in sync).
  bool synced_ = true;
  /// replica_link()'s state as last set by a message or a role change; the
  /// repl-timeout check is applied when it is read.
  ReplicaLink link_;
  /// Data or a ping from the primary this replica follows.
  void link_interaction();
  /// The link to the primary is dropped (a new primary, a restart).
  void link_down(bool restarted);
  std::uint64_t role_epoch_ = 0;  ///< bumps on each role change, stops old loops

  /// One key's state after a write, as the AOF would replay it: nullopt for
  /// a deleted key; an expiry as an absolute wall-clock deadline (PXAT).
  struct AofRecord {
    std::string key;
    std::optional<Entry> entry;
  };
  /// The durable AOF, replayed: key → entry with its wall-clock deadline.
  std::map<std::string, Entry> aof_durable_;
  /// Written to the AOF file (the page cache) but not yet fsynced, in order.
  std::vector<AofRecord> aof_unsynced_;
};

/// One Sentinel.
class Sentinel final : public sim::NodeBehaviour {
 public:
  /// `pool`: the Redlock pool this sentinel monitors (0 outside pools).
  Sentinel(RedisService& svc, sim::Node& node, int index, int pool = 0);
  int pool() const { return pool_; }
  void on_message(const sim::Message& m) override;
  /// A program's RESP command (PING, SENTINEL get-master-addr-by-name,
  /// SENTINEL masters, SENTINEL master <name>).
  commands::RespValue answer_command(const std::vector<std::string>& argv) const;
  /// SENTINEL master's answer for the monitored primary: field, value, ….
  commands::RespValue primary_state() const;
  void on_crash() override;
  void on_restart() override;
  void start();

  NodeId primary() const { return config_primary_; }
  std::uint64_t epoch() const { return config_epoch_; }
  /// Adopt a newer configuration (+switch-master, or a hello with a newer
  /// epoch). A new primary resets the sentinel's view of every other
  /// server (sentinelResetMasterAndChangeAddress: new instances, new links).
  void adopt(NodeId primary, std::uint64_t epoch);
  /// SENTINEL FAILOVER (the `failover` fault): a forced failover to
  /// `replica` in a new epoch, run as the sequence below; false (with
  /// `why`) when this sentinel is down or already failing over.
  bool force_failover(NodeId replica, std::uint64_t epoch, std::string& why);
  bool failover_in_progress() const { return failover_in_progress_; }
  /// The replica this sentinel's failover in progress promotes (SRI_PROMOTED), else kNoNode.
  NodeId promoting() const { return failover_in_progress_ ? promoted_ : sim::kNoNode; }
  sim::Node& node() const { return node_; }

 private:
  /// The failover once the leader and the replica are chosen
  /// (sentinel.c sentinelFailoverStateMachine, Redis 7.0):
  /// SEND_SLAVEOF_NOONE (sentinelFailoverSendSlaveOfNoOne) → WAIT_PROMOTION
  /// until an INFO of `best` (every 1 s during a failover) reports role
  /// master (sentinelRefreshInstanceInfo) → RECONF_SLAVES: REPLICAOF to the
  /// other replicas, the old primary excluded (sentinelFailoverReconfNextSlave),
  /// until each reports following `best` or failover_timeout → +switch-master
  /// (sentinelFailoverSwitchToPromotedSlave), announced to the clients. The
  /// old primary is left as it is: monitor() converts it later. Returns false
  /// if the promotion was not seen within failover_timeout.
  bool run_failover(sim::Process& p, NodeId old_primary, NodeId best, std::uint64_t epoch);
  /// WAIT_PROMOTION: true once `best` reports role master; false (noted
  /// -failover-abort-slave-timeout) after failover_timeout since `started`.
  bool wait_promotion(sim::Process& p, NodeId best, Time started, Duration failover_timeout);
  /// RECONF_SLAVES: the hello to the other sentinels, REPLICAOF to every
  /// other replica, until each follows `best` or failover_timeout passes.
  void reconfigure_replicas(sim::Process& p, NodeId old_primary, NodeId best, std::uint64_t epoch,
                            Duration failover_timeout);
  /// An INFO sample of `target` from a PING reply, taken when the INFO
  /// period has passed (1 s for the replicas of a primary that is being
  /// failed over or is down, else SENTINEL_INFO_PERIOD, 10 s); converts an
  /// instance reporting role master that is not the configured primary
  /// ("+convert-to-slave") once it has reported so for longer than
  /// SENTINEL_PUBLISH_PERIOD × 4 (8 s) and has not been down for as long.
  void refresh_info(NodeId target, const Pong& pong);
  void monitor(sim::Process& p, NodeId target);
  void failover_loop(sim::Process& p);
  void hello_loop(sim::Process& p);
  bool subjectively_down() const;
  bool try_failover(sim::Process& p);
  /// Asks every other sentinel whether `primary` is down; the number that
  /// agree, self included (is-master-down-by-addr without a vote).
  int count_down_votes(sim::Process& p, NodeId primary);
  /// Asks every other sentinel for its vote in `epoch`; the votes won, self
  /// included (sentinelVoteLeader).
  int request_votes(sim::Process& p, NodeId primary, std::uint64_t epoch);
  /// The replica to promote: answered within down_after, largest offset,
  /// lowest index; kNoNode if none.
  NodeId best_replica(NodeId primary);

  RedisService& svc_;
  sim::Node& node_;
  int pool_;
  NodeId config_primary_;
  std::uint64_t config_epoch_ = 0;
  std::uint64_t current_epoch_ = 0;
  std::uint64_t voted_epoch_ = 0;
  NodeId voted_for_ = sim::kNoNode;
  std::map<NodeId, Time> last_ok_;  ///< monotonic reading of the last valid PONG
  std::map<NodeId, Pong> last_pong_;
  // The INFO view (sentinelRedisInstance role_reported / role_reported_time,
  // info_refresh); monotonic readings. A target absent from last_info_ is
  // sampled at its next PING reply (a new link sends INFO at once).
  std::map<NodeId, Time> last_info_;
  std::map<NodeId, bool> role_primary_;        ///< role reported by the last INFO sample
  std::map<NodeId, Time> role_reported_time_;  ///< when that role was first reported
  std::map<NodeId, Time> last_sdown_;          ///< last time the target was seen subjectively down
  bool failover_in_progress_ = false;
  /// master->failover_start_time: when this sentinel last started a
  /// failover, or (plus up to 1 s) voted for another leader; it starts no
  /// failover of its own within 2 × failover_timeout of it
  /// (sentinelStartFailoverIfNeeded, sentinelVoteLeader).
  std::optional<Time> failover_start_time_;
  /// From the promotion seen until +switch-master, get-master-addr-by-name
  /// already answers the promoted replica (sentinelGetCurrentMasterAddress).
  NodeId promoted_ = sim::kNoNode;  ///< the replica chosen (SRI_PROMOTED), during a failover
  bool promotion_seen_ = false;     ///< WAIT_PROMOTION is over (RECONF_SLAVES or later)
  std::uint64_t failover_epoch_ = 0;
  sim::Rng rng_;
};

/// The service as a LockService (models/lock_service.hpp): groups "redis"
/// (redis-0 …: the primary then its replicas, or the Redlock primaries) and
/// "sentinels" (sentinel-0 …), role alias "redis-primary", faults
/// `failover` and `counter_reset` of "redis" (the token counter).
class RedisService final : public LockService {
 public:
  /// Builds the servers and sentinels on the given nodes. `clients` are the
  /// lock clients that receive +switch-master announcements.
  RedisService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> servers,
               std::vector<NodeId> sentinels, std::vector<NodeId> clients);
  ~RedisService() override;

  /// Starts every node's periodic work; call once before running.
  void start() override;

  // --- LockService ----------------------------------------------------------
  /// "redis-primary": current_primary().
  std::optional<NodeId> resolve_role(const std::string& role, std::string& why) const override;
  /// failover: failover_now; counter_reset: reset_counter.
  bool apply_fault(const FaultSpec& f, std::string& why) override;
  /// Redlock client over every primary, or the single-primary client that
  /// asks the sentinels (client::make_redis_client).
  std::unique_ptr<client::LockClient> make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                  std::size_t index) override;

  sim::Simulation& sim() { return sim_; }
  History& history() { return history_; }
  const RedisSpec& spec() const { return spec_; }
  const std::string& key() const { return key_; }
  std::string counter_key() const { return redis_counter_key(lock_); }
  /// Every lock of the scenario: lock.key, then lock.keys.
  std::vector<std::string> lock_keys() const;
  /// The token counter of lock `key` (redis_counter_key_of).
  std::string counter_key_of(const std::string& key) const { return redis_counter_key_of(lock_, key); }
  sim::ClockKind expiry_clock() const { return spec_.expiry_clock; }
  bool redlock() const { return spec_.redlock > 0; }
  /// Redlock: a majority of the pools (or primaries); else of the servers.
  int majority() const;
  /// Redlock pools with replicas and Sentinel (lock.redlock with lock.replicas).
  bool pooled() const { return redlock() && spec_.replicas > 0; }
  /// The servers a Sentinel group monitors: pool `pool`'s (pooled), else all.
  const std::vector<NodeId>& monitored(int pool) const {
    return pooled() ? pools_.at(static_cast<std::size_t>(pool)) : server_ids_;
  }
  /// The sentinels of one group: pool `pool`'s (pooled), else all.
  const std::vector<NodeId>& group_sentinels(int pool) const {
    return pooled() ? pool_sentinels_.at(static_cast<std::size_t>(pool)) : sentinel_ids_;
  }
  /// Pooled: pool `pool`'s current primary (the last one promoted).
  NodeId pool_primary(int pool) const { return pool_primary_.at(static_cast<std::size_t>(pool)); }

  const std::vector<NodeId>& servers() const { return server_ids_; }
  /// Cluster mode (lock.cluster present).
  bool cluster() const { return spec_.cluster.has_value(); }
  /// The servers of one shard, its initial primary first (cluster mode;
  /// otherwise shard 0 is every server).
  const std::vector<NodeId>& shard_servers(int shard) const {
    return shard_servers_.at(static_cast<std::size_t>(shard));
  }
  /// The authoritative primary of `shard`: the last one promoted.
  NodeId shard_primary(int shard) const { return shard_primary_.at(static_cast<std::size_t>(shard)); }
  /// The shard that owns the lock key's slot (0 outside cluster mode).
  int key_shard() const { return key_shard_; }
  const std::vector<NodeId>& sentinels() const { return sentinel_ids_; }
  const std::vector<NodeId>& clients() const { return client_ids_; }
  RedisServer& server(NodeId n);
  bool is_server(NodeId n) const;
  Sentinel* sentinel(NodeId n);

  /// The authoritative primary: the one the sentinels last promoted (or
  /// redis-0); in cluster mode the primary of the lock key's shard; with
  /// Redlock pools pool 0's. Role alias `redis-primary`.
  NodeId current_primary() const { return current_primary_; }

  // --- faults -------------------------------------------------------------
  /// `failover`: the best replica (largest offset, lowest index; up
  /// replicas only) is to be promoted. With sentinels, the first one that is
  /// up runs SENTINEL FAILOVER to it (Sentinel::force_failover: stepwise, the
  /// old primary stays writable until converted); without sentinels the
  /// operator promotes it and makes every other up node its replica at once.
  /// Returns false (with `why`) when there is no live replica, no sentinel is
  /// up, a failover is already in progress, or the service is Redlock
  /// (pooled: "redis" names no single pool; the loader refuses it first).
  bool failover_now(std::string& why);
  /// `counter_reset` of the token counter on the current primary.
  bool reset_counter(std::int64_t value, std::string& why);

  // --- hooks for the servers ---------------------------------------------
  /// A server took REPLICAOF NO ONE: it becomes its pool's / shard's
  /// current primary. `already_primary`: it was one already (the command
  /// changed nothing on the server, as in Redis, but it is the node the
  /// failover promotes: a failback, or a failover to the current primary).
  void on_promoted(RedisServer& s, bool already_primary = false);
  /// +switch-master of `primary` in `epoch` by a sentinel of group `pool`:
  /// it becomes the current primary (of its pool, or of its shard), whatever
  /// promote() saw; an older epoch than the group's last switch is ignored.
  void on_switch_master(NodeId primary, std::uint64_t epoch, int pool = 0);
  /// `key`: the lock key granted (lock.key or one of lock.keys).
  void on_grant(RedisServer& s, NodeId client, const std::string& key, const std::string& value,
                std::optional<std::int64_t> token);
  void watch_expiry(NodeId node, Time deadline);
  /// As watch_expiry, on the node's wall clock (a down node's AOF deadlines).
  void watch_wall_expiry(NodeId node, Time deadline);
  /// Re-evaluates which leases the authoritative state still holds.
  void reevaluate();
  /// +switch-master from sentinel `from` of group `pool`: to that group's
  /// other sentinels and to every client.
  void announce(NodeId from, NodeId primary, std::uint64_t epoch, int pool = 0);
  std::uint64_t next_epoch() { return ++epoch_; }
  /// A fresh replication ID (deterministic: a counter; 1 is the initial one).
  std::uint64_t new_replid() { return ++replid_; }
  void observe_epoch(std::uint64_t e) {
    if (e > epoch_) epoch_ = e;
  }

 private:
  /// Sets the current primary of `pool` (pooled) or `shard`, and
  /// current_primary_ when that is the lock key's.
  void make_current(NodeId primary, int pool, int shard);
  /// Does the authoritative state hold lock `key` with `value`? When not,
  /// `why_not` gets the reason, the cause and who.
  bool authority_holds(const std::string& key, const std::string& value, LeaseEndRecord& why_not) const;

  sim::Simulation& sim_;
  History& history_;
  LockSpec lock_;
  RedisSpec spec_;
  std::string key_;
  std::vector<NodeId> server_ids_;
  std::vector<NodeId> sentinel_ids_;
  std::vector<NodeId> client_ids_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::vector<std::unique_ptr<Sentinel>> sentinel_objs_;
  std::vector<std::vector<NodeId>> shard_servers_;
  std::vector<std::vector<NodeId>> pools_;           ///< pooled: each pool's servers, primary first
  std::vector<std::vector<NodeId>> pool_sentinels_;  ///< pooled: each pool's sentinels
  std::vector<NodeId> pool_primary_;                 ///< pooled: each pool's current primary
  std::vector<NodeId> shard_primary_;
  int key_shard_ = 0;
  int counter_shard_ = 0;
  NodeId current_primary_;
  std::uint64_t epoch_ = 0;
  std::uint64_t replid_ = 1;
  /// Leases granted and not yet ended at the service, by value → lock key
  /// (lock.keys: each lock is its own key; Redlock and Cluster: lock.key).
  std::map<std::string, std::string> live_;
  std::set<std::string> redlock_granted_;
  bool evaluating_ = false;
  /// The epoch of each Sentinel group's last +switch-master (on_switch_master).
  std::map<int, std::uint64_t> switch_epoch_;
};

}  // namespace fencesim::redis
