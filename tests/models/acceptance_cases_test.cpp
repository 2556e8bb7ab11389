// The acceptance cases of shared/cases (c01–c06), built in C++ through the
// fluent helper, with the verdicts of their `expect` blocks. They tell the
// stories of the seed article and of public incident reports.
#include <gtest/gtest.h>

#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using P = Property;
constexpr Status kHolds = Status::kHolds;
constexpr Status kViolated = Status::kViolated;

ScenarioBuilder worked_example(bool fenced) {
  ScenarioBuilder b(fenced ? "c02" : "c01");
  b.duration(60s).redis(10s);
  if (fenced) {
    b.fenced(FenceCheck::kStrict, false, 1000);
  } else {
    b.unfenced(1000);
  }
  return b.client("A", allocator(100, 500ms))
      .client("B", allocator(100, 500ms), [](ClientSpec& c) { c.start = 2s; })
      .pause("A", 200ms, 12s);
}

TEST(AcceptanceCases, C01WorkedExampleUnfencedAllocatesTheSameBlockTwice) {
  const RunResult r = worked_example(false).run();
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kViolated);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kViolated);
  EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds);
  // Both clients wrote 1100: the block 1000..1099 was claimed twice.
  int wrote_1100 = 0;
  for (const ResourceOpRecord& op : r.history.resource_ops) {
    if (op.write && op.accepted && op.value == 1100) ++wrote_1100;
  }
  EXPECT_EQ(wrote_1100, 2);
}

TEST(AcceptanceCases, C02WorkedExampleFencedRejectsTheLateWriteWithTheLowerToken) {
  const RunResult r = worked_example(true).run();
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
  EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds);
  EXPECT_EQ(r.metrics.writes_rejected, 1);
  bool a_rejected = false;
  for (const ResourceOpRecord& op : r.history.resource_ops) {
    if (op.write && op.client == "A") a_rejected = !op.accepted && op.token == 1;
  }
  EXPECT_TRUE(a_rejected);
}

TEST(AcceptanceCases, C03ServerWallClockJumpExpiresTheLeaseEarly) {
  const RunResult r = ScenarioBuilder("c03")
                          .duration(30s)
                          .redis(20s)
                          .unfenced(0)
                          .client("A", allocator(10, 6s))
                          .client("B", allocator(10, 100ms), [](ClientSpec& c) { c.start = 1s; })
                          .clock_jump("redis-0", 3s, 25s)
                          .run();
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kViolated);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kViolated);
  EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds);
  // A's lease ended at the jump, 17 s before its TTL.
  ASSERT_FALSE(r.history.grants.empty());
  const auto end = r.history.lease_ends.at(r.history.grants.front().value);
  EXPECT_EQ(end.at, 3s);
}

TEST(AcceptanceCases, C04SentinelFailoverReusesATokenButTheStrictCheckSavesTheResource) {
  const RunResult r = ScenarioBuilder("c04")
                          .duration(40s)
                          .redis(30s, 2, 3)
                          .redis_spec([](RedisSpec& s) {
                            s.replication_delay = 1s;
                            s.down_after = 2s;
                          })
                          .fenced(FenceCheck::kStrict)
                          .client("A", allocator(10, 8s))
                          .client("B", allocator(10, 100ms), [](ClientSpec& c) { c.start = 100ms; })
                          .crash("redis-primary", 300ms)
                          .run();
  EXPECT_EQ(status(r, P::kTokenMonotonic), kViolated);
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
  ASSERT_EQ(r.history.grants.size(), 2u);
  EXPECT_EQ(r.history.grants[0].token, r.history.grants[1].token);
  EXPECT_EQ(r.history.grants[1].server, "redis-1");  // equal offsets: the lowest index wins
}

TEST(AcceptanceCases, C05StarvedRenewalLosesTheLeaseWhileTheHolderStillWrites) {
  const RunResult r = ScenarioBuilder("c05")
                          .duration(30s)
                          .redis(5s)
                          .unfenced(0)
                          .client("A", allocator(4, 12s))
                          .client("B", allocator(4, 200ms), [](ClientSpec& c) { c.start = 1s; })
                          .slow("A", 1s, 4s, 10s)
                          .run();
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kViolated);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kViolated);
  // A learns of the loss only after the slowness ends, by a refused renewal.
  ASSERT_GE(r.history.lease_losses, 1);
  bool refused = false;
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.client == "A" && b.end_reason == "renewal refused") refused = *b.end >= 11s;
  }
  EXPECT_TRUE(refused);
}

TEST(AcceptanceCases, C06ResourceRebuiltWithoutItsTokenLetsTheStaleHolderThrough) {
  const RunResult r = ScenarioBuilder("c06")
                          .duration(30s)
                          .redis(4s)
                          .fenced(FenceCheck::kStrict)
                          .client("A", counter(2s))
                          .client("B", counter(200ms), [](ClientSpec& c) { c.start = 1s; })
                          .pause("A", 500ms, 10s)
                          .counter_reset("resource", 6s, 0)
                          .run();
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kViolated);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kViolated);
  EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds);
}

TEST(AcceptanceCases, C06WithoutTheResetTheStaleWriteIsRejected) {
  // The same story without the migration: the check holds. This keeps the
  // c06 test honest — it is the reset that lets the stale token through.
  const RunResult r = ScenarioBuilder("c06-control")
                          .duration(30s)
                          .redis(4s)
                          .fenced(FenceCheck::kStrict)
                          .client("A", counter(2s))
                          .client("B", counter(200ms), [](ClientSpec& c) { c.start = 1s; })
                          .pause("A", 500ms, 10s)
                          .run();
  EXPECT_EQ(status(r, P::kNoStaleWrite), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
}

TEST(AcceptanceCases, SameScenarioAndSeedGiveTheSameTraceFingerprint) {
  const RunResult a = worked_example(true).run();
  const RunResult b = worked_example(true).run();
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_FALSE(a.trace.events().empty());
}

}  // namespace
}  // namespace fencesim::testing
