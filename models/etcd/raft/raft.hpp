// models/etcd/raft/raft.hpp — a Raft consensus member for the etcd-like
// service, usable on its own.
//
// Shape: one `RaftNode` per cluster member, each on its own sim::Node. The
// members exchange `RaftMessage`s (message.hpp) over sim's network, so
// partitions, loss, latency, pauses, crashes and clock faults reach Raft
// exactly as they would reach a real server. A layer above (the etcd
// key-value store and lessor) proposes commands, applies committed ones and
// asks for linearizable reads:
//
//   raft::Config cfg;
//   cfg.members = {etcd0.id(), etcd1.id(), etcd2.id()};   // members[0]: bootstrap leader
//   cfg.election_timeout = 1s;  cfg.heartbeat = 100ms;     // E = 10 ticks
//   raft::RaftHistory history;                              // shared by the cluster
//   raft::RaftNode r0(etcd0, cfg, &history);                // installs itself as etcd0's behaviour
//   r0.set_callbacks({.apply = [&](raft::Index i, raft::Term t, const raft::Command& c) { kv.apply(i, c.str()); }});
//   r0.start();                                             // at time 0, on every member
//   if (auto index = r0.propose(raft::Command("put k v"))) { ... }  // leader only
//   else forward_to(r0.leader());                           // a follower names its known leader
//   r0.read_index([&](const raft::ReadResult& r) { if (r.ok) serve_read(); });
//
// A layer that needs the node's behaviour for itself constructs the RaftNode
// with `attach = false` and forwards its own on_message (via `step`, which
// says whether the message was Raft's), on_crash and on_restart to it.
//
// Time. Raft counts ticks of `heartbeat` on the member's monotonic clock (a
// node timer: a pause freezes it, a clock jump or drift moves it). The
// election timeout is drawn per reset uniformly from {E, …, 2E−1} ticks,
// E = election_timeout / heartbeat, from the member's own PRNG stream
// "raft/<node name>" (etcd raft.go resetRandomizedElectionTimeout). A leader
// sends a heartbeat every tick (etcd HeartbeatTick = 1).
//
// Bootstrap (docs/FORMAT.md "etcd"): at time 0 members[0] is leader of
// term 1; every member has term 1, has voted for members[0], and holds the
// leader's empty entry at index 1, committed and applied; followers' election
// timers start freshly randomized.
//
// Persistence. `Storage` (term, vote, commit index, log) survives a crash —
// it is written before any message that depends on it leaves the member, as
// etcd persists its HardState and entries before sending.
//
// WAL fsync (`Config::wal_fsync`, docs/FORMAT.md "etcd" `lock.wal_fsync`).
// With a positive duration, writing the term, the vote or new entries costs
// one fsync of that long, modelled on etcd v3.5 server/etcdserver/raft.go
// (raftNode.start, the Ready loop) and server/storage/wal/wal.go (Save: the
// WAL is fsynced when raft.MustSync says so — new entries, or a changed term
// or vote; a commit-index change alone is not synced):
//  * a member that is not the leader sends the messages of a Ready only
//    after `r.storage.Save(rd.HardState, rd.Entries)` returned: here, while
//    an fsync is pending every message it sends waits until the fsync ends
//    (its append responses, vote responses, a candidate's vote requests);
//  * the leader sends first and saves "in parallel" (raft thesis §10.2.1,
//    the comment in raft.go), but counts its own log toward a commit only
//    once its entries are on disk (here: its own match is its last synced
//    index; etcd ≤ 3.5 counts its match at once but applies the commit only
//    after its Save returned, the next Ready; etcd 3.6's asynchronous
//    storage writes, MsgStorageAppendResp, do what is modelled);
//  * fsyncs run one at a time on the member's disk; whatever is written
//    while one runs is synced together by the next (a Ready batches every
//    change made while the previous Save ran).
// The fsync's end is a node timer on the member's monotonic clock (a pause
// freezes the disk with the process). Storage itself is written at once: a
// crash before the fsync ended keeps the unsynced tail, which no message
// has depended on yet. wal_fsync = 0 (the default): no cost, no timers. Everything else
// (role, known leader, applied index, progress, votes, pending reads, timers)
// is volatile and lost. On restart the member is a follower of its persisted
// term with a fresh election timer. Its state machine is volatile too:
// `Callbacks::restarted` tells the layer above to start from an empty state,
// then the member re-applies its log from index 1 up to the persisted commit
// index (etcd persists Commit in its HardState; there are no snapshots here).
//
// Rules, with sources — Raft paper (Ongaro & Ousterhout, "In Search of an
// Understandable Consensus Algorithm", 2014) and etcd raft (raft.go, v3.5):
//  * terms: a higher term in any message makes the member a follower of that
//    term (§5.1, Figure 2 "Rules for Servers"), except for (pre-)votes that a
//    member inside its leader lease ignores and PreVote traffic (below);
//  * RequestVote with the up-to-date-log check (§5.4.1) and one vote per
//    term, persisted (§5.2);
//  * AppendEntries with the log-matching check on (prevLogIndex,
//    prevLogTerm), truncation of conflicting entries, and commit index
//    min(leaderCommit, index of last new entry) (Figure 2, §5.3);
//  * the leader commits only an entry of its current term that a majority
//    holds (§5.4.2, Figure 8; etcd raftLog.maybeCommit checks the term);
//  * the leader appends an empty entry at the start of its term (§8; etcd
//    becomeLeader);
//  * PreVote (thesis §9.6; etcd Config.PreVote, default here on): a
//    pre-candidate asks with term + 1 without raising its own term and
//    becomes a candidate only after a quorum grants;
//  * leader lease (etcd raft.go Step, "inLease"): with CheckQuorum, which is
//    always on, a member that heard from a leader within the election
//    timeout ignores (pre-)vote requests of a higher term;
//  * CheckQuorum (etcd): every election timeout a leader checks that a quorum
//    was active since the last check and steps down otherwise;
//  * ReadIndex (thesis §6.4; etcd ReadOnlySafe): the leader records its
//    commit index, confirms its leadership with a heartbeat round acknowledged
//    by a quorum, and the read is answered once applied ≥ that index. A
//    leader that has not yet committed an entry of its term holds reads back
//    until it has (etcd ≥ 3.5 pendingReadIndexMessages).
//
// A stalled Ready loop (`stall`, the `disk_stall` fault on an etcd member;
// etcd-io/etcd#12528, #15247): in etcd the raftNode goroutine
// (server/etcdserver/raft.go raftNode.start) handles each Ready — sends its
// messages, saves to the WAL, hands committed entries to the apply loop —
// and also ticks. When a WAL fdatasync blocks it, raft's own goroutine
// (raft/node.go node.run) still steps what arrives (recvc, propc) into the
// next Ready, which nobody takes. Here, while stalled: ticks do nothing (no
// heartbeats, no election timeouts, no CheckQuorum; last_tick stays),
// messages are stepped as usual but everything the member sends waits,
// committed entries are not applied, and the layer's stepped_down callback
// (etcd's updateLeadership, which Demotes the lessor, runs on a Ready's
// SoftState) waits too; at the stall's end, in order, the held sends and
// callbacks run and the committed entries are applied.
//
// Deviations from etcd raft are listed in docs/RAFT.md (simplified flow
// control, no snapshots or membership changes, no leadership transfer
// message; `campaign(true)` stands in for its MsgTimeoutNow).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/etcd/raft/history.hpp"
#include "models/etcd/raft/message.hpp"
#include "sim/rng.hpp"
#include "sim/simulation.hpp"

