// The Redis lock client and the workload loop around it, told through whole
// worlds (ScenarioBuilder): renewal clocks, timeouts and retries, late
// replies, crashes and restarts, pauses, failover announcements, and the
// `renew` and `fencing` switches.
//
// Timing in these tests: the network latency is a fixed 1 ms. A client that
// starts at 0 sends its acquire at 0; redis-0 applies it at 1 ms; the client
// handles the grant (its belief starts) at 2 ms.
#include <gtest/gtest.h>

#include <set>

#include "tests/models/scenario_builder.hpp"

namespace sim {
inline void PrintTo(Duration d, std::ostream* os) { *os << format_duration(d); }
}  // namespace sim

namespace fencesim::testing {
namespace {

using P = Property;
constexpr Status kHolds = Status::kHolds;
constexpr Status kViolated = Status::kViolated;

std::vector<const BeliefRecord*> beliefs_of(const RunResult& r, const std::string& client) {
  std::vector<const BeliefRecord*> out;
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.client == client) out.push_back(&b);
  }
  return out;
}
std::vector<const RenewalRecord*> renewals_of(const RunResult& r, const std::string& client) {
  std::vector<const RenewalRecord*> out;
  for (const RenewalRecord& x : r.history.renewals) {
    if (x.client == client) out.push_back(&x);
  }
  return out;
}
std::vector<const IterationRecord*> iterations_of(const RunResult& r, const std::string& client) {
  std::vector<const IterationRecord*> out;
  for (const IterationRecord& x : r.history.iterations) {
    if (x.client == client) out.push_back(&x);
  }
  return out;
}
std::vector<const ResourceOpRecord*> ops_of(const RunResult& r, const std::string& client, bool write) {
  std::vector<const ResourceOpRecord*> out;
  for (const ResourceOpRecord& x : r.history.resource_ops) {
    if (x.client == client && x.write == write) out.push_back(&x);
  }
  return out;
}

// ------------------------------------------------------- renewal clocks --

RunResult renewal_clock_story(sim::ClockKind clock, Duration jump) {
  // TTL 9 s, so renewals are due every 3 s after the grant (handled at 2 ms).
  return ScenarioBuilder("renew-clock")
      .duration(20s)
      .redis(9s)
      .unfenced(0)
      .client("A", counter(8s), [clock](ClientSpec& c) { c.renew_clock = clock; })
      .clock_jump("A", 1s, jump)
      .run();
}

TEST(RenewalClock, AForwardWallJumpMakesAWallClockRenewalFireEarly) {
  const RunResult r = renewal_clock_story(sim::ClockKind::kWall, 2s);
  const auto renewals = renewals_of(r, "A");
  ASSERT_FALSE(renewals.empty());
  // Due when A's wall clock reads 3.002 s; after the +2 s step at 1 s it
  // reads that at true time 1.002 s.
  EXPECT_EQ(renewals[0]->first_sent, 1002ms);
  EXPECT_TRUE(renewals[0]->success);
}

TEST(RenewalClock, AForwardWallJumpLeavesAMonotonicClockRenewalOnTime) {
  const RunResult r = renewal_clock_story(sim::ClockKind::kMonotonic, 2s);
  const auto renewals = renewals_of(r, "A");
  ASSERT_FALSE(renewals.empty());
  EXPECT_EQ(renewals[0]->first_sent, 3002ms);
  // Each next renewal is due 3 s after the last successful reply (+2 ms).
  ASSERT_GE(renewals.size(), 2u);
  EXPECT_EQ(renewals[1]->first_sent, 3002ms + 2ms + 3s);
}

RunResult backward_jump_story(sim::ClockKind clock) {
  // TTL 6 s, renewals every 2 s. A works 10 s under the lock; B wants it
  // from 2 s on. A's wall clock is set back 10 s at 1 s.
  return ScenarioBuilder("renew-clock-backward")
      .duration(30s)
      .redis(6s)
      .unfenced(0)
      .client("A", counter(10s), [clock](ClientSpec& c) { c.renew_clock = clock; })
      .client("B", counter(100ms), [](ClientSpec& c) { c.start = 2s; })
      .clock_jump("A", 1s, -10s)
      .run();
}

