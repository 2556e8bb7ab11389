// models/checkers/queue_progress.cpp — progress for the queue design: every
// message not yet deleted when the last fault ends has its effect applied
// and is deleted within the settle time; dead-lettered messages are named.
// Definition: docs/FORMAT.md "Progress and settle".
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include <map>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"
#include "models/validate.hpp"

namespace fencesim {

using namespace checkers;

Verdict check_queue_progress(const History& h, const CheckContext& ctx, sim::Duration settle) {
  Verdict v;
  v.property = Property::kProgress;
  if (ctx.any_fault && !ctx.last_fault_end) {
    v.summary = "a fault never ends, so no message is checked (holds vacuously)";
    return v;
  }
  const Time after = ctx.any_fault ? *ctx.last_fault_end : Time{0};
  const Time deadline = after + settle;
  const std::string since =
      ctx.any_fault ? fmt::format("after the last fault ended at {}", format_time(after)) : "from the start";
  if (deadline > ctx.run_end) {
    v.summary = fmt::format(
        "the settle time {} {} runs past the end of the run, so no message is checked (holds "
        "vacuously)",
        sim::format_duration(settle), since);
    return v;
  }
  // Each message's first accepted effect (one pass over the operations, not one per message).
  std::map<std::string, Time> first_applied;
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (!op.write || !op.accepted || op.message_id.empty()) continue;
    const auto [it, added] = first_applied.emplace(op.message_id, op.at);
    if (!added && op.at < it->second) it->second = op.at;
  }
  std::vector<std::string> dead;
  const MessageRecord* first_bad = nullptr;
  for (const MessageRecord& m : h.messages) {
    if (m.dead_lettered) dead.push_back(m.id);
    if (m.deleted && *m.deleted <= after) continue;
    ++v.checked;
    const auto first = first_applied.find(m.id);
    const bool applied = first != first_applied.end() && (!m.deleted || first->second <= *m.deleted);
    // An idempotent ledger's "already applied" answer means an earlier effect counted.
    if (!(applied && m.deleted && *m.deleted <= deadline) && first_bad == nullptr) first_bad = &m;
  }
  if (first_bad == nullptr) {
    v.summary = v.checked == 0 ? fmt::format("every message was deleted {} (holds vacuously)",
                                             ctx.any_fault ? "before the last fault ended" : "at the start")
                               : fmt::format("{} not yet deleted {} {} applied and deleted within {}",
                                             v.checked == 1 ? std::string("the 1 message")
                                                            : fmt::format("all {} messages", v.checked),
                                             since, v.checked == 1 ? "was" : "were", sim::format_duration(settle));
    return v;
  }
  const MessageRecord& m = *first_bad;
  v.status = Status::kViolated;
  v.at = deadline;
  std::string why;
  if (m.dead_lettered) {
    why = fmt::format("it was moved to the dead-letter queue at {} after {} receives", format_time(*m.dead_lettered),
                      m.receives);
  } else if (m.deleted) {
    why = fmt::format("it was deleted only at {}", format_time(*m.deleted));
  } else {
    why = fmt::format("it was never deleted ({} receives)", m.receives);
  }
  v.summary = fmt::format("{} was not applied and deleted within the settle time {} {}: {}", m.id,
                          sim::format_duration(settle), since, why);
  if (!dead.empty()) v.summary += "; dead-lettered: " + join_names(dead);
  std::vector<std::pair<Time, std::string>> steps;  // in true-time order
  if (ctx.any_fault) steps.emplace_back(after, fmt::format("{}: the last fault ended", format_time(after)));
  for (const GrantRecord& g : h.grants) {
    if (g.value.rfind(m.id + "#", 0) == 0) {
      steps.emplace_back(g.at, fmt::format("{}: {} handed {} to {} (receipt {})", format_time(g.at), g.server, m.id,
                                           g.client, g.value));
    }
  }
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (op.write && op.message_id == m.id) {
      steps.emplace_back(op.at, fmt::format("{}: {} {} {}'s effect of {} (receipt {}){}", format_time(op.at), op.copy,
                                            op.accepted ? "applied" : "refused", op.client, m.id, op.receipt,
                                            op.accepted ? "" : ": " + op.reason));
    }
  }
  if (m.dead_lettered) {
    steps.emplace_back(*m.dead_lettered,
                       fmt::format("{}: queue moved {} to the dead-letter queue", format_time(*m.dead_lettered), m.id));
  }
  if (m.deleted) {
    steps.emplace_back(*m.deleted, fmt::format("{}: {} deleted {}", format_time(*m.deleted), m.deleted_by, m.id));
  }
  steps.emplace_back(deadline, fmt::format("{}: the settle time ended", format_time(deadline)));
  v.story = story_in_time_order(std::move(steps));
  return v;
}

}  // namespace fencesim
