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
//  * Sentinel (sentinel.c): PING every second; subjectively down after
//    `down_after` with no valid reply; objectively down when a majority of all
//    sentinels agree (is-master-down-by-addr); leader election by epoch, one
//    vote per epoch to the first asker (sentinelVoteLeader), a majority of
//    all sentinels needed; a random 0–1 s delay before the election
//    (SENTINEL_MAX_DESYNC); the best replica has the largest replication
//    offset, lowest index on a tie (sentinelSelectSlave sorts by priority,
//    offset, run id); REPLICAOF NO ONE to it, REPLICAOF to the others, and
//    +switch-master announced to clients. A sentinel that sees an old primary
//    again sends it REPLICAOF the new one; it then resyncs and loses what it
//    had not replicated.
//  * Redlock (redis.io "Distributed Locks with Redis", redsync): N independent
//    primaries, no replicas, no token (the client side is in models/client).
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
#include "models/redis/protocol.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::redis {

class RedisService;
class ClusterNode;

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
  void command_get(const sim::Message& m, const Command& c);
  void command_acquire(const sim::Message& m, const Command& c);
  void command_renew(const sim::Message& m, const Command& c);
  void command_release(const sim::Message& m, const Command& c);
  /// Lazy expiry: deletes `key` if expired (primary only) and propagates.
  void expire_if_needed(const std::string& key);
  void write(std::vector<Effect> effects);
  void apply(const Effect& e);
  void active_expire_cycle();
  void expiry_tick(std::uint64_t epoch);
  void heartbeat_tick(std::uint64_t epoch);
  void heartbeat();
  void request_sync();
  /// Asks again every second until a full resync arrives (see redis.cpp).
  void retry_sync(std::uint64_t epoch);
  Entry make_entry_expiry(Entry e, Duration ttl) const;
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
  std::set<NodeId> replicas_;                   ///< primary: connected replicas
  Time last_sync_request_{-1};
  /// A replica has received a full resync from the primary it follows (at
  /// time 0 every replica is in sync).
  bool synced_ = true;
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
  Sentinel(RedisService& svc, sim::Node& node, int index);
  void on_message(const sim::Message& m) override;
  void on_crash() override;
  void on_restart() override;
  void start();

  NodeId primary() const { return config_primary_; }
  std::uint64_t epoch() const { return config_epoch_; }
  /// Adopt a newer configuration (hello messages / forced failover).
  void adopt(NodeId primary, std::uint64_t epoch);

 private:
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
  int index_;
  NodeId config_primary_;
  std::uint64_t config_epoch_ = 0;
  std::uint64_t current_epoch_ = 0;
  std::uint64_t voted_epoch_ = 0;
  NodeId voted_for_ = sim::kNoNode;
  std::map<NodeId, Time> last_ok_;  ///< monotonic reading of the last valid PONG
  std::map<NodeId, Pong> last_pong_;
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
  sim::ClockKind expiry_clock() const { return spec_.expiry_clock; }
  bool redlock() const { return spec_.redlock > 0; }
  int majority() const;

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
  /// redis-0); in cluster mode the primary of the lock key's shard. Role
  /// alias `redis-primary`.
  NodeId current_primary() const { return current_primary_; }

  // --- faults -------------------------------------------------------------
  /// `failover`: promote the best replica now (largest offset, lowest index;
  /// up replicas only); the old primary becomes a replica. Returns false
  /// (with `why`) when there is no live replica.
  bool failover_now(std::string& why);
  /// `counter_reset` of the token counter on the current primary.
  bool reset_counter(std::int64_t value, std::string& why);

  // --- hooks for the servers ---------------------------------------------
  void on_promoted(RedisServer& s);
  /// `key`: the lock key granted (lock.key or one of lock.keys).
  void on_grant(RedisServer& s, NodeId client, const std::string& key, const std::string& value,
                std::optional<std::int64_t> token);
  void watch_expiry(NodeId node, Time deadline);
  /// As watch_expiry, on the node's wall clock (a down node's AOF deadlines).
  void watch_wall_expiry(NodeId node, Time deadline);
  /// Re-evaluates which leases the authoritative state still holds.
  void reevaluate();
  void announce(NodeId from, NodeId primary, std::uint64_t epoch);
  std::uint64_t next_epoch() { return ++epoch_; }
  /// A fresh replication ID (deterministic: a counter; 1 is the initial one).
  std::uint64_t new_replid() { return ++replid_; }
  void observe_epoch(std::uint64_t e) {
    if (e > epoch_) epoch_ = e;
  }

 private:
  /// Does the authoritative state hold lock `key` with `value`?
  bool authority_holds(const std::string& key, const std::string& value, std::string& why_not) const;

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
};

}  // namespace fencesim::redis
