// models/zookeeper/zookeeper.hpp — the ZooKeeper lock service: an ensemble
// of servers on the Raft core, sessions, znodes and watches.
//
// Shape: `ZooKeeperService` owns one `ZkServer` per node zk-0 … zk-{n-1};
// each runs a raft::RaftNode (models/etcd/raft) for the replicated log and,
// above it, ZooKeeper's data tree and session tracker. Clients
// (models/zookeeper/client.cpp: Curator's InterProcessMutex and kazoo's
// Lock) speak the requests of this header. Durations are sim::Duration.
//
// Behaviour modelled, with sources (apache/zookeeper at tag release-3.8.0-1,
// commit 5a02a05e — Debian 12 ships 3.8.0; the files cited have no change of
// timing or sessions up to 3.8.4; docs/FORMAT.md "ZooKeeper" lists the keys):
//  * zxids (ZxidUtils.java): epoch in the high 32 bits, a counter in the
//    low. Here the epoch is the Raft term of the entry and the counter its
//    distance from the first entry of that term, which is the new leader's
//    empty entry — ZooKeeper's NEWLEADER zxid (epoch << 32 | 0) — so the
//    first write of an epoch has counter 1 as in ZooKeeper.
//  * Sessions (ZooKeeperServer.processConnectRequest): the asked timeout
//    is clamped into [minSessionTimeout, maxSessionTimeout] (defaults 2 ×
//    and 20 × tickTime, ServerConfig / QuorumPeerConfig). tickTime is 2 s
//    as conf/zoo_sample.cfg (and so most deployments) sets it; the code's
//    own default, ZooKeeperServer.DEFAULT_TICK_TIME, is 3 s. A new session
//    is a createSession transaction; its id here is that entry's zxid.
//  * The leader's session tracker (SessionTrackerImpl, ExpiryQueue): every
//    request or ping touches the session; its expiry is rounded up to the
//    next multiple of tickTime (roundToNextInterval) on the leader's
//    monotonic clock, and the tracker expires a bucket each tickTime. An
//    expired session is closed by a closeSession transaction, which deletes
//    its ephemeral znodes (DataTree.killSession) and fires their watches.
//    A follower collects the touches of its clients and hands them to the
//    leader every tickTime / 2 (LearnerSessionTracker; Learner answers the
//    leader's half-tick ping with them). A new leader starts every session
//    it knows with a full timeout from when it takes over
//    (SessionTrackerImpl's constructor → addSession → touchSession).
//  * Reconnect (Learner.validateSession → Leader's touch): a client that
//    reconnects with its session id is told the negotiated timeout if the
//    leader's tracker still has the session, else a timeout of 0 — the
//    client's SESSION_EXPIRED.
//  * Reads (getChildren, exists) are answered by the server the client is
//    connected to, from its own applied state: a lagging follower answers
//    from the past. Writes go through the leader (a follower forwards them)
//    and are answered by the client's server once it has applied them.
//  * Sequential znodes (PrepRequestProcessor.pRequest2TxnCreate): the name
//    is the path followed by the parent's internal cversion as %010d, which
//    grows by one at each successful child create (not at deletes; the
//    Stat's cversion that clients see counts both), and a parent deleted
//    and created again starts from 0. A failed write still takes a zxid
//    (ZooKeeper proposes it as an error txn; here the log entry).
//  * Container znodes (ContainerManager): the leader deletes, every
//    `container_check_interval` from when it starts leading, each container
//    that has had a child and has none now.
//  * A server that knows no leader serves nobody: it closes its clients'
//    connections (a follower that lost its leader shuts its
//    ZooKeeperServer down and goes LOOKING), and they reconnect elsewhere.
//
// Where ZAB's recovery differs observably from Raft's, the model is Raft's
// (docs/FORMAT.md "ZooKeeper" says so to users):
//  * Election: a follower gives its leader up after Raft's randomized
//    election timeout, between syncLimit × tickTime and twice that; a
//    ZooKeeper follower gives up after syncLimit × tickTime (its socket's
//    read timeout) and Fast Leader Election then takes about 200 ms.
//  * Recovery: the new leader is the member Raft elects (a log at least as
//    up to date as a majority's), and it commits its own epoch's entry
//    before older ones count, as ZAB's NEWLEADER does; ZAB picks the
//    highest (epoch, zxid) among the voters, the same outcome when logs
//    differ only in their tail.
//  * Sync: a follower catches up from the leader by Raft's AppendEntries,
//    not by DIFF/TRUNC/SNAP; the order of applied transactions is the same.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/etcd/raft/raft.hpp"
#include "models/history.hpp"
#include "models/lock_service.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::zookeeper {

