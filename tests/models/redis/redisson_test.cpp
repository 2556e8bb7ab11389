// Redisson's RLock and RFencedLock (models/client/redisson_client.cpp), run
// in whole scenarios: the unlock message, the watchdog, lock(leaseTime),
// RFencedLock's tokens and the synced acquire.
#include <gtest/gtest.h>

#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using namespace std::chrono_literals;

/// One primary with `replicas` replicas and Sentinel; every client of `lib`.
ScenarioBuilder redisson(ClientLibrary lib, int replicas = 1) {
  ScenarioBuilder b("redisson-test");
  b.redis(30s, replicas, 3).redis_spec([&](RedisSpec& r) {
    r.token = lib == ClientLibrary::kRedissonFenced ? RedisToken::kIncr : RedisToken::kNone;
  });
  return b;
}
auto with(ClientLibrary lib, std::function<void(ClientSpec&)> more = {}) {
  return [lib, more](ClientSpec& c) {
    c.library = lib;
    if (more) more(c);
  };
}

std::vector<Time> grant_times(const RunResult& r, const std::string& client) {
  std::vector<Time> out;
  for (const GrantRecord& g : r.history.grants) {
    if (g.client == client) out.push_back(g.at);
  }
  return out;
}

TEST(Redisson, AWaiterIsWokenByTheUnlockMessageNotThePttl) {
  auto b = redisson(ClientLibrary::kRedisson);
  b.duration(20s).settle(5s).unfenced();
  b.client("A", counter(2s), with(ClientLibrary::kRedisson));
  b.client("B", counter(100ms), with(ClientLibrary::kRedisson, [](ClientSpec& c) { c.start = 500ms; }));
  const RunResult r = b.run();
  const auto bt = grant_times(r, "B");
  ASSERT_EQ(bt.size(), 1u);
  ASSERT_FALSE(r.history.beliefs.empty());
  const BeliefRecord& a = r.history.beliefs[0];
  ASSERT_EQ(a.client, "A");
  ASSERT_TRUE(a.end.has_value());
  // A works 2 s and unlocks; B, refused with a PTTL of about 30 s, is granted
  // right after the unlock's PUBLISH.
  EXPECT_GT(bt[0], *a.end);
  EXPECT_LT(bt[0], *a.end + 100ms);
}

TEST(Redisson, TheWatchdogRenewsEveryThirdOfTheLeaseWhileHeld) {
  auto b = redisson(ClientLibrary::kRedisson);
  b.duration(90s).settle(5s).unfenced();
  b.client("A", counter(65s), with(ClientLibrary::kRedisson));
  const RunResult r = b.run();
  int ok = 0;
  for (const RenewalRecord& rr : r.history.renewals) ok += rr.success ? 1 : 0;
  EXPECT_EQ(ok, 6);  // at 10 s, 20 s, … 60 s of a 65 s hold
  ASSERT_EQ(r.history.beliefs.size(), 1u);
  EXPECT_EQ(r.history.beliefs[0].end_reason, "release");
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kHolds);
}

TEST(Redisson, LockWithALeaseTimeHasNoWatchdog) {
  // renew: false is lock(leaseTime): the hash expires after the lease.
  auto b = redisson(ClientLibrary::kRedisson);
  b.duration(90s).settle(5s).unfenced();
  b.client("A", counter(50s), with(ClientLibrary::kRedisson, [](ClientSpec& c) { c.renew = false; }));
  b.client("B", counter(100ms), with(ClientLibrary::kRedisson, [](ClientSpec& c) { c.start = 1s; }));
  const RunResult r = b.run();
  EXPECT_TRUE(r.history.renewals.empty());
  const auto bt = grant_times(r, "B");
  ASSERT_EQ(bt.size(), 1u);
  EXPECT_GT(bt[0], 30s);
  EXPECT_LT(bt[0], 31s);
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
}

TEST(Redisson, AFailedRenewalEndsTheWatchdogButNotTheBelief) {
  // A is paused past the lease; B takes the lock; A's belief still lasts
  // until its unlock: Redisson never tells the application.
  auto b = redisson(ClientLibrary::kRedisson);
  b.duration(90s).settle(10s).unfenced();
  b.client("A", counter(45s), with(ClientLibrary::kRedisson));
  b.client("B", counter(100ms), with(ClientLibrary::kRedisson, [](ClientSpec& c) { c.start = 1s; }));
  b.pause("A", 2s, 33s);
  const RunResult r = b.run();
  int refused = 0;
  for (const RenewalRecord& rr : r.history.renewals) refused += rr.success ? 0 : 1;
  EXPECT_EQ(refused, 1);  // at 35 s, and the watchdog stops
  ASSERT_FALSE(r.history.beliefs.empty());
  EXPECT_EQ(r.history.beliefs[0].client, "A");
  EXPECT_EQ(r.history.beliefs[0].end_reason, "release");
  EXPECT_GT(*r.history.beliefs[0].end, 45s);
  EXPECT_EQ(r.metrics.lease_losses, 0);
}

