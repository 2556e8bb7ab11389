// A lock design kept honest by a regression test: our service takes a Redis
// lease with a fencing token and our storage checks the token strictly.
// If someone drops the check (or the token), this test fails.
#include <gtest/gtest.h>
#include <fencesim/run.hpp>

using namespace std::chrono_literals;
using fencesim::Property;
using fencesim::Status;

// Built in code: the seed article's worked example with our settings.
fencesim::Scenario our_design() {
  fencesim::Scenario s;
  s.name = "our-allocator";
  s.duration = 60s;
  s.lock.service = fencesim::ServiceKind::kRedis;
  s.lock.ttl = s.lock.requested_ttl = 10s;
  s.lock.redis.replicas = 0;
  s.lock.redis.sentinels = 0;
  s.resource.kind = fencesim::ResourceKind::kFenced;
  s.resource.check = fencesim::FenceCheck::kStrict;
  s.resource.initial = 1000;
  for (auto [name, start] : {std::pair{"A", 0s}, std::pair{"B", 2s}}) {
    fencesim::ClientSpec c;
    c.name = name;
    c.start = start;
    c.renew_interval = s.lock.ttl / 3;
    c.workload.kind = fencesim::WorkloadKind::kSequenceAllocator;
    c.workload.block = 100;
    c.workload.work = 500ms;
    s.clients.push_back(c);
  }
  fencesim::FaultSpec gc;
  gc.kind = fencesim::FaultKind::kPause;
  gc.target = "A";
  gc.at = 200ms;
  gc.duration = 12s;
  gc.origin = "faults[0]";
  s.faults.push_back(gc);
  return s;
}

TEST(OurLockDesign, AGcPausePastTheTtlNeverAllocatesABlockTwice) {
  const fencesim::RunResult r = fencesim::run_scenario(our_design());
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
