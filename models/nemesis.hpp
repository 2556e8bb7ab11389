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

#include <vector>

#include "models/scenario.hpp"

namespace fencesim {

/// The nemesis faults of `s`, in start order; empty when s.nemesis is unset.
std::vector<FaultSpec> draw_nemesis(const Scenario& s);

}  // namespace fencesim
