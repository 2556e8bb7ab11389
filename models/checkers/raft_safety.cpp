// models/checkers/raft_safety.cpp — raft_safety: one leader per term, logs
// and applied commands agree, no committed entry lost (Raft paper, Figure 3).
#include "models/checkers/raft_safety.hpp"

#include <fmt/format.h>

namespace fencesim {

Verdict raft_safety_verdict(const raft::SafetyVerdict& r) {
  Verdict v;
  v.property = Property::kRaftSafety;
  v.status = r.holds ? Status::kHolds : Status::kViolated;
  v.checked = static_cast<std::int64_t>(r.checked);
  v.at = r.at;
  v.summary = r.holds ? fmt::format(
                            "{} Raft events checked: one leader per term, logs and applied commands agree, no "
                            "committed entry lost",
                            r.checked)
                      : r.rule + ": " + r.summary;
  v.story = r.story;
  return v;
}

}  // namespace fencesim
