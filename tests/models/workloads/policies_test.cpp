// The client policies (check_lease_before_write, on_lease_loss,
// lease_loss_after), the leader workload, CAS retries and expect.metrics,
// in whole runs built in code (docs/FORMAT.md "Client policies",
// "Workloads", "Metric expectations").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/checkers/metric_expect.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using namespace std::chrono_literals;

/// The outcomes of client `name`'s iterations, in order.
std::vector<std::string> outcomes(const RunResult& r, const std::string& name) {
  std::vector<std::string> out;
  for (const IterationRecord& it : r.history.iterations) {
    if (it.client == name) out.push_back(it.outcome);
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

/// The worked example, unfenced: A paused 12 s past its 10 s lease.
ScenarioBuilder worked_example(const std::function<void(ClientSpec&)>& a_policy = {}) {
  ScenarioBuilder b("policies");
  b.duration(60s).settle(20s).redis(10s).unfenced(1000);
  b.client("A", allocator(100, 500ms), a_policy);
  b.client("B", allocator(100, 500ms), [](ClientSpec& c) { c.start = 2s; });
  b.pause("A", 200ms, 12s);
  return b;
}

TEST(CheckLeaseBeforeWrite, AbandonsTheWriteAfterAPausePastTheMargin) {
  const RunResult without = worked_example().run();
  EXPECT_EQ(status(without, Property::kNoStaleWrite), Status::kViolated);
  const RunResult with = worked_example([](ClientSpec& c) { c.check_lease_before_write = 1s; }).run();
  ASSERT_EQ(outcomes(with, "A").size(), 1u);
  EXPECT_TRUE(starts_with(outcomes(with, "A")[0], "abandoned before the write: 12.2s since")) << outcomes(with, "A")[0];
  EXPECT_EQ(status(with, Property::kNoStaleWrite), Status::kHolds) << verdict_of(with, Property::kNoStaleWrite).summary;
  EXPECT_EQ(status(with, Property::kNoLostUpdate), Status::kHolds);
}

TEST(CheckLeaseBeforeWrite, WritesWithinTheMargin) {
  // No fault: 500 ms of work is far below 10 s − 1 s.
  ScenarioBuilder b("policies");
  b.duration(30s).redis(10s).unfenced();
  b.client("A", counter(500ms, 3), [](ClientSpec& c) { c.check_lease_before_write = 1s; });
  const RunResult r = b.run();
  for (const std::string& o : outcomes(r, "A")) EXPECT_TRUE(starts_with(o, "ok: wrote")) << o;
}

TEST(CheckLeaseBeforeWrite, AMarginOfTheWholeTtlAbandonsEveryWriteAndIsNoted) {
  ScenarioBuilder b("policies");
  b.duration(30s).redis(10s).unfenced();
  b.client("A", counter(100ms, 2), [](ClientSpec& c) { c.check_lease_before_write = 10s; });
  const Scenario s = b.build();
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes.back().find("check_lease_before_write margin 10s is not below the lease TTL 10s"),
            std::string::npos)
      << s.notes.back();
  const RunResult r = b.run();
  for (const std::string& o : outcomes(r, "A")) EXPECT_TRUE(starts_with(o, "abandoned before the write")) << o;
  EXPECT_EQ(r.metrics.writes_accepted, 0);
}

/// etcd-holder-isolated: A's session ends while its job runs, then it writes.
ScenarioBuilder isolated_etcd_holder(LeaseLossPolicy policy) {
  ScenarioBuilder b("policies");
  b.duration(45s).settle(15s).etcd(3s).fenced();
  b.client("A", counter(6s, 3), [policy](ClientSpec& c) { c.on_lease_loss = policy; });
  b.client("B", counter(500ms, 10), [](ClientSpec& c) { c.start = 1s; });
  b.partition(1s, {{"A"}, {"etcd"}}, 10s);
  return b;
}

// clientv3 (lease.go deadlineLoop, v3.4.3 to v3.5.16) finds a passed
// deadline on a 1 s tick that started with the client's first KeepAlive, so
// A's session (deadline: grant reply at about 4 ms + 3 s) ends at the tick
// at about 4.004 s, not at 3.004 s, after the leader's lessor revoked the
// lease (3.5 s check) and B was granted: the two beliefs overlap, as on the
// real etcd 3.4.23 stack (docs/CONFORMANCE.md).
TEST(EtcdSession, EndsAtClientv3sOnceASecondDeadlineCheckNotAtTheDeadline) {
  const RunResult r = isolated_etcd_holder(LeaseLossPolicy::kContinue).run();
  const BeliefRecord* a = nullptr;
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.client == "A" && a == nullptr) a = &b;
  }
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->end.has_value());
  EXPECT_EQ(a->end_reason, "session ended: session deadline passed (found by clientv3's 1 s deadline check)");
  EXPECT_GT(*a->end, Time{4s});  // the tick after the deadline
  EXPECT_LT(*a->end, Time{4s + 100ms});
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
}

