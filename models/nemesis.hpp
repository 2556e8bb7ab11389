// models/nemesis.hpp — random faults drawn from the run's seed
// (docs/FORMAT.md "Nemesis").
//
//   std::vector<FaultSpec> extra = fencesim::draw_nemesis(scenario);
//   // append to scenario.faults before building the world
//
// The draw is a pure function of the scenario (its seed, duration, settle
// and nemesis block), so a run can be replayed, and a shrinker can drop
// single drawn faults and re-run with the rest as an explicit fault script.
//
// Draw order, from sim::Rng::stream(seed, "nemesis") — every draw below is
// rng.uniform(lo, hi), inclusive:
//
//   t = 0; last = duration − settle − max_duration
//   repeat:
//     1. gap: interval_min if interval_min == interval_max (no draw),
//             else uniform(interval_min, interval_max) in nanoseconds
//        t += gap; stop if t > last (no fault starts later than
//        settle + max_duration before the end of the run)
//     2. kind   = kinds[uniform(0, kinds.size() − 1)]
//     3. target = targets[uniform(0, targets.size() − 1)]
//     4. d      = uniform(1, max_duration / 1 ms) milliseconds
//     5. by kind (FaultKindInfo::draw in models/faults.cpp):
//          pause       duration = d
//          partition   isolate = {target}, duration = d (both directions);
//                      the fault itself keeps no target, as a faults[]
//                      partition has none
//          crash       restart_after = d
//          clock_jump  6. sign = uniform(0, 1); by = sign == 1 ? −d : d;
//                      clock = wall
//          clock_drift 6. ppm = uniform(−1000, 1000); duration = d
//          slow        delay = d, duration = max_duration
//     the fault starts at t; origin = "nemesis#<i>", i its 0-based
//     position in the result (report.json's nemesis_draws[i]).
//     A kind the nemesis cannot draw (hand-built scenarios only) draws
//     nothing: its gap, kind, target and d are used up, no fault is added.
//
// Each drawn FaultSpec is exactly what the loader makes of the same fault
// written as a faults[] entry (report.json's nemesis_draws writes it so),
// apart from its origin.
//
// Kinds, targets and the interval are those of the resolved NemesisSpec:
// targets already expanded to single nodes (role aliases such as
// "redis-primary" stay as they are and resolve when the fault fires).
// The loop also stops after Limits::kMaxFaults faults (the loader refuses a
// nemesis that could draw more, so this only guards hand-built scenarios),
// and draws nothing when kinds or targets are empty or the interval is not
// positive.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace fencesim {

/// Swarm testing (TigerBeetle's VOPR; Groce et al., "Swarm testing", ISSTA
/// 2012): with NemesisSpec::swarm, each run draws its faults only from a
/// random non-empty subset of the listed kinds and of the targets, so that
/// different seeds try different fault mixes instead of one fixed mix.
/// The subset comes from its own stream, sim::Rng::stream(seed,
/// "nemesis_swarm"), drawn before the nemesis stream is used (whose draws
/// are then made exactly as above, over the subset):
///
///   kinds: for each distinct kind, in the order of first appearance in
///          `kinds`, uniform(0, 1) == 1 enables it; if none is enabled,
///          the one at uniform(0, distinct − 1) is. The subset's list keeps
///          the entries of `kinds` whose kind is enabled, in order (so a
///          kind listed twice is still drawn twice as often as another).
///   targets: the same over the expanded targets (which are distinct).
///
/// With a single kind (or target) that one is always enabled, and nothing
/// is drawn for it.
struct SwarmSubset {
  std::vector<FaultKind> kinds;      ///< the enabled entries of NemesisSpec::kinds, in order
  std::vector<std::string> targets;  ///< the enabled targets, in order
  bool operator==(const SwarmSubset&) const = default;
};

/// The subset this run's seed enables; nullopt without a nemesis or without
/// swarm.
std::optional<SwarmSubset> draw_swarm(const Scenario& s);

/// The nemesis faults of `s`, in start order; empty when s.nemesis is unset.
/// With swarm, drawn over draw_swarm's subset.
std::vector<FaultSpec> draw_nemesis(const Scenario& s);

/// The scripted faults of `s` (s.faults, in file order) with every start
/// given as a range (FaultSpec::at_max) drawn: one draw per such fault, in
/// file order, rng.uniform(at, at_max) in whole nanoseconds from
/// sim::Rng::stream(seed, "fault_times"); the result's at_max are all unset.
/// A stream of its own, so that files without ranges draw nothing and the
/// nemesis and network draws of every file stay as they were.
std::vector<FaultSpec> draw_fault_times(const Scenario& s);

}  // namespace fencesim