TEST(RenewalClock, ABackwardWallJumpDelaysAWallClockRenewalPastTheTtlAndTwoClientsHoldTheLock) {
  const RunResult r = backward_jump_story(sim::ClockKind::kWall);
  // The renewal due at wall 2.002 s would come at true 12.002 s; A releases
  // before that, so it never renews at all.
  EXPECT_TRUE(renewals_of(r, "A").empty());
  ASSERT_FALSE(r.history.grants.empty());
  const auto& end = r.history.lease_ends.at(r.history.grants[0].value);
  EXPECT_EQ(end.at, 6001ms);
  EXPECT_EQ(end.reason, "expired on redis-0 wall clock");
  const auto b = beliefs_of(r, "B");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_GT(b[0]->start, 6001ms);
  EXPECT_LT(b[0]->start, 6200ms);
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kViolated);
}

TEST(RenewalClock, ABackwardWallJumpLeavesAMonotonicClockClientHoldingTheLock) {
  const RunResult r = backward_jump_story(sim::ClockKind::kMonotonic);
  const auto renewals = renewals_of(r, "A");
  ASSERT_GE(renewals.size(), 4u);
  EXPECT_EQ(renewals[0]->first_sent, 2002ms);
  for (const RenewalRecord* x : renewals) EXPECT_TRUE(x->success);
  const auto b = beliefs_of(r, "B");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_GT(b[0]->start, 10s) << "B waits for A's release";
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
}

// --------------------------------------------------- timeouts and retries --

TEST(ClientTimeouts, AnAcquireThatTimesOutIsDeletedByCompareAndDeleteAndRetriedAfterTheRetryInterval) {
  // redis-0 is slow until 1 s: the SET lands at 601 ms, its reply would
  // arrive at 1.202 s, after the 1 s command timeout.
  const RunResult r = ScenarioBuilder("acquire-timeout")
                          .duration(10s)
                          .redis(10s)
                          .unfenced(0)
                          .client("A", counter(100ms))
                          .slow("redis-0", 0s, 600ms, 1s)
                          .run();
  ASSERT_EQ(r.history.grants.size(), 2u);
  const GrantRecord& lost = r.history.grants[0];
  const GrantRecord& kept = r.history.grants[1];
  EXPECT_EQ(lost.at, 601ms);
  EXPECT_NE(lost.value, kept.value) << "each attempt uses a fresh value";
  // The compare-and-delete for the timed-out attempt's value, sent at the
  // timeout, removed it at once.
  ASSERT_EQ(r.history.lease_ends.count(lost.value), 1u);
  EXPECT_EQ(r.history.lease_ends.at(lost.value).at, 1001ms);
  EXPECT_EQ(r.history.lease_ends.at(lost.value).reason, "redis-0, the current primary, does not hold it");
  // The retry comes retry_interval (100 ms) after the timeout.
  EXPECT_EQ(kept.at, 1101ms);
  EXPECT_EQ(kept.token, 2) << "the timed-out attempt did consume a token";
  const auto a = beliefs_of(r, "A");
  ASSERT_EQ(a.size(), 1u) << "the late grant reply (1.202 s) was dropped";
  EXPECT_EQ(a[0]->value, kept.value);
  // Its reply leaves redis-0 at 1.101 s; whether it overtakes the late reply
  // of the first attempt (1.202 s) on the same connection is the engine's
  // slow/FIFO rule, not the client's.
  EXPECT_GE(a[0]->start, 1102ms);
  EXPECT_LE(a[0]->start, 1202ms);
  EXPECT_EQ(status(r, P::kProgress), kHolds);
}

