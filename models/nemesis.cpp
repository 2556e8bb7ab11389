#include "models/nemesis.hpp"

#include <string>

#include "models/faults.hpp"
#include "sim/rng.hpp"

namespace fencesim {

std::vector<FaultSpec> draw_nemesis(const Scenario& s) {
  std::vector<FaultSpec> out;
  if (!s.nemesis) return out;
  const NemesisSpec& n = *s.nemesis;
  const bool by_group = !n.groups.empty();
  if (n.kinds.empty() || (n.targets.empty() && !by_group) || n.interval_min <= Duration::zero() ||
      n.interval_max < n.interval_min || n.max_duration < std::chrono::milliseconds(1)) {
    return out;
  }
  sim::Rng rng = sim::Rng::stream(s.seed, "nemesis");
  const Duration last = s.duration - s.settle - n.max_duration;
  const std::int64_t max_ms = n.max_duration / std::chrono::milliseconds(1);
  const auto last_kind = static_cast<std::int64_t>(n.kinds.size()) - 1;
  const auto last_target = static_cast<std::int64_t>(by_group ? n.groups.size() : n.targets.size()) - 1;
  Duration t = Duration::zero();
  while (out.size() < static_cast<std::size_t>(Limits::kMaxFaults)) {
    const Duration gap =
        n.interval_min == n.interval_max ? n.interval_min : rng.uniform(n.interval_min, n.interval_max);
    t += gap;
    if (t > last) break;
    FaultSpec f;
    f.at = t;
    f.kind = n.kinds[static_cast<std::size_t>(rng.uniform(0, last_kind))];
    const auto pick = static_cast<std::size_t>(rng.uniform(0, last_target));
    const std::vector<std::string>* group = by_group ? &n.groups[pick] : nullptr;
    if (group != nullptr && group->empty()) continue;  // (validate_nemesis refuses an empty group)
    f.target = group != nullptr ? group->front() : n.targets[pick];
    const Duration d = std::chrono::milliseconds(rng.uniform(1, max_ms));
    const FaultKindInfo& info = fault_info(f.kind);
    // Not a nemesis kind (the loader refuses them): draw nothing for it.
    if (info.draw == nullptr) continue;
    info.draw(f, d, n.max_duration, rng);
    if (group == nullptr) {
      f.origin = "nemesis#" + std::to_string(out.size());
      out.push_back(std::move(f));
    } else if (f.kind == FaultKind::kPartition) {
      // One cut around the whole group.
      f.isolate = *group;
      f.origin = "nemesis#" + std::to_string(out.size());
      out.push_back(std::move(f));
    } else {
      // The same fault, drawn once, on every node of the group at once.
      for (const std::string& node : *group) {
        if (out.size() >= static_cast<std::size_t>(Limits::kMaxFaults)) break;
        FaultSpec g = f;
        g.target = node;
        g.origin = "nemesis#" + std::to_string(out.size());
        out.push_back(std::move(g));
      }
    }
  }
  return out;
}

}  // namespace fencesim
