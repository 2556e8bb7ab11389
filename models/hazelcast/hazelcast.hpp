// models/hazelcast/hazelcast.hpp — the Hazelcast lock service: a CP group of
// CP members on the Raft core, CP sessions and FencedLock.
//
// Shape: `HazelcastService` owns one `CpMember` per node hz-0 … hz-{n-1};
// each runs a raft::RaftNode (models/etcd/raft) for the CP group's log and,
// above it, the group's state machine: the CP session registry and the
// FencedLocks. Clients (models/hazelcast/client.cpp: the Java client's
// FencedLock proxy and its session manager) speak the requests of this
// header. Durations are sim::Duration.
//
// Behaviour modelled, with sources (hazelcast/hazelcast, read at commit
// 217b161d — 2023, the 5.3 line — for cp/internal/datastructures/lock/
// Lock.java, LockService.java, AbstractFencedLockProxy.java,
// AbstractProxySessionManager.java and config/cp/CPSubsystemConfig.java;
// RaftSessionRegistry.java, CPSessionInfo.java and RaftSessionService.java
// at the versions of that line; config/cp/RaftAlgorithmConfig.java and
// FencedLockConfig.java; docs/CONFORMANCE.md lists each behaviour with its
// source line — no real Hazelcast runs here):
//  * The fence (Lock.acquire): the Raft commit index of the LockOp that
//    made the caller the owner — `owner.commitIndex()`. A re-entrant
//    acquire by the owner (same session and thread) returns the same fence
//    and counts up; a waiter made owner by a release gets the commit index
//    of its own LockOp, the one that queued it (a retry with the same
//    invocation uid attaches to that wait key, it makes no new one).
//    FencedLock.INVALID_FENCE is 0.
//  * lock-acquire-limit (FencedLockConfig, default 0 = no limit): an
//    acquire by the owner at the limit fails with fence 0 (the proxy's
//    lock() throws LockAcquireLimitReachedException).
//  * Idempotency (Lock.ownerInvocationRefUids): a lock or unlock retried
//    with the same invocation uid answers what the first did; a LockOp of
//    the same thread with a new uid cancels the thread's old wait key.
//  * CP sessions (RaftSessionRegistry, CPSessionInfo): ids 1, 2, … per
//    group (++nextSessionId); a session's expiration time is each member's
//    WALL clock (Clock.currentTimeMillis) + session TTL, taken when the
//    member applies the entry; a heartbeat — and every lock and unlock
//    (LockService.heartbeatSession) — sets it to max(expiration, now + TTL)
//    and bumps the session's version. Every second each member looks for
//    sessions whose expiration is ≤ its wall clock and replicates an
//    ExpireSessionsOp with their versions (only the leader's replicate
//    succeeds); a session is removed only if its version is unchanged.
//  * A new term (NodeEngineRaftIntegration.getAppendedEntryOnLeaderElection →
//    NotifyTermChangeOp → RaftSessionService.onNewTermCommit): every
//    session's expiration is shifted by the heartbeat interval (not reset
//    to a full TTL).
//  * A closed session (BlockingResource.closeSession, Lock.onSessionClose):
//    its wait keys are removed (the callers get SessionExpiredException),
//    then a lock it owns is released in full and the first waiter made
//    owner.
//  * Waiters are answered when their wait key becomes the owner; a wait key
//    lives in the replicated state, so it survives a change of leader.
//
// Where the model differs from Hazelcast (docs/FORMAT.md "Hazelcast" says
// so to users):
//  * Election: the Raft core's (etcd's rules, pre-vote on). A follower that
//    has heard nothing from its leader for leader_heartbeat_period ×
//    max_missed_leader_heartbeat_count starts an election after a further
//    random part of up to that long (Raft's randomized timeout); Hazelcast
//    starts its pre-vote after the missed heartbeats and bounds an election
//    round by leader-election-timeout (2 s + up to 1 s).
//  * Invocations: a client's request goes to its member, which forwards it
//    to the leader it knows and answers its client when it applies the
//    entry (Hazelcast's RaftInvocation waits on the leader's future; the
//    order of commits and answers is the same). A member that knows no
//    leader answers "no leader" and the client tries again after 500 ms
//    (hazelcast.invocation.retry.pause).
//  * Snapshots, CP member removal and the METADATA group are not modelled:
//    the group is the DEFAULT group of every CP member.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/etcd/raft/raft.hpp"
#include "models/history.hpp"
#include "models/lock_service.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::hazelcast {

using sim::Duration;
using sim::NodeId;
using sim::Time;
using SessionId = std::int64_t;
using Fence = std::int64_t;

