// A lock design kept honest by a regression test: our service takes a Redis
// lease with a fencing token and our storage checks the token strictly.
// If someone drops the check (or the token), this test fails.
#include <gtest/gtest.h>
#include <fencesim/builder.hpp>
#include <fencesim/run.hpp>

using namespace std::chrono_literals;
using fencesim::Property;
using fencesim::Status;

// Built in code: the seed article's worked example with our settings. The
// builder resolves what a file would leave to defaults (the TTL in effect,
// renew intervals of a third of it, each fault's origin).
fencesim::ScenarioBuilder our_design() {
  using namespace fencesim::workloads;
  return fencesim::ScenarioBuilder("our-allocator")
      .duration(60s)
      .redis(10s)  // a single primary
      .fenced(fencesim::FenceCheck::kStrict, /*fence_reads=*/false, /*initial=*/1000)
      .client("A", allocator(100, 500ms))
      .client("B", allocator(100, 500ms), [](fencesim::ClientSpec& c) { c.start = 2s; })
      .pause("A", 200ms, 12s);  // a GC pause longer than the TTL
}

TEST(OurLockDesign, AGcPausePastTheTtlNeverAllocatesABlockTwice) {
  const fencesim::RunResult r = fencesim::run_scenario(our_design().build());
  // A lease is not a lock: two holders overlap...
  EXPECT_EQ(fencesim::verdict(r, Property::kMutualExclusion).status, Status::kViolated);
  // ...but the fencing token keeps the allocator correct.
  EXPECT_EQ(fencesim::verdict(r, Property::kNoStaleWrite).status, Status::kHolds)
      << fencesim::verdict(r, Property::kNoStaleWrite).summary;
  EXPECT_EQ(fencesim::verdict(r, Property::kNoLostUpdate).status, Status::kHolds);
  EXPECT_EQ(r.metrics.writes_rejected, 1);
}

TEST(OurLockDesign, TheScenarioFileVersionMeetsItsExpectations) {
  const fencesim::LoadResult loaded = fencesim::load_scenario_file(EXAMPLE_DIR "/our-allocator.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error->to_string();
  const fencesim::RunResult r = fencesim::run_scenario(*loaded.scenario);
  EXPECT_TRUE(r.all_met) << fencesim::render_summary(*loaded.scenario, r, {"our-allocator.json", false});
}

TEST(OurLockDesign, AMistakeInTheDesignIsRefusedWithTheWordsAFileWouldGet) {
  const fencesim::ScenarioBuilder bad = our_design().client("C", fencesim::workloads::counter(1s),
                                                            [](fencesim::ClientSpec& c) { c.renew_interval = 0s; });
  try {
    fencesim::run_scenario(bad.build());
    FAIL() << "an invalid scenario ran";
  } catch (const fencesim::InvalidScenario& e) {
    EXPECT_EQ(e.problem.path, "clients[2].renew_interval");
    EXPECT_EQ(e.problem.message, "must be greater than zero, got \"0s\"");
  }
}
