// ScenarioBuilder::etcd / etcd_spec resolve a scenario as the loader does
// (docs/FORMAT.md "Grants and tokens", "Lease end at the service"), and the acceptance case c07 built
// with them gives the verdicts of shared/cases/c07-etcd-pauses-fenced-reads.json;
// a leader's power loss runs as its process crash does.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using P = Property;

TEST(EtcdBuilder, ATtlBelowTheMinimumIsRaisedToCeilOfOneAndAHalfElectionTimeoutsWithANote) {
  const Scenario s = ScenarioBuilder("raised")
                         .etcd(1s)
                         .etcd_spec([](EtcdSpec& e) { e.election_timeout = 3s, e.heartbeat = 500ms; })
                         .client("A", counter(100ms))
                         .build();
  EXPECT_EQ(s.lock.service(), ServiceKind::kEtcd);
  EXPECT_EQ(s.lock.requested_ttl, 1s);
  EXPECT_EQ(s.lock.ttl, 5s);  // ceil(1.5 × 3 s)
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("raised from 1s to 5s"), std::string::npos) << s.notes[0];
  // The default renew_interval is a third of the TTL in effect.
  EXPECT_EQ(s.clients[0].renew_interval, Duration{5s} / 3);
}

TEST(EtcdBuilder, ATtlAtOrAboveTheMinimumIsKeptAndAnExplicitRenewIntervalToo) {
  const Scenario s = ScenarioBuilder("kept")
                         .etcd(6s, 5)
                         .client("A", counter(100ms))
                         .client("B", counter(100ms), [](ClientSpec& c) { c.renew_interval = 500ms; })
                         .build();
  EXPECT_EQ(s.lock.ttl, 6s);
  EXPECT_EQ(s.lock.etcd().nodes, 5);
  EXPECT_TRUE(s.notes.empty());
  EXPECT_EQ(s.clients[0].renew_interval, 2s);
  EXPECT_EQ(s.clients[1].renew_interval, 500ms);
}

TEST(EtcdBuilder, AnEtcdTtlThatIsNotAWholeNumberOfSecondsIsRefused) {
  const ScenarioBuilder b = ScenarioBuilder("fraction").etcd(2500ms).client("A", counter(100ms));
  const auto problem = b.validate();
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->to_string(),
            "at lock.ttl: an etcd lease TTL must be a whole number of seconds, got 2.5s (did you mean \"3s\"?)");
  EXPECT_THROW(b.run(), InvalidScenario);
  EXPECT_THROW(b.run(), std::invalid_argument);  // InvalidScenario is one
}

TEST(EtcdBuilder, RedisScenariosAreResolvedAsBefore) {
  const Scenario s = ScenarioBuilder("redis").redis(1500ms).client("A", counter(100ms)).build();
  EXPECT_EQ(s.lock.ttl, 1500ms);
  EXPECT_EQ(s.clients[0].renew_interval, 500ms);
  EXPECT_TRUE(s.notes.empty());
}

TEST(EtcdBuilder, C07ThreeWorkersUnderRandomPausesKeepEveryIncrementWithFencedReadsAndWrites) {
  // shared/cases/c07-etcd-pauses-fenced-reads.json, built in C++.
  NemesisSpec n;
  n.kinds = {FaultKind::kPause};
  n.targets = {"worker-0", "worker-1", "worker-2"};
  n.interval_min = n.interval_max = 3s;
  n.max_duration = 8s;
  ScenarioBuilder b("c07");
  b.seed(3).duration(120s).etcd(3s, 3).fenced(FenceCheck::kStrict, /*fence_reads=*/true, 0).nemesis(n);
  for (int k = 0; k < 3; ++k) b.client("worker-" + std::to_string(k), counter(800ms, 20, 300ms));
  const RunResult r = b.run();
  EXPECT_EQ(status(r, P::kNoLostUpdate), Status::kHolds) << verdict_of(r, P::kNoLostUpdate).summary;
  EXPECT_EQ(status(r, P::kTokenMonotonic), Status::kHolds);
  EXPECT_EQ(status(r, P::kRaftSafety), Status::kHolds) << verdict_of(r, P::kRaftSafety).summary;
  // The pauses do bite: two holders at once, and rejected stale operations.
  EXPECT_EQ(status(r, P::kMutualExclusion), Status::kViolated);
  EXPECT_GT(r.metrics.writes_rejected + r.metrics.reads_rejected, 0);
  EXPECT_EQ(r.metrics.iterations, 60);
}

TEST(EtcdPowerLoss, ALeaderThatLosesPowerLosesNothingItAcknowledged) {
  // etcd fsyncs its WAL before it acknowledges: a crash with power_loss of
  // the leader runs exactly as a process crash (the same grants, tokens,
  // beliefs and verdicts; only the fault's own record says power loss).
  auto run = [](bool power_loss) {
    ScenarioBuilder b("etcd-power-loss");
    b.duration(40s).etcd(3s, 3).fenced(FenceCheck::kStrict, false, 0);
    for (int k = 0; k < 2; ++k) b.client("worker-" + std::to_string(k), counter(300ms, 15, 200ms));
    FaultSpec f;
    f.kind = FaultKind::kCrash, f.target = "etcd-leader", f.at = 4s, f.restart_after = 2s, f.power_loss = power_loss;
    b.fault(f);
    return b.run();
  };
  const RunResult crash = run(false);
  const RunResult power = run(true);
  ASSERT_EQ(power.history.faults.size(), 1U);
  EXPECT_EQ(power.history.faults[0].detail, "power loss, restart after 2s");
  EXPECT_EQ(power.history.faults[0].skip_reason, "") << "the leader crashed";
  ASSERT_EQ(crash.history.grants.size(), power.history.grants.size());
  EXPECT_GT(power.history.grants.size(), 0U);
  for (std::size_t i = 0; i < crash.history.grants.size(); ++i) {
    EXPECT_EQ(crash.history.grants[i].at, power.history.grants[i].at) << i;
    EXPECT_EQ(crash.history.grants[i].token, power.history.grants[i].token) << i;
  }
  ASSERT_EQ(crash.verdicts.size(), power.verdicts.size());
  for (std::size_t i = 0; i < crash.verdicts.size(); ++i) {
    EXPECT_EQ(crash.verdicts[i].status, power.verdicts[i].status) << i;
  }
  EXPECT_EQ(status(power, P::kTokenMonotonic), Status::kHolds);
  EXPECT_EQ(status(power, P::kRaftSafety), Status::kHolds);
}

}  // namespace
}  // namespace fencesim::testing