/// FencedLock.INVALID_FENCE.
inline constexpr Fence kInvalidFence = 0;
/// RaftSessionService.CHECK_EXPIRED_SESSIONS_TASK_PERIOD_IN_MILLIS.
inline constexpr Duration kCheckExpiredSessionsPeriod = std::chrono::seconds(1);
/// hazelcast.invocation.retry.pause: the wait before an invocation that
/// found no leader is tried again.
inline constexpr Duration kInvocationRetryPause = std::chrono::milliseconds(500);

enum class Op : std::uint8_t {
  kCreateSession,  ///< a new CP session for the client (`endpoint`)
  kHeartbeat,      ///< HeartbeatSessionOp of `session`
  kLock,           ///< LockOp: `lock`, `session`, `thread`, `uid`
  kUnlock,         ///< UnlockOp: `lock`, `session`, `thread`, `uid`
  /// Not Hazelcast's: has the LockOp `uid` of (`session`, `thread`) been
  /// answered in the member's applied state? (the fence; SessionExpired
  /// when the session is gone; fence 0: not yet). It stands for TCP's
  /// retransmission of an answer a short partition held up.
  kLockAnswered,
};
const char* op_name(Op op);

struct Request final : sim::Payload {
  Op op = Op::kHeartbeat;
  SessionId session = 0;
  std::string lock;         ///< the FencedLock's name
  std::int64_t thread = 0;  ///< the caller's thread id
  std::string uid;          ///< the invocation uid (lock, unlock)
  std::string endpoint;     ///< kCreateSession: the client's name
  std::string describe() const override;
};

/// Hazelcast's exceptions as the model's words.
namespace errors {
inline constexpr const char* kSessionExpired = "SessionExpiredException";
inline constexpr const char* kIllegalMonitorState = "IllegalMonitorStateException";
inline constexpr const char* kWaitKeyCancelled = "WaitKeyCancelledException";
inline constexpr const char* kNoLeader = "NotLeaderException (no leader known)";
}  // namespace errors

struct Response final : sim::Payload {
  std::string error;            ///< "" or one of `errors`
  SessionId session = 0;        ///< kCreateSession: the new session
  Duration ttl{0};              ///< kCreateSession: the session TTL
  Duration heartbeat{0};        ///< kCreateSession: the heartbeat interval
  Fence fence = kInvalidFence;  ///< kLock: the fence (kInvalidFence: not acquired)
  bool waiting = false;         ///< kLock: queued; a LockGranted follows
  bool still_locked = false;    ///< kUnlock: the caller still holds (count > 0)
  std::string describe() const override;
};

/// Pushed to a client: its queued LockOp `uid` was answered — the lock is
/// its with `fence`, or `error` (its session closed: SessionExpiredException;
/// a newer call of its thread cancelled it: WaitKeyCancelledException).
struct LockAnswer final : sim::Payload {
  std::string lock;
  std::string uid;
  Fence fence = kInvalidFence;
  std::string error;
  std::string describe() const override;
};

/// Leader ← member: an entry to replicate for the member's client.
struct ForwardOp final : sim::Payload {
  raft::Command command;
  std::string describe() const override { return "RaftInvocation"; }
};

class HazelcastService;

/// One CP member: Raft + the CP group's state machine.
class CpMember final : public sim::NodeBehaviour {
 public:
  CpMember(HazelcastService& svc, sim::Node& node, int index, raft::Config cfg, raft::RaftHistory* h);
  void start();
  void on_message(const sim::Message& m) override;
  void on_crash() override;
  void on_restart() override;

  raft::RaftNode& raft() { return raft_; }
  const raft::RaftNode& raft() const { return raft_; }
  sim::Node& node() const { return node_; }

  /// A caller of FencedLock: a session and a thread of it (LockEndpoint).
  struct Endpoint {
    SessionId session = 0;
    std::int64_t thread = 0;
    auto operator<=>(const Endpoint&) const = default;
  };
  /// A LockOp in the state (LockInvocationKey): whose, its uid, its entry.
  struct Invocation {
    Endpoint endpoint;
    std::string uid;
    raft::Index commit_index = 0;
    std::string client;  ///< the client's name (for the history)
  };
  /// One FencedLock (Lock.java).
  struct LockState {
    std::optional<Invocation> owner;
    int count = 0;
    std::deque<Invocation> waiters;  ///< in LockOp order
    /// ownerInvocationRefUids: (endpoint, uid) → the fence it was answered
    /// (kInvalidFence: not locked) or, for an unlock, whether still locked.
    std::map<std::pair<Endpoint, std::string>, Fence> answered;
  };
  /// A CP session (CPSessionInfo); `expiration` on this member's wall clock.
  struct Session {
    Time expiration{0};
    std::int64_t version = 0;
    std::string endpoint;
  };

