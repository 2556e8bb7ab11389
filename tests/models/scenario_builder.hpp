// tests/models/scenario_builder.hpp — the public fencesim/builder.hpp for the
// model tests, plus two helpers to read verdicts:
//
//   auto r = ScenarioBuilder("worked-example").redis(10s).client("A", allocator(100, 500ms)).run();
//   EXPECT_EQ(status(r, Property::kNoStaleWrite), Status::kHolds) << verdict_of(r, Property::kNoStaleWrite).summary;
#pragma once

#include <stdexcept>

#include "include/fencesim/builder.hpp"  // (model tests link fencesim_models only)
#include "models/checkers/checkers.hpp"

namespace fencesim::testing {

using fencesim::ScenarioBuilder;
using namespace fencesim::workloads;

inline const Verdict& verdict_of(const RunResult& r, Property p) {
  for (const Verdict& v : r.verdicts) {
    if (v.property == p) return v;
  }
  throw std::out_of_range("no verdict");
}
inline Status status(const RunResult& r, Property p) { return verdict_of(r, p).status; }

}  // namespace fencesim::testing