using sim::Duration;
using sim::NodeId;
using sim::Time;
using Zxid = std::int64_t;
using SessionId = std::int64_t;

/// The session timeout a server negotiates for `asked` (clamped into
/// [min, max], 0 keys resolved from tick_time).
Duration negotiated_timeout(const ZooKeeperSpec& z, Duration asked);
/// minSessionTimeout and maxSessionTimeout in effect.
Duration min_session_timeout(const ZooKeeperSpec& z);
Duration max_session_timeout(const ZooKeeperSpec& z);
/// The lock path of lock key `key`: the key if it starts with "/", else
/// "/" + key.
std::string lock_path(const std::string& key);
/// The position of the last "/" in `path`, or npos (memrchr: every create
/// and delete asks it on every server, of paths ~60 bytes long).
inline std::size_t last_slash(std::string_view path) {
  const void* at = path.empty() ? nullptr : ::memrchr(path.data(), '/', path.size());
  return at == nullptr ? std::string_view::npos : static_cast<std::size_t>(static_cast<const char*>(at) - path.data());
}

enum class Op : std::uint8_t {
  kConnect,      ///< session 0: a new session of `timeout`; else reconnect
  kPing,         ///< touches the session
  kCreate,       ///< `path`, ephemeral / sequential / container
  kDelete,       ///< `path` (any version)
  kGetChildren,  ///< `path` → children, sorted by name
  kExists,       ///< `path` → stat or none; `watch`: a one-shot watch
  kClose,        ///< closes the session (its ephemerals go)
};
const char* op_name(Op op);

struct Request final : sim::Payload {
  Op op = Op::kPing;
  SessionId session = 0;
  Duration timeout{0};  ///< kConnect: the asked session timeout
  std::string path;
  bool ephemeral = false;
  bool sequential = false;
  bool container = false;  ///< kCreate: a container znode (CreateMode.CONTAINER)
  bool watch = false;      ///< kExists: leave a watch on `path`
  /// kConnect: the last zxid the client has seen; a server behind it
  /// refuses the connection.
  Zxid last_zxid = 0;
  std::string describe() const override;
};

/// ZooKeeper's errors as the model's words (KeeperException.Code).
namespace errors {
inline constexpr const char* kConnectionLoss = "CONNECTIONLOSS";
inline constexpr const char* kSessionExpired = "SESSIONEXPIRED";
inline constexpr const char* kNoNode = "NONODE";
inline constexpr const char* kNodeExists = "NODEEXISTS";
inline constexpr const char* kNotEmpty = "NOTEMPTY";
}  // namespace errors

struct Stat {
  Zxid czxid = 0;
  Zxid mzxid = 0;
  SessionId ephemeral_owner = 0;
  std::int32_t cversion = 0;
};

struct Response final : sim::Payload {
  std::string error;  ///< "" or one of `errors`
  SessionId session = 0;
  /// kConnect: the negotiated timeout; 0: the session has expired.
  Duration timeout{0};
  std::string path;                   ///< kCreate: the created path
  std::optional<Stat> stat;           ///< kCreate, kExists: the node's stat
  std::vector<std::string> children;  ///< kGetChildren: names, sorted
  Zxid zxid = 0;                      ///< the server's last applied zxid
  std::string describe() const override;
};

/// Pushed to a client: a watched znode was deleted or created
/// (WatchedEvent NodeDeleted / NodeCreated).
struct WatchEvent final : sim::Payload {
  std::string path;
  bool deleted = true;
  std::string describe() const override { return std::string(deleted ? "NodeDeleted " : "NodeCreated ") + path; }
};