TEST(ClientTimeouts, ARenewalThatTimesOutIsRetriedAndTheBeliefLastsThroughIt) {
  // A is cut off from 3 s to 5.5 s: the renewal sent at 3.335 s and its two
  // retries (at the 1 s timeouts) are lost; the third retry gets through.
  const RunResult r = ScenarioBuilder("renewal-retry")
                          .duration(20s)
                          .redis(10s)
                          .unfenced(0)
                          .client("A", counter(8s))
                          .isolate(3s, {"A"}, 2500ms)
                          .run();
  const auto renewals = renewals_of(r, "A");
  ASSERT_GE(renewals.size(), 1u);
  EXPECT_TRUE(renewals[0]->success);
  const Duration interval = Duration{10s} / 3;
  EXPECT_EQ(renewals[0]->first_sent, 2ms + interval);
  EXPECT_EQ(renewals[0]->replied, 2ms + interval + 3s + 2ms);
  const auto a = beliefs_of(r, "A");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]->end_reason, "release") << "a timeout is not an answer";
  EXPECT_EQ(r.history.lease_losses, 0);
  EXPECT_EQ(r.metrics.iterations_ok, 1);
}

TEST(ClientTimeouts, AReleaseThatTimesOutIsRetriedButTheBeliefEndsAtTheFirstSend) {
  // A's release goes out at about 2.006 s while A cannot reach redis-0
  // (2 s – 3.5 s); it is sent again at each 1 s timeout.
  const RunResult r = ScenarioBuilder("release-retry")
                          .duration(20s)
                          .redis(10s)
                          .unfenced(0)
                          .client("A", counter(2s))
                          .partition(2s, {{"A"}, {"redis-0"}}, 1500ms)
                          .run();
  const auto a = beliefs_of(r, "A");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_TRUE(a[0]->end.has_value());
  EXPECT_EQ(a[0]->end_reason, "release");
  EXPECT_LT(*a[0]->end, 2100ms);
  const auto& end = r.history.lease_ends.at(a[0]->value);
  // Third send at first + 2 s, applied 1 ms later; long before the TTL.
  EXPECT_EQ(end.at, *a[0]->end + 2s + 1ms);
  EXPECT_EQ(end.reason, "redis-0, the current primary, does not hold it");
}

TEST(ClientTimeouts, ResourceReadsAndWritesThatTimeOutAreNotRetried) {
  // The resource is slow (2 s per message) from 0.5 s to 3.5 s. Iteration 0
  // read before it and writes into it; iteration 1 reads into it.
  const RunResult r = ScenarioBuilder("resource-timeout")
                          .duration(20s)
                          .redis(10s)
                          .unfenced(0)
                          .client("A", counter(1s, 2, 1s))
                          .slow("resource", 500ms, 2s, 3s)
                          .run();
  const auto its = iterations_of(r, "A");
  ASSERT_EQ(its.size(), 2u);
  EXPECT_EQ(its[0]->outcome, "write timed out");
  EXPECT_FALSE(its[0]->success);
  EXPECT_EQ(its[1]->outcome, "read timed out");
  EXPECT_FALSE(its[1]->success);
  // One write and two reads reached the copy: nothing was sent twice. The
  // write was even accepted there — its reply came too late and was dropped.
  const auto writes = ops_of(r, "A", true);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_TRUE(writes[0]->accepted);
  EXPECT_EQ(ops_of(r, "A", false).size(), 2u);
  // Both iterations still released the lock.
  for (const BeliefRecord* b : beliefs_of(r, "A")) EXPECT_EQ(b->end_reason, "release");
  EXPECT_EQ(beliefs_of(r, "A").size(), 2u);
}

TEST(ClientTimeouts, ARejectedWriteEndsTheIterationAndTheWorkloadMovesOn) {
  const RunResult r = ScenarioBuilder("rejected-write")
                          .duration(30s)
                          .redis(4s)
                          .fenced(FenceCheck::kStrict)
                          .client("A", counter(2s, 2, 1s))
                          .client("B", counter(200ms), [](ClientSpec& c) { c.start = 1s; })
                          .pause("A", 500ms, 10s)
                          .run();
  const auto its = iterations_of(r, "A");
  ASSERT_EQ(its.size(), 2u);
  EXPECT_EQ(its[0]->outcome.rfind("write rejected", 0), 0u) << its[0]->outcome;
  EXPECT_TRUE(its[1]->success);
}