namespace fencesim::raft {

using sim::NodeId;
using namespace std::chrono_literals;

enum class Role : std::uint8_t { kFollower, kPreCandidate, kCandidate, kLeader };
const char* role_name(Role r);

/// Test-only switches, each breaking one rule, so that tests can show the
/// `raft_safety` checker catching the breakage. Never set outside tests.
struct Mutations {
  /// Grant votes without the §5.4.1 up-to-date-log check.
  bool disable_up_to_date_check = false;
  /// Commit any index a majority holds, whatever its term (breaks §5.4.2).
  bool disable_current_term_commit_rule = false;
  bool any() const { return disable_up_to_date_check || disable_current_term_commit_rule; }
};

struct Config {
  /// Every member's node, this one included; members[0] is the bootstrap
  /// leader. The order is the same on every member.
  std::vector<NodeId> members;
  /// Must be a whole multiple of `heartbeat` (E = election_timeout / heartbeat ≥ 1).
  sim::Duration election_timeout = 1s;
  sim::Duration heartbeat = 100ms;
  /// PreVote on (etcd ≥ 3.5 default). CheckQuorum is always on.
  bool pre_vote = true;
  /// Flow control: at most this many entries per AppendEntries (etcd limits
  /// by bytes, MaxSizePerMsg). ≥ 1.
  std::size_t max_entries_per_append = 64;
  /// The time one WAL fsync takes on each member's disk (see "WAL fsync"
  /// above); 0: persisting is free, messages leave at once.
  sim::Duration wal_fsync{0};
  Mutations mutations;
};

/// The persisted part of a member: what survives a crash.
struct Storage {
  Term term = 0;
  NodeId vote = sim::kNoNode;
  Index commit = 0;
  std::vector<Entry> log;  ///< log[0] is index 1

