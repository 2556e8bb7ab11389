// models/checkers/no_duplicate_effect.cpp — no_duplicate_effect: the queue
// design's ledger applied no message's effect more than once. Definition:
// docs/FORMAT.md "Properties".
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"

namespace fencesim {

using namespace checkers;

namespace {
std::string applied_line(const ResourceOpRecord& op) {
  return fmt::format("{}: {} applied the effect of {} from {} (receipt {}, {})", format_time(op.at), op.copy,
                     op.message_id, op.client, op.receipt, token_text(op.token));
}
}  // namespace

Verdict check_no_duplicate_effect(const History& h) {
  Verdict v;
  v.property = Property::kNoDuplicateEffect;
  std::map<std::string, const ResourceOpRecord*> first;  // message -> its first application
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (!op.write || !op.accepted || op.message_id.empty()) continue;
    ++v.checked;
    auto [it, fresh] = first.emplace(op.message_id, &op);
    if (fresh) continue;
    const ResourceOpRecord& a = *it->second;
    v.status = Status::kViolated;
    v.at = op.at;
    v.summary =
        fmt::format("the effect of {} was applied twice: by {} at {} (receipt {}) and by {} at {} (receipt {})",
                    op.message_id, a.client, format_time(a.at), a.receipt, op.client, format_time(op.at), op.receipt);
    // The steps in true-time order (ties: grants, faults, the end, effects).
    std::vector<std::pair<Time, std::string>> steps;
    for (const GrantRecord& g : h.grants) {
      if (g.value != a.receipt && g.value != op.receipt) continue;
      steps.emplace_back(g.at, fmt::format("{}: {} handed {} to {} (receipt {}, receive count {})", format_time(g.at),
                                           g.server, op.message_id, g.client, g.value, g.token.value_or(0)));
    }
    const Time from = steps.empty() ? a.at : std::min(steps.front().first, a.at);
    for (const FaultRecord& f : h.faults) {
      const Time end = f.end ? *f.end : f.start;
      if (!f.skipped && f.start <= op.at && end >= from) steps.emplace_back(f.start, fault_line(f));
    }
    if (auto e = h.lease_ends.find(a.receipt); e != h.lease_ends.end() && e->second.at <= op.at) {
      steps.emplace_back(e->second.at, fmt::format("{}: receipt {} ended at the queue: {}", format_time(e->second.at),
                                                   a.receipt, e->second.reason));
    }
    steps.emplace_back(a.at, applied_line(a));
    steps.emplace_back(op.at, applied_line(op));
    v.story = story_in_time_order(std::move(steps));
    return v;
  }
  v.summary =
      fmt::format("each of {} applied {} took effect once", first.size(), first.size() == 1 ? "message" : "messages");
  return v;
}

}  // namespace fencesim
