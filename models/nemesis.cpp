#include "models/nemesis.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "models/faults.hpp"
#include "sim/rng.hpp"

namespace fencesim {

namespace {

/// Which of `n` distinct items are enabled: one draw in [0, 1] each, then,
/// if none is, one index in [0, n − 1]. n == 1: the one, no draw.
std::vector<bool> swarm_mask(sim::Rng& rng, std::size_t n) {
  std::vector<bool> on(n, n == 1);
  if (n <= 1) return on;
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    on[i] = rng.uniform(0, 1) == 1;
    any = any || on[i];
  }
  if (!any) on[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(n) - 1))] = true;
  return on;
}

}  // namespace

std::optional<SwarmSubset> draw_swarm(const Scenario& s) {
  if (!s.nemesis || !s.nemesis->swarm) return std::nullopt;
  const NemesisSpec& n = *s.nemesis;
  sim::Rng rng = sim::Rng::stream(s.seed, "nemesis_swarm");
  std::vector<FaultKind> distinct;
  for (FaultKind k : n.kinds) {
    if (std::find(distinct.begin(), distinct.end(), k) == distinct.end()) distinct.push_back(k);
  }
  const std::vector<bool> kind_on = swarm_mask(rng, distinct.size());
  const std::vector<bool> target_on = swarm_mask(rng, n.targets.size());
  SwarmSubset out;
  for (FaultKind k : n.kinds) {
    const auto i = static_cast<std::size_t>(std::find(distinct.begin(), distinct.end(), k) - distinct.begin());
    if (kind_on[i]) out.kinds.push_back(k);
  }
  for (std::size_t i = 0; i < n.targets.size(); ++i) {
    if (target_on[i]) out.targets.push_back(n.targets[i]);
  }
  return out;
}

std::vector<FaultSpec> draw_nemesis(const Scenario& s) {
  std::vector<FaultSpec> out;
  if (!s.nemesis) return out;
  NemesisSpec n = *s.nemesis;
  if (auto subset = draw_swarm(s)) {
    n.kinds = std::move(subset->kinds);
    n.targets = std::move(subset->targets);
  }
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
    } else if (info.whole_group) {
      // One cut around the whole group (FaultKindInfo::whole_group: a partition).
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

std::vector<FaultSpec> draw_fault_times(const Scenario& s) {
  std::vector<FaultSpec> out = s.faults;
  std::optional<sim::Rng> rng;
  for (FaultSpec& f : out) {
    if (!f.at_max) continue;
    if (!rng) rng = sim::Rng::stream(s.seed, "fault_times");
    if (*f.at_max > f.at) f.at = rng->uniform(f.at, *f.at_max);
    f.at_max.reset();
  }
  return out;
}

}  // namespace fencesim
