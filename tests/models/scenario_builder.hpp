// tests/models/scenario_builder.hpp — the public fencesim/builder.hpp for the
// model tests, plus two helpers to read verdicts:
//
//   auto r = ScenarioBuilder("worked-example").redis(10s).client("A", allocator(100, 500ms)).run();
//   EXPECT_EQ(status(r, Property::kNoStaleWrite), Status::kHolds) << verdict_of(r, Property::kNoStaleWrite).summary;
#pragma once

#include <functional>
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
/// `client`'s iteration `index`.
inline const IterationRecord& iteration(const RunResult& r, const std::string& client, int index) {
  for (const IterationRecord& it : r.history.iterations) {
    if (it.client == client && it.index == index) return it;
  }
  throw std::out_of_range("no iteration");
}
/// A client tweak that sets clients[].library, then `more`.
inline std::function<void(ClientSpec&)> with_library(ClientLibrary lib, std::function<void(ClientSpec&)> more = {}) {
  return [lib, more](ClientSpec& c) {
    c.library = lib;
    if (more) more(c);
  };
}

}  // namespace fencesim::testing
