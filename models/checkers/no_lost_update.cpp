// models/checkers/no_lost_update.cpp — no_lost_update: accepted writes form a serial history from the initial value.
// Definition: docs/FORMAT.md "Properties".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"

namespace fencesim {

using namespace checkers;

Verdict check_no_lost_update(const History& h, std::int64_t initial) {
  Verdict v;
  v.property = Property::kNoLostUpdate;
  // Per row (more than one lock: each lock's row of the register; one lock: one row "").
  std::map<std::string, std::pair<std::int64_t, const ResourceOpRecord*>> rows;
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (!op.write || !op.accepted) continue;
    ++v.checked;
    const auto row = rows.try_emplace(op.lock, initial, nullptr).first;
    std::int64_t& current = row->second.first;
    const ResourceOpRecord*& prev = row->second.second;
    if (op.read_value != current) {
      v.status = Status::kViolated;
      v.at = op.at;
      v.summary = fmt::format("{} wrote {} from a read of {}, but the previous accepted write{} had left {}", op.client,
                              op.value, op.read_value, op.lock.empty() ? "" : " to row " + op.lock, current);
      std::vector<std::string> story;
      for (const ResourceOpRecord& r : h.resource_ops) {
        if (!r.write && r.accepted && r.client == op.client && r.iteration == op.iteration &&
            r.lease_value == op.lease_value && r.lock == op.lock && r.at <= op.at) {
          story.push_back(fmt::format("{}: {} read {} from {} ({})", format_time(r.at), r.client, r.value, r.copy,
                                      token_text(r.token)));
        }
      }
      if (prev != nullptr) {
        story.push_back(fmt::format("{}: {} accepted {}'s write of {} (read {}, {})", format_time(prev->at), prev->copy,
                                    prev->client, prev->value, prev->read_value, token_text(prev->token)));
      }
      story.push_back(
          fmt::format("{}: {} accepted {}'s write of {} computed from the stale read of {} ({}): the "
                      "update to {} is lost",
                      format_time(op.at), op.copy, op.client, op.value, op.read_value, token_text(op.token), current));
      number(story);
      v.story = std::move(story);
      return v;
    }
    current = op.value;
    prev = &op;
  }
  v.summary = v.checked == 1 ? std::string("1 accepted write forms a serial history")
                             : fmt::format("{} accepted writes form a serial history", v.checked);
  return v;
}

}  // namespace fencesim