  const std::map<std::string, LockState, std::less<>>& locks() const { return locks_; }
  const std::map<SessionId, Session>& sessions() const { return sessions_; }

  /// A transaction of the log (decoded form of a raft::Command).
  struct Txn {
    enum class Kind : std::uint8_t { kCreateSession, kHeartbeat, kExpireSessions, kLock, kUnlock } kind = Kind::kLock;
    SessionId session = 0;
    std::string lock;
    std::int64_t thread = 0;
    std::string uid;
    std::string endpoint;  ///< kCreateSession, kLock: the client's name
    /// kExpireSessions: (session, version) pairs.
    std::vector<std::pair<SessionId, std::int64_t>> expire;
    std::uint64_t id = 0;    ///< the request id at its member (0: none to answer)
    std::uint32_t from = 0;  ///< the index of the member that answers
  };

 private:
  struct Pending {
    sim::Message request;
  };
  void handle_client(const sim::Message& m, const Request& r);
  void propose(const sim::Message& m, Txn txn);
  void apply(raft::Index index, raft::Term term, const raft::Command& command);
  void apply_lock(raft::Index index, const Txn& t, Response& resp);
  void apply_unlock(const Txn& t, Response& resp);
  /// Makes the first live waiter of `name` its owner (after a release).
  void promote(const std::string& name, LockState& l);
  /// Removes a session: its wait keys, then its locks (released in full).
  void close_session(SessionId s, const std::string& why);
  /// Sets the session's expiration to max(expiration, wall now + TTL).
  bool heartbeat(SessionId s);
  void answer_waiter(const std::string& name, const Invocation& w, Fence fence, const char* error);
  void check_expired_sessions();

  HazelcastService& svc_;
  sim::Node& node_;
  int index_;
  raft::RaftNode raft_;
  // The applied state (volatile: rebuilt from the log on restart).
  std::map<std::string, LockState, std::less<>> locks_;
  std::map<SessionId, Session> sessions_;
  SessionId next_session_ = 0;
  // Volatile member state.
  std::map<std::uint64_t, Pending> pending_;
  std::uint64_t next_request_ = 1;
  /// The queued LockOps this member's clients are waiting on: (lock,
  /// endpoint, uid) → the client's node.
  std::map<std::tuple<std::string, Endpoint, std::string>, NodeId> waiting_;
};

/// The service as a LockService: group "hazelcast" (hz-0 …), role alias
/// "hz-leader" (the CP group's Raft leader), the raft_safety verdict of its
/// log.
class HazelcastService final : public LockService {
 public:
  HazelcastService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> members);
  ~HazelcastService() override;
  void start() override;
  std::optional<NodeId> resolve_role(const std::string& role, std::string& why) const override;
  std::unique_ptr<client::LockClient> make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                  std::size_t index) override;
  std::vector<Verdict> own_verdicts() const override;
  std::optional<std::uint64_t> fingerprint() const override;

  sim::Simulation& sim() { return sim_; }
  const HazelcastSpec& spec() const { return spec_; }
  /// The session TTL (lock.ttl).
  Duration session_ttl() const { return ttl_; }
  const std::vector<NodeId>& members() const { return member_ids_; }
  CpMember& member(std::size_t i) { return *members_[i]; }
  std::size_t size() const { return members_.size(); }
  std::optional<NodeId> leader() const;

  /// `inv` became the owner of lock `name` with `fence` (applied on the
  /// leader `m`): the grant.
  void on_owner(CpMember& m, const std::string& name, const CpMember::Invocation& inv, Fence fence);
  /// The owner of lock `name` whose fence is `fence` is no longer (applied
  /// on the leader `m`): the lease ends.
  void on_owner_left(CpMember& m, const std::string& name, Fence fence, const std::string& why, LeaseEndCause cause);

 private:
  sim::Simulation& sim_;
  History& history_;
  LockSpec lock_;
  HazelcastSpec spec_;
  Duration ttl_;
  std::vector<NodeId> member_ids_;
  raft::RaftHistory raft_history_;
  std::vector<std::unique_ptr<CpMember>> members_;
  std::set<std::string> granted_;
};

/// The value of the hold of lock `name` with `fence`: what the grant, the
/// belief and the lease end name ("orders#12").
std::string hold_value(const std::string& name, Fence fence);

const ServiceDescriptor& descriptor();

}  // namespace fencesim::hazelcast
