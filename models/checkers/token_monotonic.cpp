// models/checkers/token_monotonic.cpp — token_monotonic: tokens strictly increase in grant order.
// Definition: docs/FORMAT.md "Properties".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"

namespace fencesim {

using namespace checkers;

Verdict check_token_monotonic(const History& h) {
  Verdict v;
  v.property = Property::kTokenMonotonic;
  std::vector<const GrantRecord*> grants;
  for (const GrantRecord& g : h.grants) {
    if (g.token) grants.push_back(&g);
  }
  std::stable_sort(grants.begin(), grants.end(), [](const GrantRecord* a, const GrantRecord* b) {
    return a->at != b->at ? a->at < b->at : a->seq < b->seq;
  });
  // Per lock (lock.keys: each lock has its own counter; one lock: one entry).
  std::map<std::string, const GrantRecord*> best_of;
  for (const GrantRecord* g : grants) {
    ++v.checked;
    const GrantRecord*& best = best_of[g->lock];
    if (best != nullptr && !(*g->token > *best->token)) {
      v.status = Status::kViolated;
      v.at = g->at;
      // More than one lock: both grants are of g's lock, and the summary says which.
      v.summary = fmt::format("{} granted token {}{} to {} at {}, not above token {} granted to {} at {}", g->server,
                              *g->token, g->lock.empty() ? "" : " of lock " + g->lock, g->client, format_time(g->at),
                              *best->token, best->client, format_time(best->at));
      // Everything between the two grants, in true-time order.
      std::vector<std::pair<Time, std::string>> steps;
      steps.emplace_back(best->at, fmt::format("{}: {} granted {} to {} (token {})", format_time(best->at),
                                               best->server, lock_text(best->lock), best->client, *best->token));
      for (const FaultRecord& f : h.faults) {
        if (f.skipped || f.start < best->at || f.start > g->at) continue;
        steps.emplace_back(f.start, fault_line(f));
      }
      for (const NoteRecord& n : h.notes) {
        if (n.at >= best->at && n.at <= g->at) {
          steps.emplace_back(n.at, fmt::format("{}: {} {}", format_time(n.at), n.node, n.text));
        }
      }
      std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<std::string> story;
      for (auto& [t, line] : steps) story.push_back(std::move(line));
      story.push_back(fmt::format("{}: {} granted {} to {} (token {}): a token already handed out", format_time(g->at),
                                  g->server, lock_text(g->lock), g->client, *g->token));
      number(story);
      v.story = std::move(story);
      return v;
    }
    if (best == nullptr || *g->token > *best->token) best = g;
  }
  // More than one lock: per lock, named ("" is the one lock of a scenario without lock.keys).
  const bool named = !best_of.empty() && !best_of.begin()->first.empty();
  v.summary = best_of.size() > 1
                  ? fmt::format("{} grants, tokens strictly increasing for each of {} locks", v.checked, best_of.size())
              : named
                  ? fmt::format("{} grants, tokens strictly increasing in lock {}", v.checked, best_of.begin()->first)
                  : fmt::format("{} grants, tokens strictly increasing", v.checked);
  return v;
}

}  // namespace fencesim
