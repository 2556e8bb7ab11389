// Each checker on hand-built histories that hold and that break it. A
// checker that cannot fail is not a checker.
#include <gtest/gtest.h>

#include "models/checkers/checkers.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;

CheckContext ctx(sim::Duration end = 60s) {
  CheckContext c;
  c.run_end = end;
  return c;
}

ResourceOpRecord write(sim::Time at, std::string client, std::int64_t read, std::int64_t value, bool accepted,
                       std::string lease, std::optional<std::int64_t> token = std::nullopt) {
  ResourceOpRecord op;
  op.at = at;
  op.client = std::move(client);
  op.write = true;
  op.read_value = read;
  op.value = value;
  op.accepted = accepted;
  op.lease_value = std::move(lease);
  op.token = token;
  op.copy = "resource";
  return op;
}

TEST(MutualExclusion, HoldsForBeliefsThatOnlyTouch) {
  History h;
  auto a = h.begin_belief(0s, "A", "va", 1);
  h.end_belief(a, 5s, "release");
  auto b = h.begin_belief(5s, "B", "vb", 2);
  h.end_belief(b, 6s, "release");
  EXPECT_EQ(check_mutual_exclusion(h, ctx()).status, Status::kHolds);
}

TEST(MutualExclusion, BreaksWhenTwoClientsBelieveAtTheSameTrueTime) {
  History h;
  auto a = h.begin_belief(0s, "A", "va", 1);
  h.end_belief(a, 12s, "release");
  auto b = h.begin_belief(10s, "B", "vb", 2);
  h.end_belief(b, 11s, "release");
  const Verdict v = check_mutual_exclusion(h, ctx());
  EXPECT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.at, 10s);
  ASSERT_FALSE(v.story.empty());
  EXPECT_NE(v.summary.find("A and B"), std::string::npos);
}

TEST(MutualExclusion, ABeliefStillOpenAtTheEndRunsToTheEndOfTheRun) {
  History h;
  h.begin_belief(0s, "A", "va", 1);
  h.begin_belief(59s, "B", "vb", 2);
  EXPECT_EQ(check_mutual_exclusion(h, ctx(60s)).status, Status::kViolated);
}

TEST(MutualExclusion, OneClientsSuccessiveBeliefsNeverConflict) {
  History h;
  h.begin_belief(0s, "A", "v1", 1);
  h.begin_belief(1s, "A", "v2", 2);
  EXPECT_EQ(check_mutual_exclusion(h, ctx()).status, Status::kHolds);
}

TEST(NoStaleWrite, HoldsForAWriteBeforeTheLeaseEnded) {
  History h;
  h.lease_end(10s, "va", "expired", LeaseEndCause::kExpired);
  h.resource_ops.push_back(write(9s, "A", 0, 1, true, "va"));
  EXPECT_EQ(check_no_stale_write(h).status, Status::kHolds);
}

TEST(NoStaleWrite, BreaksForAnAcceptedWriteAfterTheLeaseEnded) {
  History h;
  h.grant(0s, "A", "va", 1, "redis-0");
  h.lease_end(10s, "va", "expired on redis-0 wall clock", LeaseEndCause::kExpired);
  h.resource_ops.push_back(write(12s, "A", 0, 1, true, "va", 1));
  const Verdict v = check_no_stale_write(h);
  EXPECT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.at, 12s);
  EXPECT_GE(v.story.size(), 3u);
}

TEST(NoStaleWrite, ARejectedLateWriteIsNoViolation) {
  History h;
  h.lease_end(10s, "va", "expired", LeaseEndCause::kExpired);
  h.resource_ops.push_back(write(12s, "A", 0, 1, false, "va", 1));
  EXPECT_EQ(check_no_stale_write(h).status, Status::kHolds);
}

TEST(TokenMonotonic, HoldsForStrictlyIncreasingTokens) {
  History h;
  h.grant(1s, "A", "v1", 1, "redis-0");
  h.grant(2s, "B", "v2", 2, "redis-0");
  EXPECT_EQ(check_token_monotonic(h).status, Status::kHolds);
}

TEST(TokenMonotonic, BreaksOnAReusedToken) {
  History h;
  h.grant(1s, "A", "v1", 1, "redis-0");
  h.grant(3s, "B", "v2", 1, "redis-1");
  const Verdict v = check_token_monotonic(h);
  EXPECT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.at, 3s);
}

TEST(TokenMonotonic, OrdersGrantsByServiceTimeNotByRecordingOrder) {
  History h;
  h.grant(3s, "B", "v2", 2, "redis-0");
  h.grant(1s, "A", "v1", 1, "redis-0");  // recorded later, granted earlier
  EXPECT_EQ(check_token_monotonic(h).status, Status::kHolds);
}