/// Pushed to a client: its server closed the connection (the session was
/// closed, or the server lost its leader).
struct ConnectionClosed final : sim::Payload {
  SessionId session = 0;
  std::string why;
  std::string describe() const override { return "connection closed: " + why; }
};

class ZooKeeperService;

/// One znode of the data tree.
struct Znode {
  Stat stat;  ///< stat.cversion: child creates and deletes, as clients see it
  /// The internal cversion PrepRequestProcessor formats into a sequential
  /// child's name: successful child creates only.
  std::int32_t child_creates = 0;
  bool container = false;
  std::set<std::string, std::less<>> children;  ///< names, not paths
};

/// One server: Raft + data tree + (on the leader) the session tracker.
class ZkServer final : public sim::NodeBehaviour {
 public:
  ZkServer(ZooKeeperService& svc, sim::Node& node, int index, raft::Config cfg, raft::RaftHistory* h);
  void start();
  void on_message(const sim::Message& m) override;
  void on_crash() override;
  void on_restart() override;

  raft::RaftNode& raft() { return raft_; }
  const raft::RaftNode& raft() const { return raft_; }
  sim::Node& node() const { return node_; }
  /// The applied data tree, by path.
  const std::map<std::string, Znode, std::less<>>& tree() const { return tree_; }
  /// Sessions in the applied state: id → negotiated timeout.
  const std::map<SessionId, Duration>& sessions() const { return sessions_; }
  Zxid last_zxid() const { return last_zxid_; }
  /// Whether it serves clients now: it is up and knows a leader.
  bool serving() const;

  /// A transaction of the log (decoded form of a raft::Command).
  struct Txn {
    enum class Kind : std::uint8_t { kCreateSession, kCloseSession, kCreate, kDelete } kind = Kind::kCreate;
    SessionId session = 0;
    Duration timeout{0};
    std::string path;  ///< kCreate: the path (before the sequence suffix)
    bool ephemeral = false, sequential = false, container = false;
    std::string why;         ///< kCloseSession: "expired", "closed"
    std::uint64_t id = 0;    ///< the request id at its server (0: none to answer)
    std::uint32_t from = 0;  ///< the index of the server that answers
  };

 private:
  struct Pending {
    sim::Message request;
    std::shared_ptr<const Request> req;
  };
  void handle_client(const sim::Message& m, std::shared_ptr<const Request> r);
  void connect(const sim::Message& m, const Request& r);
  void propose(const sim::Message& m, std::shared_ptr<const Request> r, Txn txn);
  void submit(Txn txn);
  void apply(raft::Index index, raft::Term term, const raft::Command& command);
  void apply_create(const Txn& t, Zxid zxid, Response& resp);
  void apply_delete(const std::string& path, Zxid zxid, Response& resp, std::string_view why, LeaseEndCause cause);
  void apply_close(const Txn& t, Zxid zxid);
  void fire_watches(const std::string& path, bool deleted);
  void reply_error(const sim::Message& m, const char* error);
  void answer_read(const sim::Message& m, const Request& r);
  /// The connection of `client` is now `session` on this server.
  void touch(SessionId s);
  // The leader's session tracker and container manager.
  void became_leader();
  void tracker_tick(std::uint64_t gen);
  void containers_tick(std::uint64_t gen);
  void half_tick();
  void drop_connections(const std::string& why);

  ZooKeeperService& svc_;
  sim::Node& node_;
  int index_;
  raft::RaftNode raft_;
  // The applied state (volatile: rebuilt from the log on restart).
  std::map<std::string, Znode, std::less<>> tree_;  ///< by path (looked up by string_view)
  std::map<SessionId, Duration> sessions_;
  std::map<SessionId, std::vector<std::string>> ephemerals_;
  Zxid last_zxid_ = 0;
  raft::Term epoch_ = 0;
  raft::Index epoch_start_ = 0;
  // Volatile server state.
  std::map<std::uint64_t, Pending> pending_;
  std::uint64_t next_request_ = 1;
  std::map<NodeId, SessionId> connections_;          ///< client node → its session here
  std::map<std::string, std::set<NodeId>> watches_;  ///< path → clients (one-shot)
  std::set<SessionId> touched_;                      ///< a follower's, for its next half tick
  std::map<SessionId, Time> expiry_;                 ///< the leader's tracker: monotonic deadline
  std::set<SessionId> closing_;
  std::uint64_t leader_gen_ = 0;
};

