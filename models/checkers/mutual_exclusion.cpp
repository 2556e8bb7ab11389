// models/checkers/mutual_exclusion.cpp — mutual_exclusion: no two clients believe they hold the lock at once (true
// time). Definition: docs/FORMAT.md "Properties".
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"

namespace fencesim {

using namespace checkers;

Verdict check_mutual_exclusion(const History& h, const CheckContext& ctx) {
  Verdict v;
  v.property = Property::kMutualExclusion;
  v.checked = static_cast<std::int64_t>(h.beliefs.size());
  // The first overlap in true time between beliefs of two different clients.
  // Ties in start go to the pair that comes first in (i, j) order.
  std::optional<std::pair<std::size_t, std::size_t>> first;
  std::pair<std::size_t, std::size_t> first_ij;
  Time first_at = sim::kTimeMax;
  for_each_overlapping_belief_pair(h, ctx, [&](std::size_t i, std::size_t j, Time start, Time) {
    if (start < first_at || (start == first_at && std::make_pair(i, j) < first_ij)) {
      first_at = start;
      first_ij = {i, j};
      first = h.beliefs[i].start <= h.beliefs[j].start ? std::make_pair(i, j) : std::make_pair(j, i);
    }
  });
  if (!first) {
    // More than one lock: beliefs in two locks may overlap; none in one lock did.
    std::set<std::string> locks;
    for (const BeliefRecord& b : h.beliefs) {
      if (!b.lock.empty()) locks.insert(b.lock);
    }
    v.summary = locks.empty()
                    ? fmt::format("no two of {} beliefs overlapped", h.beliefs.size())
                    : fmt::format("no two of {} beliefs in the same lock overlapped ({} {})", h.beliefs.size(),
                                  locks.size() == 1 ? "in lock" : "over locks", join_locks(locks));
    return v;
  }
  const BeliefRecord& a = h.beliefs[first->first];
  const BeliefRecord& b = h.beliefs[first->second];
  const Time end = std::min(belief_end(a, ctx), belief_end(b, ctx));
  v.status = Status::kViolated;
  v.at = first_at;
  v.summary = fmt::format("{} and {} both believed they held {} from {} to {} ({})", a.client, b.client,
                          a.message_id.empty() ? lock_text(a.lock) : a.message_id, format_time(first_at),
                          format_time(end), sim::format_duration(end - first_at));
  std::vector<std::string> story;
  story.push_back(belief_line(a, ctx));
  add_faults_between(h, a.start, first_at, a.client, story);
  if (auto it = h.lease_ends.find(a.value); it != h.lease_ends.end()) {
    story.push_back(fmt::format("{}: {}'s {} ended at the service: {}", format_time(it->second.at), a.client,
                                a.message_id.empty() ? "lease" : "receipt " + a.value, it->second.reason));
  }
  story.push_back(belief_line(b, ctx));
  story.push_back(fmt::format("both beliefs overlapped from {} to {}", format_time(first_at), format_time(end)));
  number(story);
  v.story = std::move(story);
  return v;
}

}  // namespace fencesim