TEST(NoLostUpdate, HoldsForASerialHistory) {
  History h;
  h.resource_ops.push_back(write(1s, "A", 1000, 1100, true, "va"));
  h.resource_ops.push_back(write(2s, "B", 1100, 1200, true, "vb"));
  EXPECT_EQ(check_no_lost_update(h, 1000).status, Status::kHolds);
}

TEST(NoLostUpdate, BreaksWhenABlockIsAllocatedTwice) {
  History h;
  h.resource_ops.push_back(write(1s, "B", 1000, 1100, true, "vb"));
  h.resource_ops.push_back(write(2s, "A", 1000, 1100, true, "va"));
  const Verdict v = check_no_lost_update(h, 1000);
  EXPECT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.at, 2s);
}

TEST(NoLostUpdate, RejectedWritesDoNotCount) {
  History h;
  h.resource_ops.push_back(write(1s, "B", 1000, 1100, true, "vb"));
  h.resource_ops.push_back(write(2s, "A", 1000, 1100, false, "va"));
  EXPECT_EQ(check_no_lost_update(h, 1000).status, Status::kHolds);
}

IterationRecord iteration(std::string client, sim::Time start, std::optional<sim::Time> done) {
  IterationRecord it;
  it.client = std::move(client);
  it.start = start;
  it.done = done;
  it.success = done.has_value();
  it.outcome = done ? "ok" : "write rejected";
  return it;
}

TEST(Progress, ChecksOnlyIterationsAfterTheLastFaultWithTheSettleTimeLeft) {
  History h;
  h.iterations.push_back(iteration("A", 1s, std::nullopt));   // during the faults: not checked
  h.iterations.push_back(iteration("A", 20s, 21s));           // checked, ok
  h.iterations.push_back(iteration("B", 55s, std::nullopt));  // too late to judge
  CheckContext c = ctx(60s);
  c.any_fault = true;
  c.last_fault_end = 10s;
  const Verdict v = check_progress(h, c, 30s);
  EXPECT_EQ(v.status, Status::kHolds);
  EXPECT_EQ(v.checked, 1);
}

TEST(Progress, BreaksWhenAnIterationAfterTheFaultsNeverSucceeds) {
  History h;
  h.iterations.push_back(iteration("A", 20s, std::nullopt));
  CheckContext c = ctx(60s);
  c.any_fault = true;
  c.last_fault_end = 10s;
  EXPECT_EQ(check_progress(h, c, 30s).status, Status::kViolated);
}

TEST(Progress, BreaksWhenSuccessTakesLongerThanTheSettleTime) {
  History h;
  h.iterations.push_back(iteration("A", 20s, 51s));
  CheckContext c = ctx(90s);
  c.any_fault = true;
  c.last_fault_end = 10s;
  EXPECT_EQ(check_progress(h, c, 30s).status, Status::kViolated);
}

TEST(Progress, HoldsVacuouslyWhenAFaultNeverEnds) {
  History h;
  h.iterations.push_back(iteration("A", 20s, std::nullopt));
  CheckContext c = ctx(60s);
  c.any_fault = true;
  c.last_fault_end = std::nullopt;
  const Verdict v = check_progress(h, c, 30s);
  EXPECT_EQ(v.status, Status::kHolds);
  EXPECT_EQ(v.checked, 0);
}

TEST(Progress, WithNoFaultEveryIterationCountsAndNoFaultIsMentioned) {
  History h;
  h.iterations.push_back(iteration("A", 0s, 1s));
  h.iterations.push_back(iteration("B", 5s, std::nullopt));
  CheckContext c = ctx(60s);  // no fault: any_fault false, last_fault_end unset
  const Verdict v = check_progress(h, c, 30s);
  EXPECT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.checked, 2);
  EXPECT_NE(v.summary.find("(no fault ran)"), std::string::npos) << v.summary;
  EXPECT_EQ(v.summary.find("last fault"), std::string::npos) << v.summary;
  for (const std::string& line : v.story) EXPECT_EQ(line.find("last fault"), std::string::npos) << line;

  History ok;
  ok.iterations.push_back(iteration("A", 0s, 1s));
  EXPECT_EQ(check_progress(ok, c, 30s).summary, "the 1 iteration (no fault ran) succeeded within 30s");
}

