// models/redis/cluster.hpp — Redis Cluster mode (lock.cluster): hash slots,
// the cluster bus (failure detection, replica election, configuration
// epochs) and the checks a node makes before it runs a command.
//
// Shape: in cluster mode every RedisServer owns one `ClusterNode`: its view
// of the cluster (which node owns each shard's slots, with which config
// epoch; which peers it flags PFAIL or FAIL) and the cron that pings, detects
// failures, fails over and decides the cluster state. Units: durations are
// sim::Duration (ns); times are readings of the node's monotonic clock.
//
// Behaviour modelled, with sources (Redis 7.0.15, the Debian 12 server, whose
// cluster code is src/cluster.c; 7.2 moved it to src/cluster_legacy.c with the
// same logic; and the Redis Cluster specification, redis.io
// docs/reference/cluster-spec):
//  * Slots: keyHashSlot (cluster.c) — CRC16 (XMODEM: polynomial 0x1021,
//    initial value 0, no reflection) of the key mod 16384, or of the hash
//    tag: the bytes between the first '{' and the first '}' after it, when
//    there is at least one byte between them. Slots are split over the shards
//    in order as `redis-cli --cluster create` splits them over the masters
//    (redis-cli.c clusterManagerCommandCreate: 16384 / n per master, rounded).
//  * Before a command runs (getNodeByQuery, processCommand): keys of
//    different slots → "CROSSSLOT Keys in request don't hash to the same
//    slot" (the keys of an EVAL are checked before the script runs); a
//    cluster whose state is fail → "CLUSTERDOWN The cluster is down"; a key
//    whose slot another node owns → "MOVED <slot> <node>" (a replica answers
//    MOVED to its primary: clients do not send READONLY here).
//  * Cluster bus: every node pings the others; a peer with a ping unanswered
//    (and no data received) for more than node_timeout is flagged PFAIL
//    (clusterCron). Pings gossip which peers the sender flags PFAIL/FAIL;
//    a report from a primary is a failure report, valid for 2 × node_timeout
//    (CLUSTER_FAIL_REPORT_VALIDITY_MULT). A PFAIL peer is flagged FAIL when
//    the reports of a majority of the primaries that own slots (self
//    included when a primary) agree, and the FAIL is broadcast
//    (markNodeAsFailingIfNeeded). FAIL of a primary that owns slots is
//    cleared once it is reachable and 2 × node_timeout has passed
//    (clearNodeFailureIfNeeded, CLUSTER_FAIL_UNDO_TIME_MULT); of a replica,
//    as soon as it is reachable.
//  * Cluster state (clusterUpdateState, cluster-require-full-coverage yes):
//    fail when the owner of any slot is flagged FAIL, or when this node
//    reaches fewer than a majority of the slot-owning primaries (PFAIL or
//    FAIL count as unreachable) — the minority side refuses every command.
//    A primary that was in the minority waits the rejoin delay (node_timeout
//    clamped to 500 ms … 5 s) before it turns ok again; a primary that
//    restarts waits CLUSTER_WRITABLE_DELAY (2 s).
//  * Replica election (clusterHandleSlaveFailover): when its primary is
//    flagged FAIL, a replica schedules its election at now + 500 ms + a
//    random 0–499 ms (its own PRNG stream "redis-cluster/<node>") + rank ×
//    1000 ms, rank = how many replicas of the same primary have a larger
//    replication offset (clusterGetSlaveRank; a rank that grows before the
//    request adds its difference × 1000 ms). It then increments currentEpoch
//    and asks every node for a vote; it wins with the votes of a majority
//    of the slot-owning primaries within the auth timeout max(2 ×
//    node_timeout, 2 s), else it retries after twice that. It then takes
//    the shard's slots with configEpoch = its election epoch
//    (clusterFailoverReplaceYourMaster).
//  * Replica validity (clusterHandleSlaveFailover, before the election is
//    scheduled): data_age = unixtime − master->lastinteraction while the
//    replica's link is connected, else unixtime − repl_down_since (when it
//    noticed the link down; never connected: no failover at all); minus
//    node_timeout when larger; above repl-ping-replica-period (10 s) +
//    node_timeout × cluster-replica-validity-factor the replica does not
//    fail over (clusterLogCantFailover, CLUSTER_CANT_FAILOVER_DATA_AGE,
//    noted once while the reason stays). The link: RedisServer::replica_link
//    (replication.c replicationCron's repl-timeout check,
//    replicationHandleMasterDisconnection).
//  * Votes (clusterSendFailoverAuthIfNeeded): only a primary that owns
//    slots votes, once per epoch (lastVoteEpoch), for a replica whose
//    primary it flags FAIL, not twice for replicas of the same primary
//    within 2 × node_timeout, and not for a claim whose config epoch is
//    older than the slots' current owner's.
//  * Configuration (clusterUpdateSlotsConfigWith): a primary that claims a
//    shard with a higher config epoch than its owner's takes the slots in
//    every view; a primary that loses its slots becomes a replica of the new
//    owner (and resynchronises: what it had not replicated is gone), and so
//    do the replicas of the old owner. A node that sees a stale claim sends
//    the claimer an UPDATE. currentEpoch, lastVoteEpoch, config epochs and
//    the slot map are in nodes.conf, fsynced on change: they survive a
//    restart; a node that restarts takes the role its saved view gives it.
//
// Deviations: each node pings every other node once a second (Redis pings a
// random node a second and every node whose pong is older than
// node_timeout / 2; failure detection needs node_timeout either way), and
// gossips its flags for every peer (Redis: a tenth of the nodes plus every
// PFAIL one); timeouts run on the node's monotonic clock (Redis 7.0 uses
// mstime, the wall clock; the data-age check uses the wall clock, in whole
// seconds, as Redis does); the data-age bound uses repl-ping-replica-period's
// default, 10 s, while the model's replication ping runs every second; a
// crashed primary's link goes silent (no TCP close: the replica notices it
// after repl-timeout, as after a power loss); no manual failover, no resharding or
// replica migration; the failover fault is CLUSTER FAILOVER TAKEOVER.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/redis/protocol.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::redis {