TEST(OnLeaseLoss, ContinueWritesAfterTheSessionEndedAndTheMetricsSayIt) {
  const RunResult r = isolated_etcd_holder(LeaseLossPolicy::kContinue).run();
  EXPECT_EQ(r.metrics.writes_after_belief_ended, 1);
  ASSERT_TRUE(r.metrics.first_write_after_belief.has_value());
  const WriteAfterBelief& w = *r.metrics.first_write_after_belief;
  EXPECT_EQ(w.client, "A");
  EXPECT_TRUE(starts_with(w.end_reason, "session ended")) << w.end_reason;
  EXPECT_GT(w.sent, w.belief_end);
  EXPECT_FALSE(w.accepted);  // the fence rejected it
}

TEST(OnLeaseLoss, AbortStopsTheIterationBeforeItsNextStep) {
  const RunResult r = isolated_etcd_holder(LeaseLossPolicy::kAbort).run();
  EXPECT_EQ(r.metrics.writes_after_belief_ended, 0);
  EXPECT_FALSE(r.metrics.first_write_after_belief.has_value());
  ASSERT_FALSE(outcomes(r, "A").empty());
  EXPECT_EQ(outcomes(r, "A")[0],
            "stopped: the lease was lost (session ended: session deadline passed (found by clientv3's 1 s deadline "
            "check))");
}

/// A leader cut off from redis-0 (but not from the store) at 5 s for 40 s.
ScenarioBuilder cut_off_leader(std::optional<Duration> lease_loss_after) {
  WorkloadSpec leader;
  leader.kind = WorkloadKind::kLeader;
  leader.work = 1s;
  leader.iterations = 40;
  ScenarioBuilder b("policies");
  b.duration(90s).settle(20s).redis(10s).fenced(FenceCheck::kMonotonic);
  const auto policy = [lease_loss_after](ClientSpec& c) { c.lease_loss_after = lease_loss_after; };
  b.client("A", leader, policy);
  WorkloadSpec standby = leader;
  standby.iterations = 20;
  b.client("B", standby, [policy](ClientSpec& c) {
    c.start = 1s;
    policy(c);
  });
  b.partition(5s, {{"A"}, {"redis"}}, 40s);
  return b;
}

TEST(Leader, KeepsTheLockAcrossWritesAndWritesEveryWorkInterval) {
  const RunResult r = cut_off_leader(std::nullopt).run();
  // One iteration per write; A acquired once and then kept the lock.
  int a_iterations = 0;
  Time previous{-1};
  for (const IterationRecord& it : r.history.iterations) {
    if (it.client != "A" || it.index > 10) continue;
    ++a_iterations;
    if (previous >= Time{0}) {
      EXPECT_GE(it.start - previous, Duration{1s}) << it.index;
    }
    previous = it.start;
  }
  EXPECT_EQ(a_iterations, 11);
  const auto a_beliefs = std::count_if(r.history.beliefs.begin(), r.history.beliefs.end(),
                                       [](const BeliefRecord& b) { return b.client == "A"; });
  EXPECT_EQ(a_beliefs, 1);  // it never learned that it lost the lease
}

TEST(LeaseLossAfter, WithoutItACutOffLeaderKeepsWorkingBesideTheNewOne) {
  const RunResult r = cut_off_leader(std::nullopt).run();
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
  EXPECT_GE(r.metrics.longest_overlap, Duration{10s});
  EXPECT_GE(r.metrics.writes_rejected, 20);
}

TEST(LeaseLossAfter, WithItTheClientGivesTheLeaseUpBeforeTheServiceExpiresIt) {
  const RunResult r = cut_off_leader(8s).run();
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kHolds) << verdict_of(r, Property::kMutualExclusion).summary;
  EXPECT_EQ(r.metrics.writes_rejected, 0);
  bool gave_up = false;
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.client == "A" && b.end_reason == "no acquire or renewal succeeded for 8s (lease_loss_after)") gave_up = true;
  }
  EXPECT_TRUE(gave_up);
}

TEST(CasRetries, AConflictIsReReadAndReApplied) {
  ScenarioBuilder b("policies");
  b.duration(40s).settle(15s).no_lock().cas();
  b.client("A", counter(500ms));
  b.client("B", counter(200ms, 7), [](ClientSpec& c) { c.start = 1s; });
  b.pause("A", 200ms, 5s);
  const RunResult r = b.run();
  ASSERT_EQ(outcomes(r, "A").size(), 1u);
  EXPECT_EQ(outcomes(r, "A")[0], "ok: wrote 5 (after 1 retry)");
  EXPECT_EQ(status(r, Property::kNoLostUpdate), Status::kHolds);
}

