// models/etcd/raft/history.hpp — what the Raft members of one cluster did,
// as the `raft_safety` checker needs it.
//
// Every `RaftNode` of a cluster appends to one shared `RaftHistory` while the
// run goes on; the checker (safety.hpp) only reads it. Events are kept in the
// order they were recorded, which is true-time order (the simulation never
// goes back in time), so the first counterexample is the first event that
// breaks a property. Times are true simulated time (ns since the start).
//
// Besides the events, `RaftStats` counts how often the interesting things
// happened (elections, leader changes, log truncations, restarts, ...), so a
// randomized sweep can show that its faults really bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/etcd/raft/message.hpp"
#include "sim/time.hpp"

namespace fencesim::raft {

enum class EventKind : std::uint8_t {
  kBecameLeader,  ///< member became leader of `term`
  kSteppedDown,   ///< member stopped being leader of `term` (`detail` says why)
  kCommit,        ///< member's commit index reached `index`; entry (term, command)
  kApply,         ///< member applied `index` = (term, command) to its state machine
  kTruncate,      ///< member removed its log suffix from `index` on (detail: count);
                  ///< `commit` = its commit index at that moment
  kCrash,         ///< member crashed (volatile state lost)
  kRestart,       ///< member restarted; its state machine starts empty again
  kRead,          ///< a ReadIndex read answered ok at `index`; `issued_at` = when asked
};

const char* event_kind_name(EventKind k);

struct RaftEvent {
  sim::Time at{0};
  std::string member;
  Term term = 0;
  Index index = 0;
  Command command;
  Index commit = 0;               ///< kTruncate: the member's commit index
  std::uint64_t incarnation = 0;  ///< the member's incarnation (crash count)
  sim::Time issued_at{0};         ///< kRead: true time the read was asked
  std::string detail;
  EventKind kind = EventKind::kApply;  // last: the event fills two cache lines, no padding inside
};

/// Totals over a run (or, summed, over a sweep).
struct RaftStats {
  std::uint64_t pre_campaigns = 0;    ///< PreVote rounds started
  std::uint64_t elections = 0;        ///< real elections: a candidate raised its term
  std::uint64_t leaders_elected = 0;  ///< became-leader events (bootstrap not counted)
  std::uint64_t leader_changes = 0;   ///< a new term's leader differs from the previous leader
  std::uint64_t step_downs = 0;       ///< a leader stopped being leader (not by crashing)
  std::uint64_t check_quorum_step_downs = 0;
  std::uint64_t truncations = 0;  ///< log suffixes removed on a conflict (Figure 2, AppendEntries step 3)
  std::uint64_t entries_truncated = 0;
  std::uint64_t crashes = 0;
  std::uint64_t restarts = 0;
  std::uint64_t proposals = 0;  ///< commands a leader appended
  std::uint64_t reads_answered = 0;
  std::uint64_t votes_ignored_in_lease = 0;  ///< (pre-)votes dropped because a leader was heard recently
  /// Commits of an index whose entry is of an older term, decided by
  /// counting replicas: only possible with Mutations::disable_current_term_commit_rule.
  std::uint64_t old_term_commits_by_counting = 0;

  RaftStats& operator+=(const RaftStats& o);
};

class RaftHistory {
 public:
  std::vector<RaftEvent> events;
  RaftStats stats;
  /// Set false to keep only `stats` (long benchmark runs); the checker then
  /// has nothing to check.
  bool record_events = true;
  /// The member that most recently became leader (for `leader_changes`).
  std::string last_leader;

  void add(RaftEvent e) {
    if (record_events) events.push_back(std::move(e));
  }
};

}  // namespace fencesim::raft
