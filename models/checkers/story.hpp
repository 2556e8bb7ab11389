// models/checkers/story.hpp — pieces the checkers share to tell a
// counterexample (internal to models/checkers).
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/checkers/verdict.hpp"

namespace fencesim::checkers {

/// "the lock" (one lock) or "lock row-1" (more than one lock, lock.keys).
std::string lock_text(const std::string& lock);
/// "row-1, row-2": lock names in the order given.
template <class Names>
std::string join_locks(const Names& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
/// "token 7" or "no token".
std::string token_text(const std::optional<std::int64_t>& t);
/// When a belief ended, or the end of the run.
inline Time belief_end(const BeliefRecord& b, const CheckContext& ctx) { return b.end ? *b.end : ctx.run_end; }
/// "A believed it held the lock (token 3, value v) from … until … (reason)";
/// "lock row-1" for "the lock" with lock.keys; "(end of run)" for a belief
/// still held; in the queue design "A believed it held msg-1 (receipt v,
/// receive count 2) from … until … (reason)".
std::string belief_line(const BeliefRecord& b, const CheckContext& ctx);
/// The grant of lease `value`, or nullptr.
const GrantRecord* grant_of(const History& h, const std::string& value);
/// "t: fault pause on A (for 12s)", for every fault that ran in [from, to]
/// on `node` (on any node if `node` is empty), and "t: A: <text>" for each
/// note a program client wrote (kind "program") in that span, in time order.
void add_faults_between(const History& h, Time from, Time to, const std::string& node, std::vector<std::string>& story);
/// "t: fault kind on target (detail)".
std::string fault_line(const FaultRecord& f);
/// Numbers the steps "1. …", "2. …".
void number(std::vector<std::string>& story);
/// The lines of `steps` (each with its true time) in time order, ties in
/// the order given, numbered.
std::vector<std::string> story_in_time_order(std::vector<std::pair<Time, std::string>> steps);

/// Calls f(i, j, start, end), i < j, for every pair of beliefs of two
/// different clients of the same lock (the same message, in the queue
/// design: BeliefRecord::message_id) that overlap in true time, with the interval
/// [start, end) they share (start < end). A sweep over the beliefs in order
/// of their start: O(n log n) plus the overlapping pairs, where comparing
/// every pair made checking a long run quadratic in its grants.
template <class F>
void for_each_overlapping_belief_pair(const History& h, const CheckContext& ctx, F f) {
  const std::size_t n = h.beliefs.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const Time sx = h.beliefs[x].start, sy = h.beliefs[y].start;
    return sx != sy ? sx < sy : x < y;
  });
  for (std::size_t p = 0; p < n; ++p) {
    const BeliefRecord& a = h.beliefs[order[p]];
    const Time a_end = belief_end(a, ctx);
    for (std::size_t q = p + 1; q < n; ++q) {
      const BeliefRecord& b = h.beliefs[order[q]];
      // Later beliefs start no earlier than b: none of them overlaps a.
      if (b.start >= a_end) break;
      const Time end = std::min(a_end, belief_end(b, ctx));
      if (b.start >= end || a.client == b.client || a.message_id != b.message_id || a.lock != b.lock) continue;
      f(std::min(order[p], order[q]), std::max(order[p], order[q]), b.start, end);
    }
  }
}

}  // namespace fencesim::checkers