  Index last_index() const { return log.size(); }
  /// Term of the entry at `i`; 0 for index 0; nullopt past the end.
  std::optional<Term> term_at(Index i) const {
    if (i == 0) return Term{0};
    if (i > log.size()) return std::nullopt;
    return log[i - 1].term;
  }
  Term last_term() const { return log.empty() ? 0 : log.back().term; }
  const Entry& at(Index i) const { return log.at(i - 1); }
};

/// The answer to `read_index`. `ok`: the state machine has applied at least
/// `index`, a commit index that the leader confirmed with a quorum after the
/// read was asked, so reading it now is linearizable. Otherwise `error` says
/// why ("no leader", "leader changed") and `leader` names the leader this
/// member knows, if any.
struct ReadResult {
  bool ok = false;
  Index index = 0;
  std::string error;
  NodeId leader = sim::kNoNode;
};
using ReadCallback = std::function<void(const ReadResult&)>;

/// Hooks into the layer above. All run as node code of the member.
struct Callbacks {
  /// A committed entry, in index order, exactly once per incarnation of the
  /// member (after a restart the log is applied again from index 1). An empty
  /// `command` is a leader's empty entry.
  std::function<void(Index, Term, const Command& command)> apply;
  /// This member became leader of `term` (the etcd lessor Promotes here).
  std::function<void(Term)> became_leader;
  /// This member stopped being leader of `term` (not called on a crash;
  /// held while the member is stalled).
  std::function<void(Term)> stepped_down;
  /// The member restarted: reset the state machine; re-application follows.
  std::function<void()> restarted;
};

class RaftNode final : public sim::NodeBehaviour {
 public:
  /// `history` may be shared by the whole cluster (nullptr: keep none).
  /// With `attach`, installs itself as `node`'s behaviour. Throws
  /// std::invalid_argument on a bad configuration.
  RaftNode(sim::Node& node, Config config, RaftHistory* history = nullptr, bool attach = true);
  RaftNode(const RaftNode&) = delete;
  RaftNode& operator=(const RaftNode&) = delete;

  void set_callbacks(Callbacks c) { callbacks_ = std::move(c); }
  /// Bootstrap at time 0 (see the file comment); call once on every member,
  /// after `set_callbacks`.
  void start();

  // --- driving -------------------------------------------------------------
  void on_message(const sim::Message& m) override { (void)step(m); }
  void on_crash() override;
  void on_restart() override;
  /// Handles `m` if it is a RaftMessage; returns false for anything else.
  bool step(const sim::Message& m);