inline constexpr int kClusterSlots = 16384;

/// CRC16, the XMODEM variant Redis Cluster uses (crc16.c): polynomial
/// 0x1021, initial value 0. crc16_xmodem("123456789") == 0x31C3.
std::uint16_t crc16_xmodem(std::string_view data);
/// keyHashSlot: the slot of `key` (0 … 16383), hash tags included.
int key_hash_slot(std::string_view key);
/// The shard (0 … shards-1) that owns `slot` when 16384 slots are split
/// over `shards` primaries in order (as redis-cli --cluster create does).
int shard_of_slot(int slot, int shards);
/// The first and last slot of `shard`.
std::pair<int, int> shard_slots(int shard, int shards);

class RedisService;
class RedisServer;

/// A cluster bus message (the header every message carries, as in
/// cluster.c clusterMsg, plus the type's own part).
struct ClusterMsg final : sim::Payload {
  enum Type { kPing, kPong, kFail, kAuthRequest, kAuthAck, kUpdate } type = kPing;
  int shard = 0;
  bool primary = false;
  NodeId primary_of = sim::kNoNode;  ///< a replica: the primary it follows
  /// A primary: its own config epoch; a replica: its primary's (cluster.c
  /// clusterBuildMessageHdr sends the master's).
  std::uint64_t config_epoch = 0;
  std::uint64_t current_epoch = 0;
  std::uint64_t offset = 0;
  bool claims_slots = false;  ///< a primary that owns its shard's slots in its own view
  /// kPing/kPong: the peers the sender flags PFAIL or FAIL; kFail: the failed node.
  std::vector<NodeId> failing;
  /// kUpdate: the shard's owner and config epoch the receiver should adopt.
  NodeId update_owner = sim::kNoNode;
  int update_shard = 0;
  std::uint64_t update_epoch = 0;
  std::string describe() const override;
};

/// CLUSTER SLOTS, asked by a cluster-aware client: the answer is the
/// node's view of each shard's owner.
struct ClusterSlotsRequest final : sim::Payload {
  std::string describe() const override { return "CLUSTER SLOTS"; }
};
struct ClusterSlotsReply final : sim::Payload {
  std::vector<NodeId> owners;  ///< by shard
  std::string describe() const override { return "CLUSTER SLOTS reply"; }
};