// ----------------------------------------------------- crashes and pauses --

TEST(ClientCrash, ACrashEndsTheBeliefAndARestartContinuesTheRemainingIterationsWithNewValues) {
  const RunResult r = ScenarioBuilder("client-crash")
                          .duration(30s)
                          .redis(4s)
                          .unfenced(0)
                          .client("A", counter(2s, 3, 500ms))
                          .crash("A", 1s, 1s)
                          .run();
  const auto its = iterations_of(r, "A");
  ASSERT_EQ(its.size(), 3u);
  EXPECT_EQ(its[0]->index, 0);
  EXPECT_EQ(its[0]->outcome, "crashed");
  EXPECT_EQ(its[1]->index, 1);
  EXPECT_EQ(its[1]->start, 2s) << "the restarted workload starts the next iteration at once";
  EXPECT_TRUE(its[1]->success);
  EXPECT_EQ(its[2]->index, 2);
  EXPECT_TRUE(its[2]->success);

  const auto a = beliefs_of(r, "A");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0]->end, std::optional<Time>(1s));
  EXPECT_EQ(a[0]->end_reason, "crash");
  std::set<std::string> values;
  for (const BeliefRecord* b : a) values.insert(b->value);
  EXPECT_EQ(values.size(), 3u) << "a new session with new values";
  // The crashed session's key stayed at the service until its TTL: the
  // restarted client had to wait for it like anyone else.
  EXPECT_EQ(r.history.lease_ends.at(a[0]->value).at, 4001ms);
  EXPECT_GT(a[1]->start, 4001ms);
  EXPECT_EQ(r.history.grants[1].token, 2);
}

TEST(ClientCrash, ACrashWhileWaitingForTheLockLeavesNoBelief) {
  const RunResult r = ScenarioBuilder("client-crash-waiting")
                          .duration(30s)
                          .redis(4s)
                          .unfenced(0)
                          .client("A", counter(3s))
                          .client("B", counter(100ms, 2, 100ms), [](ClientSpec& c) { c.start = 500ms; })
                          .crash("B", 1s, 500ms)
                          .run();
  // The iteration the crash interrupted is not run again: B's second and
  // last iteration runs after the restart.
  const auto b = beliefs_of(r, "B");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_GT(b[0]->start, 3s) << "B only ever held the lock after A released it";
  EXPECT_EQ(b[0]->end_reason, "release");
  const auto its = iterations_of(r, "B");
  ASSERT_EQ(its.size(), 2u);
  EXPECT_EQ(its[0]->outcome, "crashed");
  EXPECT_FALSE(its[0]->acquired.has_value());
  EXPECT_EQ(its[1]->index, 1);
  EXPECT_TRUE(its[1]->success);
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
}

TEST(ClientCrash, AClientThatRestartsExactlyAtItsStartTimeRunsOneWorkload) {
  // The restart (a fault) and the client's start fall on the same instant:
  // the workload must start once, not twice.
  const RunResult r = ScenarioBuilder("client-restart-at-start")
                          .duration(20s)
                          .redis(4s)
                          .unfenced(0)
                          .client("B", counter(100ms, 2, 500ms), [](ClientSpec& c) { c.start = 5s; })
                          .crash("B", 2s, 3s)
                          .run();
  const auto its = iterations_of(r, "B");
  ASSERT_EQ(its.size(), 2u);
  EXPECT_EQ(its[0]->start, 5s);
  EXPECT_GT(its[1]->start, its[0]->start + 500ms) << "one after the other, not side by side";
  EXPECT_EQ(beliefs_of(r, "B").size(), 2u);
  EXPECT_EQ(r.history.grants.size(), 2u);
}