TEST(CasRetries, ZeroRetriesFailsAtTheFirstConflict) {
  ScenarioBuilder b("policies");
  b.duration(40s).settle(15s).no_lock().cas();
  WorkloadSpec a = counter(500ms);
  a.retries = 0;
  b.client("A", a);
  b.client("B", counter(200ms, 7), [](ClientSpec& c) { c.start = 1s; });
  b.pause("A", 200ms, 5s);
  const RunResult r = b.run();
  ASSERT_EQ(outcomes(r, "A").size(), 1u);
  EXPECT_EQ(outcomes(r, "A")[0], "write rejected: version 0 != 4");
}

// Issue #35, defect 7: three identical CAS clients with a fixed latency
// conflict at the same instants. With a fixed retry_interval they stay in
// lockstep and the same client loses every tie until its 10 retries run out;
// with the default equal-jitter backoff (drawn from each client's own
// stream) the ties break and every iteration succeeds, for every seed tried.
RunResult three_identical_cas_clients(RetryBackoff backoff, std::uint64_t seed) {
  ScenarioBuilder b("cas-contention");
  b.seed(seed).duration(60s).settle(15s).no_lock().cas().latency(1ms, 1ms);
  for (const char* name : {"A", "B", "C"}) {
    WorkloadSpec w = counter(100ms, 10, 100ms);
    w.retry_backoff = backoff;
    b.client(name, w);
  }
  return b.run();
}

TEST(CasRetries, ThreeIdenticalClientsStarveOneWithAFixedIntervalNotWithJitter) {
  const RunResult fixed = three_identical_cas_clients(RetryBackoff::kFixed, 1);
  EXPECT_EQ(status(fixed, Property::kProgress), Status::kViolated);
  EXPECT_NE(verdict_of(fixed, Property::kProgress).summary.find("(after 10 retries)"), std::string::npos)
      << verdict_of(fixed, Property::kProgress).summary;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const RunResult jitter = three_identical_cas_clients(RetryBackoff::kJitter, seed);
    EXPECT_EQ(status(jitter, Property::kProgress), Status::kHolds)
        << "seed " << seed << ": " << verdict_of(jitter, Property::kProgress).summary;
    EXPECT_EQ(jitter.metrics.writes_accepted, 30) << "seed " << seed;
  }
}

TEST(MetricExpectations, BoundsAreCheckedAndCountInAllMet) {
  ScenarioBuilder b = worked_example();
  const Scenario base = b.build();
  Scenario s = base;
  s.expect_metrics["writes_rejected"] = MetricBound{1, std::nullopt};               // unfenced: 0 rejections
  s.expect_metrics["longest_overlap"] = MetricBound{std::nullopt, 60'000'000'000};  // 60 s
  const RunResult r = run_scenario(s);
  ASSERT_EQ(r.metric_verdicts.size(), 2u);
  EXPECT_EQ(r.metric_verdicts[0].metric, "longest_overlap");  // name order
  EXPECT_TRUE(r.metric_verdicts[0].duration);
  EXPECT_TRUE(r.metric_verdicts[0].met);
  EXPECT_EQ(r.metric_verdicts[1].metric, "writes_rejected");
  EXPECT_EQ(r.metric_verdicts[1].value, 0);
  EXPECT_FALSE(r.metric_verdicts[1].met);
  EXPECT_EQ(bound_text(r.metric_verdicts[1]), "min 1");
  EXPECT_EQ(bound_text(r.metric_verdicts[0]), "max 60s");
  EXPECT_FALSE(r.all_met);
  EXPECT_TRUE(run_scenario(base).all_met);
}

TEST(MetricExpectations, EveryMetricHasAValue) {
  const RunResult r = worked_example().run();
  for (const MetricInfo& i : metric_infos()) {
    EXPECT_EQ(find_metric(i.name), &i);
    EXPECT_GE(metric_value(r.metrics, i), 0) << i.name;
  }
  EXPECT_EQ(find_metric("writes_rejectd"), nullptr);
}

TEST(MetricExpectations, AnUnknownNameOrAnEmptyOrInvertedBoundIsRefused) {
  Scenario s = worked_example().build();
  s.expect_metrics["writes_rejectd"] = MetricBound{1, std::nullopt};
  auto p = validate_scenario(s);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->path, "expect.metrics.writes_rejectd");
  EXPECT_NE(p->to_string().find("did you mean \"writes_rejected\"?"), std::string::npos) << p->to_string();
  s.expect_metrics.clear();
  s.expect_metrics["lease_losses"] = MetricBound{};
  ASSERT_TRUE(validate_scenario(s).has_value());
  s.expect_metrics["lease_losses"] = MetricBound{3, 2};
  p = validate_scenario(s);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->path, "expect.metrics.lease_losses.max");
}

TEST(Policies, NeedALockService) {
  ScenarioBuilder b("policies");
  b.duration(10s).no_lock().cas();
  b.client("A", counter(100ms), [](ClientSpec& c) { c.on_lease_loss = LeaseLossPolicy::kAbort; });
  const auto p = b.validate();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->path, "clients[0].on_lease_loss");
}

}  // namespace
}  // namespace fencesim::testing
