// models/etcd/raft/safety.hpp — the `raft_safety` property.
//
// Reads a RaftHistory (history.hpp) and checks, in the order things
// happened, the guarantees of the Raft paper's Figure 3:
//
//  * Election Safety: at most one leader per term;
//  * State Machine Safety / Log Matching as seen from outside: every member
//    applies the same command (and term) at the same index, and applies
//    indexes in order 1, 2, 3, … within each incarnation;
//  * no committed entry lost or changed: once an entry (index i, term t) is
//    committed anywhere, every later commit or apply of index i anywhere is
//    that entry, and no member removes an entry at or below its own commit
//    index from its log;
//  * linearizable reads: a ReadIndex answered ok is at least every index
//    whose commit was recorded before the read was asked.
//
// The verdict tells the first counterexample in words: time, member, term,
// index, and the earlier fact it contradicts.
//
//   raft::SafetyVerdict v = raft::check_raft_safety(history);
//   if (!v.holds) std::cout << v.summary << "\n";  // then v.story, line by line
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/etcd/raft/history.hpp"

namespace fencesim::raft {

struct SafetyVerdict {
  bool holds = true;
  /// Which guarantee broke: "election safety", "state machine safety",
  /// "apply order", "committed entry lost", "linearizable read".
  std::string rule;
  std::string summary;             ///< one line
  std::vector<std::string> story;  ///< the counterexample, step by step
  std::optional<sim::Time> at;     ///< true time of the violating event
  std::uint64_t checked = 0;       ///< events examined
};

SafetyVerdict check_raft_safety(const RaftHistory& h);

}  // namespace fencesim::raft