TEST(Metrics, RenewalLatencyUsesTheNearestRank) {
  std::vector<sim::Duration> v;
  for (int i = 1; i <= 100; ++i) v.push_back(sim::Duration{i});
  EXPECT_EQ(nearest_rank(v, 50), sim::Duration{50});
  EXPECT_EQ(nearest_rank(v, 99), sim::Duration{99});
  EXPECT_EQ(nearest_rank(v, 100), sim::Duration{100});
  EXPECT_EQ(nearest_rank({sim::Duration{7}}, 99), sim::Duration{7});
  EXPECT_EQ(nearest_rank({}, 50), sim::Duration{0});
}

TEST(Metrics, TheHolderAuditFlagsABelievedHolderBelowLastSeen) {
  History h;
  h.begin_belief(0s, "A", "va", 1);
  h.audit_holders(5s, "resource", 2);
  ASSERT_EQ(h.audit.size(), 1u);
  EXPECT_EQ(h.audit[0].holder, "A");
  h.audit_holders(6s, "resource", 1);  // token 1 is not below 1
  EXPECT_EQ(h.audit.size(), 1u);
}

TEST(Metrics, LongestOverlapIsTheLongestTwoHolderInterval) {
  Scenario s;
  History h;
  auto a = h.begin_belief(0s, "A", "va", 1);
  h.end_belief(a, 12s, "release");
  auto b = h.begin_belief(10s, "B", "vb", 2);
  h.end_belief(b, 11s, "release");
  EXPECT_EQ(compute_metrics(s, h, ctx()).longest_overlap, 1s);
}

TEST(Metrics, AcquisitionLatencyRunsFromTheFirstAcquireRequestToTheGrantOfIterationsThatAcquired) {
  Scenario s;
  History h;
  // Latencies 10, 20, … 100 ms in some order, then two iterations that did
  // not acquire (no lock; a leader still holding it) and one that never got
  // its grant (crashed while acquiring): none of those three counts.
  for (int k : {3, 1, 4, 10, 5, 9, 2, 6, 8, 7}) {
    IterationRecord it;
    it.client = "A";
    it.start = k * sim::Duration{1s};
    it.acquire_sent = it.start;
    it.acquired = it.start + k * 10ms;
    h.iterations.push_back(it);
  }
  IterationRecord no_lock;
  no_lock.acquired = 3s;
  h.iterations.push_back(no_lock);
  h.iterations.push_back(no_lock);
  IterationRecord crashed;
  crashed.acquire_sent = 5s;
  h.iterations.push_back(crashed);
  const Metrics m = compute_metrics(s, h, ctx());
  EXPECT_EQ(m.acquire_latency.count, 10);
  EXPECT_EQ(m.acquire_latency.p50, 50ms);
  EXPECT_EQ(m.acquire_latency.p99, 100ms);
  EXPECT_EQ(m.acquire_latency.max, 100ms);
  EXPECT_EQ(compute_metrics(s, History{}, ctx()).acquire_latency.count, 0);
}

TEST(Metrics, AnUpdateIsLostWhenTheNextAcceptedWriteDidNotReadIt) {
  Scenario s;
  History h;
  // A and B both read 0: B's 1 overwrites A's 1 unseen (A's update lost);
  // C reads B's 1 and writes 2 (nothing lost); D's rejected write counts
  // for nothing; E read 0 again and overwrites C's 2 (C's update lost).
  h.resource_ops.push_back(write(1s, "A", 0, 1, true, "va"));
  h.resource_ops.push_back(write(2s, "B", 0, 1, true, "vb"));
  h.resource_ops.push_back(write(3s, "C", 1, 2, true, "vc"));
  h.resource_ops.push_back(write(4s, "D", 0, 1, false, "vd"));
  h.resource_ops.push_back(write(5s, "E", 0, 1, true, "ve"));
  const Metrics m = compute_metrics(s, h, ctx());
  EXPECT_EQ(m.writes_accepted, 4);
  EXPECT_EQ(m.updates_lost, 2);
  EXPECT_DOUBLE_EQ(updates_lost_fraction(m), 0.5);
}

TEST(Metrics, UpdatesAreComparedPerCopyAndNoneIsLostWithoutWrites) {
  Scenario s;
  History h;
  EXPECT_EQ(compute_metrics(s, h, ctx()).updates_lost, 0);
  EXPECT_DOUBLE_EQ(updates_lost_fraction(compute_metrics(s, h, ctx())), 0.0);
  ResourceOpRecord other = write(2s, "B", 0, 1, true, "vb");
  other.copy = "resource-replica-0";
  h.resource_ops.push_back(write(1s, "A", 0, 1, true, "va"));
  h.resource_ops.push_back(other);  // the first write at its own copy
  EXPECT_EQ(compute_metrics(s, h, ctx()).updates_lost, 0);
}

}  // namespace
}  // namespace fencesim