TEST(Redisson, RFencedLockIncrementsItsTokenOnEveryGrant) {
  auto b = redisson(ClientLibrary::kRedissonFenced);
  b.duration(30s).settle(5s).fenced();
  b.client("A", counter(200ms, 5, 500ms), with(ClientLibrary::kRedissonFenced));
  b.client("B", counter(200ms, 5, 500ms), with(ClientLibrary::kRedissonFenced));
  const RunResult r = b.run();
  ASSERT_EQ(r.history.grants.size(), 10u);
  for (std::size_t i = 0; i < r.history.grants.size(); ++i) {
    EXPECT_EQ(r.history.grants[i].token, static_cast<std::int64_t>(i + 1));
  }
  EXPECT_EQ(status(r, Property::kNoStaleWrite), Status::kHolds);
}

TEST(Redisson, TheSyncedAcquireFailsWhileNoReplicaAcknowledges) {
  // The replica is cut off from the primary until 10 s: every acquire's WAIT
  // answers 0, the acquire is undone and retried; none is believed before.
  auto b = redisson(ClientLibrary::kRedissonFenced);
  b.duration(30s).settle(5s).fenced();
  b.client("A", counter(200ms), with(ClientLibrary::kRedissonFenced));
  b.partition(0s, {{"redis-0", "A", "sentinels"}, {"redis-1"}}, 10s);
  const RunResult r = b.run();
  ASSERT_EQ(r.history.beliefs.size(), 1u);
  EXPECT_GT(r.history.beliefs[0].start, 10s);
  EXPECT_GT(r.history.grants.size(), 3u) << "each attempt's grant at the service, undone";

  // Without replicas there is nothing to wait for.
  auto solo = redisson(ClientLibrary::kRedissonFenced, 0);
  solo.duration(10s).settle(5s).fenced();
  solo.client("A", counter(200ms), with(ClientLibrary::kRedissonFenced));
  const RunResult s = solo.run();
  ASSERT_EQ(s.history.beliefs.size(), 1u);
  EXPECT_LT(s.history.beliefs[0].start, 100ms);
}

TEST(Redisson, BeforeRelease347AnUnsyncedAcquireStaysHeldAndItsUnlockOnlyCountsDown) {
  // No replica acknowledges until 10 s. A's attempts fail; 3.45 leaves each
  // on the primary, so A's retries re-enter it and its one unlock leaves the
  // lock held until the lease runs out; 3.52 undoes each failed attempt.
  auto first_b_grant_after_a = [](const std::string& version) {
    auto b = redisson(ClientLibrary::kRedissonFenced);
    b.duration(90s).settle(5s).fenced();
    b.client("A", counter(200ms),
             with(ClientLibrary::kRedissonFenced, [&](ClientSpec& c) { c.library_version = version; }));
    b.client("B", counter(200ms), with(ClientLibrary::kRedissonFenced, [&](ClientSpec& c) {
               c.library_version = version;
               c.start = 12s;
             }));
    b.partition(0s, {{"redis-0", "A", "B", "sentinels"}, {"redis-1"}}, 10s);
    const RunResult r = b.run();
    EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kHolds) << version;
    const BeliefRecord& a = r.history.beliefs.at(0);
    EXPECT_EQ(a.client, "A");
    for (const BeliefRecord& x : r.history.beliefs) {
      if (x.client == "B") return x.start - *a.end;
    }
    return Duration{-1};
  };
  EXPECT_GT(first_b_grant_after_a("3.45"), 25s);
  EXPECT_GT(first_b_grant_after_a("3.40"), 25s);
  const Duration fixed = first_b_grant_after_a("3.52");
  EXPECT_GE(fixed, Duration::zero());
  EXPECT_LT(fixed, 2s);
}

TEST(Redisson, BeforeRelease344AWatchdogErrorStopsTheWatchdog) {
  // A's renewal at about 20 s is not synced (the replica is cut off from
  // 15 s to 25 s): 3.40's watchdog stops and the lease runs out while A
  // still works; 3.52's renews again at 30 s.
  auto run = [](const std::string& version) {
    auto b = redisson(ClientLibrary::kRedisson);
    b.duration(90s).settle(5s).unfenced();
    b.client("A", counter(65s), with(ClientLibrary::kRedisson, [&](ClientSpec& c) { c.library_version = version; }));
    b.client("B", counter(100ms), with(ClientLibrary::kRedisson, [&](ClientSpec& c) {
               c.library_version = version;
               c.start = 1s;
             }));
    b.partition(15s, {{"redis-0", "A", "B", "sentinels"}, {"redis-1"}}, 10s);
    return b.run();
  };
  const RunResult old = run("3.40");
  EXPECT_EQ(status(old, Property::kMutualExclusion), Status::kViolated);
  bool noted = false;
  for (const NoteRecord& n : old.history.notes) noted = noted || n.kind == "renewal-error";
  EXPECT_TRUE(noted);
  const RunResult fixed = run("3.52");
  EXPECT_EQ(status(fixed, Property::kMutualExclusion), Status::kHolds);
}

}  // namespace
}  // namespace fencesim::testing