/// One node's part of the cluster bus.
class ClusterNode {
 public:
  ClusterNode(RedisService& svc, RedisServer& server, int shard);

  /// Starts the cron (at time 0 and on each restart; a crash drops it).
  void start();
  /// The node restarted: volatile state goes, nodes.conf stays.
  void on_restart();
  void on_message(const sim::Message& m, const ClusterMsg& c);
  /// The checks before a command runs: CROSSSLOT, CLUSTERDOWN, MOVED. True
  /// when the command was answered with one of them.
  bool redirect(const sim::Message& m, const Command& c);
  /// The same for a program's command with these keys: the error text
  /// (CROSSSLOT, CLUSTERDOWN, "MOVED <slot> <node name>"), or nullopt when
  /// this node serves it (raw.cpp).
  std::optional<std::string> refusal(const std::vector<std::string>& keys) const;
  /// The owner of `shard` in this node's view.
  NodeId owner(int shard) const { return owner_[static_cast<std::size_t>(shard)]; }
  const std::vector<NodeId>& owners() const { return owner_; }
  bool state_ok() const { return state_ok_; }
  /// CLUSTER FAILOVER TAKEOVER on this replica (the `failover` fault).
  void takeover();

 private:
  struct Peer {
    int shard = 0;
    bool primary = false;
    NodeId primary_of = sim::kNoNode;
    std::uint64_t config_epoch = 0;
    std::uint64_t offset = 0;
    Time ping_sent{-1};  ///< first unanswered ping; -1: none
    Time pong_received{0};
    Time data_received{0};
    bool pfail = false;
    bool fail = false;
    Time fail_time{0};
    std::optional<Time> voted_time;  ///< last vote for a replica of this primary
    std::map<NodeId, Time> reports;  ///< failure reports: reporting primary → when
  };

  void cron();
  void ping_all(ClusterMsg::Type type);
  void send(NodeId to, ClusterMsg::Type type);
  std::shared_ptr<ClusterMsg> header(ClusterMsg::Type type) const;
  void process_header(NodeId from, const ClusterMsg& c);
  void update_slots(int shard, NodeId owner, std::uint64_t epoch);
  void mark_failing_if_needed(NodeId n);
  void clear_failure_if_needed(NodeId n);
  int failure_reports(NodeId n);
  void update_state();
  void handle_failover();
  /// clusterHandleSlaveFailover's data-age check: true (and a note, once
  /// until the reason clears) when this replica's data is too old to fail over.
  bool data_too_old();
  int rank() const;
  void vote_if_needed(NodeId from, const ClusterMsg& c);
  void replace_primary();
  bool owns_slots() const;
  int quorum() const;
  bool failing(NodeId n) const;
  Time now() const;
  void note(const std::string& kind, const std::string& text);
  const std::string& name_of(NodeId n) const;

  RedisService& svc_;
  RedisServer& server_;
  NodeId me_;
  int shard_;
  Duration node_timeout_;
  std::map<NodeId, Peer> peers_;  ///< every other node of the cluster
  std::vector<NodeId> owner_;     ///< by shard: the primary owning its slots
  std::vector<std::uint64_t> owner_epoch_;
  std::uint64_t config_epoch_ = 0;  ///< this node's own (a primary's claim)
  std::uint64_t current_epoch_ = 0;
  std::uint64_t last_vote_epoch_ = 0;
  bool state_ok_ = true;
  std::optional<Time> among_minority_;  ///< last time this node was in the minority
  std::optional<Time> restarted_;       ///< a restart: the state stays fail for CLUSTER_WRITABLE_DELAY
  // Election (clusterHandleSlaveFailover).
  std::optional<Time> auth_time_;
  int auth_count_ = 0;
  bool auth_sent_ = false;
  bool cant_failover_noted_ = false;  ///< the data-age refusal is noted (clusterLogCantFailover)
  std::string data_age_story_;        ///< the last data-age check, for the election note ("" when connected)
  int auth_rank_ = 0;
  std::uint64_t auth_epoch_ = 0;
  std::uint64_t tick_ = 0;  ///< crons since the start (a ping round every tenth)
  sim::Rng rng_;
};

}  // namespace fencesim::redis