  // --- the layer above -----------------------------------------------------
  /// Appends `command` to the leader's log and starts replicating it; returns
  /// its index. Not the leader (or the member is down): nullopt, and
  /// `leader()` names the leader to forward to, if known. An accepted
  /// proposal may still be lost if this leader is deposed before it commits.
  /// An empty command is a bug (it is reserved for the leader's empty entry).
  std::optional<Index> propose(Command command);
  /// Asks for a linearizable read point (ReadIndex). On the leader: after a
  /// quorum confirms its leadership and the state machine caught up. On a
  /// follower: forwarded to its known leader, answered once this member has
  /// applied the leader's read index. No known leader: answered at once with
  /// ok = false. A leader cut off from its quorum never answers ok; its
  /// pending reads fail with "leader changed" when it steps down. Reads
  /// pending on a member that crashes are dropped silently.
  void read_index(ReadCallback done);
  /// Starts an election now, as etcd's Node.Campaign (MsgHup; with PreVote a
  /// pre-vote round first). `transfer`: as the target of an etcd leadership
  /// transfer (campaignTransfer) — no pre-vote, and voters ignore their
  /// leader lease. For tests and the layer above; a leader ignores it.
  void campaign(bool transfer = false);
  /// Blocks the member's Ready loop (see "A stalled Ready loop" above)
  /// until `end_stall`; a crash ends the stall and drops what it held.
  void stall();
  /// The fsync returned: what was held runs, in order. Not stalled: nothing.
  void end_stall();
  bool stalled() const { return vol_.stalled; }
  /// Runs `action` now, or, while the member is stalled, at the stall's
  /// end after what was held before it: how the layer above sends what
  /// etcd sends through a Ready (a follower's forwarded proposal).
  void after_stall(std::function<void()> action);

  // --- state ---------------------------------------------------------------
  Role role() const { return vol_.role; }
  bool is_leader() const { return vol_.role == Role::kLeader; }
  Term term() const { return store_.term; }
  NodeId vote() const { return store_.vote; }
  /// The leader this member knows of in its current term (kNoNode: none).
  NodeId leader() const { return vol_.lead; }
  Index commit() const { return store_.commit; }
  Index applied() const { return vol_.applied; }
  Index last_index() const { return store_.last_index(); }
  const Storage& storage() const { return store_; }
  const std::vector<Entry>& log() const { return store_.log; }
  /// The randomized election timeout currently in force, in ticks.
  int randomized_election_ticks() const { return vol_.randomized_ticks; }
  /// Ticks since the last reset or the last message from the leader.
  int election_elapsed() const { return vol_.election_elapsed; }
  /// The member's monotonic reading at its latest tick, or at start or
  /// restart before the first one (etcd raftNode.latestTickTs: set to
  /// time.Now() by newRaftNode and by every raftNode.tick(), etcdserver/
  /// raft.go @ v3.4.34 / server/etcdserver/raft.go @ v3.5.16). Volatile.
  sim::Time last_tick() const { return vol_.last_tick; }
  sim::Node& node() const { return node_; }
  const Config& config() const { return config_; }
  std::size_t quorum() const { return config_.members.size() / 2 + 1; }

 private:
  struct Progress {
    Index match = 0;
    Index next = 1;
    bool recent_active = false;
  };
  struct ReadRequest {
    std::uint64_t id = 0;  ///< leader-local id, sent as heartbeat context
    Index index = 0;       ///< the leader's commit index when it was asked
    std::set<NodeId> acks;
    sim::Time issued_at{0};
    NodeId from = sim::kNoNode;  ///< a follower that forwarded it, or kNoNode
    std::uint64_t remote_ctx = 0;
    ReadCallback done;
  };
  struct ReadWait {
    Index index = 0;
    sim::Time issued_at{0};
    ReadCallback done;
  };
  struct Forwarded {
    sim::Time issued_at{0};
    ReadCallback done;
  };
  /// Everything a crash loses.
  struct Volatile {
    Role role = Role::kFollower;
    NodeId lead = sim::kNoNode;
    Index applied = 0;
    int election_elapsed = 0;
    int heartbeat_elapsed = 0;
    int randomized_ticks = 0;
    sim::Time last_tick{0};
    std::map<NodeId, bool> votes;                  ///< (pre-)candidate: granted or not
    std::map<NodeId, Progress> progress;           ///< leader: per follower
    std::vector<ReadRequest> reads;                ///< leader: confirmations in flight
    std::vector<ReadRequest> reads_before_commit;  ///< leader: held until its term commits
    std::vector<ReadWait> read_waits;              ///< confirmed, waiting for apply
    std::map<std::uint64_t, Forwarded> forwarded;  ///< follower: sent to the leader
    std::uint64_t next_read_id = 1;
    sim::TimerId tick_timer;
    // WAL fsync (Config::wal_fsync > 0 only; all true times).
    sim::Time sync_started{-1};    ///< when the running (or last) fsync began
    sim::Time sync_busy_until{0};  ///< when it ends
    sim::Time sync_next_done{0};   ///< the end of the fsync queued after it (≤ busy_until: none)
    sim::Time hold_until{0};       ///< non-leader messages wait until this fsync has ended
    int held = 0;                  ///< messages waiting for an fsync
    Index synced = 0;              ///< the last index on disk (the leader's own match)
    // A stalled Ready loop (stall()).
    bool stalled = false;
    std::vector<std::function<void()>> stall_held;  ///< sends and callbacks, run in order at the end
  };