TEST(ClientCrash, AClientThatCrashesBeforeItsStartAndRestartsAfterItStartsAtTheRestart) {
  const RunResult r = ScenarioBuilder("client-restart-after-start")
                          .duration(20s)
                          .redis(4s)
                          .unfenced(0)
                          .client("B", counter(100ms), [](ClientSpec& c) { c.start = 3s; })
                          .crash("B", 2s, 3s)
                          .run();
  const auto its = iterations_of(r, "B");
  ASSERT_EQ(its.size(), 1u);
  EXPECT_EQ(its[0]->start, 5s);
  EXPECT_TRUE(its[0]->success);
}

TEST(ClientPause, APauseLongerThanTheTtlDoesNotEndTheBelief) {
  const RunResult r = ScenarioBuilder("client-pause")
                          .duration(30s)
                          .redis(10s)
                          .unfenced(0)
                          .client("A", counter(500ms))
                          .pause("A", 200ms, 12s)
                          .run();
  const auto a = beliefs_of(r, "A");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_TRUE(a[0]->end.has_value());
  EXPECT_GE(*a[0]->end, 12200ms) << "the client still believes it holds the lock when it wakes up";
  // The lease itself ended at the service long before.
  EXPECT_EQ(r.history.lease_ends.at(a[0]->value).at, 10001ms);
  // It wakes up, writes, and learns nothing first: the write was accepted.
  const auto its = iterations_of(r, "A");
  ASSERT_EQ(its.size(), 1u);
  EXPECT_TRUE(its[0]->success);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kViolated);
}

// ------------------------------------------------------------- failover --

TEST(ClientFailover, APendingAcquireMovesToTheNewPrimaryOnSwitchMaster) {
  // redis-0 is unreachable from the start; A's acquire waits on it until
  // the failover at 500 ms, whose announcement makes A retry on redis-1 at
  // once rather than at its 1 s timeout.
  const RunResult r = ScenarioBuilder("switch-master-pending")
                          .duration(10s)
                          .redis(10s, 1, 0)
                          .unfenced(0)
                          .client("A", counter(100ms), [](ClientSpec& c) { c.start = 100ms; })
                          .isolate(0s, {"redis-0"})
                          .failover(500ms)
                          .run();
  ASSERT_EQ(r.history.grants.size(), 1u);
  EXPECT_EQ(r.history.grants[0].server, "redis-1");
  EXPECT_EQ(r.history.grants[0].at, 502ms);
  const auto a = beliefs_of(r, "A");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]->start, 503ms);
  EXPECT_EQ(r.metrics.iterations_ok, 1);
}

TEST(ClientFailover, RenewalsReleasesAndRetriesFollowTheNewPrimary) {
  const RunResult r = ScenarioBuilder("switch-master-renew")
                          .duration(20s)
                          .redis(10s, 1, 0)
                          .unfenced(0)
                          .client("A", counter(6s))
                          .client("B", counter(100ms), [](ClientSpec& c) { c.start = 1s; })
                          .failover(2s)
                          .run();
  // The grant was replicated before the failover, so redis-1 has A's key:
  // the renewal at 3.335 s, sent to redis-1, is accepted.
  const auto renewals = renewals_of(r, "A");
  ASSERT_GE(renewals.size(), 1u);
  EXPECT_TRUE(renewals[0]->success);
  const auto a = beliefs_of(r, "A");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]->end_reason, "release");
  const auto& end = r.history.lease_ends.at(a[0]->value);
  EXPECT_EQ(end.at, *a[0]->end + 1ms) << "released on redis-1";
  EXPECT_EQ(end.reason, "redis-1, the current primary, does not hold it");
  // B kept retrying its SET NX, on redis-1 after the announcement, and is
  // granted the lock there once A has released it.
  ASSERT_EQ(r.history.grants.size(), 2u);
  EXPECT_EQ(r.history.grants[0].server, "redis-0");
  EXPECT_EQ(r.history.grants[1].server, "redis-1");
  EXPECT_EQ(r.history.grants[1].client, "B");
  EXPECT_GT(r.history.grants[1].at, end.at);
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
  EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds) << "the INCR was replicated too";
}

