// Swarm testing (docs/FORMAT.md "Nemesis"): on a nemesis whose crashes mask
// its pauses, a sweep with "swarm": true reaches no_lost_update far more
// often than the fixed mix of the same kinds and targets.
#include <gtest/gtest.h>

#include <string>

#include "fencesim/sweep.hpp"

namespace {

fencesim::SweepResult sweep(bool swarm) {
  const fencesim::LoadResult r =
      fencesim::load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/tests/explore/swarm-crash-masks-pause.json");
  if (!r.ok()) throw std::runtime_error(r.error->to_string());
  fencesim::Scenario s = *r.scenario;
  s.nemesis->swarm = swarm;
  fencesim::SweepOptions opt;
  opt.seeds = {1, 300};
  opt.jobs = 2;
  opt.keep = fencesim::Keep::kNone;
  return fencesim::run_sweep(s, opt);
}

const fencesim::PropertyAggregate& lost_update(const fencesim::SweepResult& r) {
  for (const fencesim::PropertyAggregate& a : r.properties) {
    if (a.property == fencesim::Property::kNoLostUpdate) return a;
  }
  throw std::runtime_error("no no_lost_update aggregate");
}

TEST(Swarm, ReachesALostUpdateThatTheFixedMixMasks) {
  const fencesim::SweepResult fixed = sweep(false);
  const fencesim::SweepResult swarm = sweep(true);
  ASSERT_FALSE(fixed.error);
  ASSERT_FALSE(swarm.error);
  const fencesim::PropertyAggregate& f = lost_update(fixed);
  const fencesim::PropertyAggregate& w = lost_update(swarm);
  ASSERT_EQ(f.runs, 300u);
  ASSERT_EQ(w.runs, 300u);
  // Measured: 26/300 with the fixed mix, 67/300 with swarm.
  EXPECT_GT(w.violations, 2 * f.violations) << f.violations << " vs " << w.violations;
  EXPECT_GT(w.interval.low, f.interval.high) << "the 95 % intervals do not overlap";
}

}  // namespace