  // Roles (etcd becomeFollower/PreCandidate/Candidate/Leader).
  void reset(Term term);
  void become_follower(Term term, NodeId lead, const char* why);
  void become_pre_candidate();
  void become_candidate(bool transfer);
  void become_leader();
  void hup(bool transfer);
  void send_vote_requests(bool pre, bool transfer);
  void poll_and_maybe_win(NodeId from, bool granted, bool pre);

  // Ticks.
  void schedule_tick();
  void tick();
  void tick_election();
  void tick_heartbeat();
  void reset_randomized_timeout();
  bool quorum_active() const;

  // Messages.
  /// A message to fill in and send (built in its pooled block, not copied).
  std::shared_ptr<RaftMessage> new_message();
  /// Sends `m`; a non-leader holds it back while an fsync is pending.
  void send(NodeId to, std::shared_ptr<RaftMessage> m);
  /// The term, vote or log just changed: with wal_fsync, an fsync covers it.
  void persist();
  /// The leader's own match: its last index, or with wal_fsync the last synced one.
  Index own_match() const;
  void step_leader(NodeId from, const RaftMessage& m);
  void step_candidate(NodeId from, const RaftMessage& m);
  void step_follower(NodeId from, const RaftMessage& m);
  void handle_vote(NodeId from, const RaftMessage& m);
  void handle_append(NodeId from, const RaftMessage& m);
  void handle_heartbeat(NodeId from, const RaftMessage& m);
  void send_append(NodeId to);
  void broadcast_append();
  void broadcast_heartbeat(std::uint64_t context);
  bool up_to_date(Index last_index, Term last_term) const;

  // Log and commit.
  void append_local(Entry e);
  void maybe_commit();
  void commit_to(Index c);
  void apply_committed();
  bool committed_in_current_term() const;

  // Reads.
  void start_read(ReadRequest r);
  void release_reads(std::uint64_t up_to_id);
  void answer_waiting_reads();
  void fail_leader_reads(const char* why);
  void fail_forwarded_reads(const char* why);

  void record(EventKind kind, Term term, Index index, const Command& command = {}, std::string_view detail = {});
  void trace(std::string_view kind, std::initializer_list<sim::TraceField> fields);

  sim::Node& node_;
  Config config_;
  RaftHistory own_history_;
  RaftHistory* history_;
  Callbacks callbacks_;
  sim::Rng rng_;
  int election_ticks_ = 0;            ///< E
  Storage store_;                     ///< persisted
  Volatile vol_;                      ///< lost on a crash
  std::vector<Index> match_scratch_;  ///< maybe_commit's buffer, reused (no state)
};

/// The member that leads the highest term among `members` that are up and
/// believe they lead (an old leader that has not heard of a newer term
/// still believes it; the role aliases etcd-leader and zk-leader name the
/// newest). `raft_of(m)` gives a member's RaftNode. nullopt: none leads.
template <class Members, class RaftOf>
std::optional<NodeId> highest_term_leader(const Members& members, RaftOf raft_of) {
  std::optional<NodeId> best;
  Term term = 0;
  for (const auto& m : members) {
    const RaftNode& r = raft_of(m);
    if (r.node().up() && r.is_leader() && (!best || r.term() > term)) {
      best = r.node().id();
      term = r.term();
    }
  }
  return best;
}

}  // namespace fencesim::raft