TEST(ClientFailover, WithSentinelsAClientThatStartsAfterAFailoverAsksThemForThePrimary) {
  const RunResult r = ScenarioBuilder("sentinel-lookup")
                          .duration(20s)
                          .redis(10s, 1, 3)
                          .unfenced(0)
                          .client("A", counter(100ms), [](ClientSpec& c) { c.start = 3s; })
                          .failover(1s)
                          .run();
  ASSERT_EQ(r.history.grants.size(), 1u);
  EXPECT_EQ(r.history.grants[0].server, "redis-1");
  // get-master-addr-by-name (2 ms), then the acquire (2 ms).
  EXPECT_EQ(r.history.beliefs[0].start, 3004ms);
}

// --------------------------------------------------- renew and fencing --

RunResult renew_story(bool renew) {
  return ScenarioBuilder("renew-switch")
      .duration(20s)
      .redis(4s)
      .unfenced(0)
      .client("A", counter(6s), [renew](ClientSpec& c) { c.renew = renew; })
      .client("B", counter(100ms), [](ClientSpec& c) { c.start = 1s; })
      .run();
}

TEST(ClientRenew, WithoutRenewalALeaseShorterThanTheWorkExpiresUnderTheHolder) {
  const RunResult r = renew_story(false);
  EXPECT_TRUE(renewals_of(r, "A").empty());
  const auto a = beliefs_of(r, "A");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(r.history.lease_ends.at(a[0]->value).at, 4001ms);
  EXPECT_EQ(a[0]->end_reason, "release") << "nothing tells A it lost the lock";
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
}

TEST(ClientRenew, WithRenewalTheSameHolderKeepsTheLeaseUntilItReleases) {
  const RunResult r = renew_story(true);
  EXPECT_GE(renewals_of(r, "A").size(), 4u);
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
  const auto b = beliefs_of(r, "B");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_GT(b[0]->start, 6s);
}

TEST(ClientFencing, WithoutFencingAClientsWritesToAFencedResourceAreRejectedWithoutAToken) {
  const RunResult r = ScenarioBuilder("no-fencing")
                          .duration(10s)
                          .redis(10s)
                          .fenced(FenceCheck::kStrict)
                          .client("A", counter(100ms), [](ClientSpec& c) { c.fencing = false; })
                          .client("B", counter(100ms), [](ClientSpec& c) { c.start = 1s; })
                          .run();
  const auto a_writes = ops_of(r, "A", true);
  ASSERT_EQ(a_writes.size(), 1u);
  EXPECT_FALSE(a_writes[0]->accepted);
  EXPECT_FALSE(a_writes[0]->token.has_value());
  EXPECT_EQ(a_writes[0]->reason, "write without a token");
  EXPECT_EQ(iterations_of(r, "A")[0]->outcome, "write rejected: write without a token");
  // Reads carry no token unless fence_reads: A's read was accepted.
  ASSERT_EQ(ops_of(r, "A", false).size(), 1u);
  EXPECT_TRUE(ops_of(r, "A", false)[0]->accepted);
  // The lock itself still hands A a token; only the writes leave it out.
  EXPECT_EQ(r.history.grants[0].token, 1);
  const auto b_writes = ops_of(r, "B", true);
  ASSERT_EQ(b_writes.size(), 1u);
  EXPECT_TRUE(b_writes[0]->accepted);
  EXPECT_EQ(b_writes[0]->token, 2);
}

TEST(ClientFencing, WithoutFencingAndWithFencedReadsTheReadIsRejectedAndNothingIsWritten) {
  const RunResult r = ScenarioBuilder("no-fencing-reads")
                          .duration(10s)
                          .redis(10s)
                          .fenced(FenceCheck::kStrict, /*fence_reads=*/true)
                          .client("A", counter(100ms), [](ClientSpec& c) { c.fencing = false; })
                          .run();
  const auto reads = ops_of(r, "A", false);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_FALSE(reads[0]->accepted);
  EXPECT_EQ(reads[0]->reason, "read without a token");
  EXPECT_TRUE(ops_of(r, "A", true).empty());
  EXPECT_EQ(iterations_of(r, "A")[0]->outcome, "read rejected: read without a token");
}

}  // namespace
}  // namespace fencesim::testing
