// models/checkers/no_stale_write.cpp — no_stale_write: every accepted write comes from a lease still live at the
// service. Definition: docs/FORMAT.md "Properties".
#include <fmt/format.h>

#include <algorithm>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"

namespace fencesim {

using namespace checkers;

namespace {
/// "t: redis-0 granted the lock to B (token 2)"; the queue: "t: queue handed msg-0 to B (receipt msg-0#2)".
std::string grant_line(const GrantRecord& g, const ResourceOpRecord& op) {
  if (!op.message_id.empty()) {
    return fmt::format("{}: {} handed {} to {} (receipt {}, receive count {})", format_time(g.at), g.server,
                       op.message_id, g.client, g.value, g.token.value_or(0));
  }
  return fmt::format("{}: {} granted {} to {} ({})", format_time(g.at), g.server, lock_text(g.lock), g.client,
                     token_text(g.token));
}
}  // namespace

Verdict check_no_stale_write(const History& h) {
  Verdict v;
  v.property = Property::kNoStaleWrite;
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (!op.write || !op.accepted) continue;
    ++v.checked;
    auto it = h.lease_ends.find(op.lease_value);
    if (it == h.lease_ends.end() || !(op.at > it->second.at)) continue;
    v.status = Status::kViolated;
    v.at = op.at;
    const bool queue = !op.message_id.empty();
    v.summary = queue
                    ? fmt::format(
                          "{} applied the effect of {} at {} on {} with receipt {}, after its visibility "
                          "ended at {}",
                          op.client, op.message_id, format_time(op.at), op.copy, op.receipt, format_time(it->second.at))
                    : fmt::format("{} wrote {} at {} on {} with {}, after its lease ended at {}", op.client, op.value,
                                  format_time(op.at), op.copy, token_text(op.token), format_time(it->second.at));
    std::vector<std::string> story;
    Time from{0};
    if (const GrantRecord* g = grant_of(h, op.lease_value)) {
      story.push_back(grant_line(*g, op));
      from = g->at;
    }
    add_faults_between(h, from, op.at, op.client, story);
    story.push_back(fmt::format("{}: {}'s {} ended at the service: {}", format_time(it->second.at), op.client,
                                queue ? "receipt " + op.receipt : std::string("lease"), it->second.reason));
    for (const GrantRecord& g : h.grants) {
      if (g.at >= it->second.at && g.at <= op.at && g.value != op.lease_value && g.lock == op.lock &&
          (op.message_id.empty() || g.value.rfind(op.message_id + "#", 0) == 0)) {
        story.push_back(grant_line(g, op));
        break;
      }
    }
    if (queue) {
      story.push_back(fmt::format("{}: {} applied {}'s effect of {} (receipt {}, {}; application {})",
                                  format_time(op.at), op.copy, op.client, op.message_id, op.receipt,
                                  token_text(op.token), op.value));
    } else {
      story.push_back(fmt::format("{}: {} accepted {}'s write of {} ({}; marks after: last_written {}, last_seen {}{})",
                                  format_time(op.at), op.copy, op.client, op.value, token_text(op.token),
                                  op.last_written, op.last_seen,
                                  op.marks.empty() ? "" : ", " + named_marks_text(op.marks)));
    }
    number(story);
    v.story = std::move(story);
    return v;
  }
  v.summary = v.checked == 1 ? std::string("the one accepted write came from a live lease")
                             : fmt::format("every one of {} accepted writes came from a live lease", v.checked);
  return v;
}

}  // namespace fencesim