/// Leader ← follower: the sessions its clients touched (Learner's ping).
struct TouchSessions final : sim::Payload {
  std::vector<SessionId> sessions;
  std::string describe() const override { return "PING (touches)"; }
};
/// Leader ← follower: a reconnect asks whether `session` lives
/// (Learner.validateSession); `id` is the follower's request.
struct ValidateSession final : sim::Payload {
  SessionId session = 0;
  std::uint64_t id = 0;
  std::string describe() const override { return "REVALIDATE"; }
};
struct SessionValid final : sim::Payload {
  std::uint64_t id = 0;
  bool valid = false;
  std::string describe() const override { return valid ? "REVALIDATE ok" : "REVALIDATE expired"; }
};
/// Leader ← follower: a write to propose (a follower's REQUEST).
struct ForwardTxn final : sim::Payload {
  raft::Command command;
  std::string describe() const override { return "REQUEST"; }
};

/// The service as a LockService: group "zookeeper" (zk-0 …), role alias
/// "zk-leader", the raft_safety verdict of its log.
class ZooKeeperService final : public LockService {
 public:
  ZooKeeperService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> servers);
  ~ZooKeeperService() override;
  void start() override;
  std::optional<NodeId> resolve_role(const std::string& role, std::string& why) const override;
  std::unique_ptr<client::LockClient> make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                  std::size_t index) override;
  std::vector<Verdict> own_verdicts() const override;
  std::optional<std::uint64_t> fingerprint() const override;

  sim::Simulation& sim() { return sim_; }
  History& history() { return history_; }
  const ZooKeeperSpec& spec() const { return spec_; }
  const std::vector<NodeId>& servers() const { return server_ids_; }
  ZkServer& server(std::size_t i) { return *servers_[i]; }
  std::size_t size() const { return servers_.size(); }
  /// The leader of the highest term now, if any.
  std::optional<NodeId> leader() const;
  /// Whether `path` is a lock node of one of the scenario's locks (a child
  /// of a lock path).
  bool is_lock_node(const std::string& path) const;

  /// The client found its lock node first among its siblings in `server`'s
  /// getChildren answer and holds the lock: the grant. ZooKeeper grants
  /// nothing itself (the recipe decides), so the grant is the moment the
  /// client handles that answer; a paused server's late answer to a client
  /// that has moved on grants nothing. The node may be of an earlier
  /// session of the client (neither recipe checks; apache/curator#1121).
  void on_owner(NodeId client, const std::string& path, const Stat& stat, NodeId server);
  /// A lock node was deleted (applied on the leader: the lease ends).
  void on_lock_node_deleted(ZkServer& s, const std::string& path, std::string_view why, LeaseEndCause cause);
  /// `s` became leader: holds whose node it no longer has end now, if no
  /// leader recorded their end yet.
  void on_leader(ZkServer& s);

 private:
  sim::Simulation& sim_;
  History& history_;
  LockSpec lock_;
  ZooKeeperSpec spec_;
  std::vector<NodeId> server_ids_;
  std::set<std::string, std::less<>> lock_paths_;
  raft::RaftHistory raft_history_;
  std::vector<std::unique_ptr<ZkServer>> servers_;
  std::set<std::string> granted_;
};

/// The token of a lock node under `token`: its czxid, or its sequence
/// number (the path's last 10 digits); nullopt for kNone.
std::optional<std::int64_t> token_of(ZkToken token, const std::string& path, const Stat& stat);

const ServiceDescriptor& descriptor();

}  // namespace fencesim::zookeeper
