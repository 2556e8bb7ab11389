// redsync as deployed (clients[].library "redsync" on lock.redlock;
// models/client/redis_client.cpp, RedlockClient): Lock() gives up after 32
// tries, WithRetryDelay, no extension unless the caller extends, Extend's
// ErrTaken once another client holds a quorum, and the library's rules.
#include <gtest/gtest.h>

#include "models/validate.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using namespace std::chrono_literals;

auto redsync(std::function<void(ClientSpec&)> more = {}) {
  return with_library(ClientLibrary::kRedsync, std::move(more));
}

/// A holds the lock for `hold` (extending it unless `renew` is false); B
/// starts at 500 ms and runs one iteration.
RunResult contend(Duration hold, bool renew, std::function<void(ClientSpec&)> b_more = {}) {
  ScenarioBuilder b("redsync-test");
  b.redlock(3, 8s).duration(hold + 40s).settle(5s).unfenced();
  b.client("A", counter(hold, 1), redsync([renew](ClientSpec& c) { c.renew = renew; }));
  b.client("B", counter(100ms, 1), redsync([b_more](ClientSpec& c) {
             c.start = 500ms;
             if (b_more) b_more(c);
           }));
  return b.run();
}

TEST(Redsync, LockGivesUpAfter32TriesWithErrTakenWhileAQuorumHoldsAnotherValue) {
  const RunResult r = contend(30s, true);
  const IterationRecord& it = iteration(r, "B", 0);
  EXPECT_FALSE(it.acquired.has_value());
  EXPECT_EQ(it.outcome, "acquire gave up: lock already taken, locked nodes: [0 1 2] (Lock gave up after 32 tries)");
  // Not a permanent error of the service (as CROSSSLOT is): the next Lock() tries again.
  EXPECT_TRUE(r.history.service_errors.empty());
  EXPECT_EQ(r.history.grants.size(), 1u);  // A's only
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kHolds);
}

TEST(Redsync, TheTriesAreSpreadByTheRandomDelayOrByWithRetryDelay) {
  // B's second iteration starts right after its first Lock() gave up.
  const auto gave_up_after = [](const std::function<void(ClientSpec&)>& more) {
    ScenarioBuilder b("redsync-delay");
    b.redlock(3, 8s).duration(100s).settle(5s).unfenced();
    b.client("A", counter(60s, 1), redsync());
    b.client("B", counter(100ms, 2, 1ms), redsync([more](ClientSpec& c) {
               c.start = 500ms;
               if (more) more(c);
             }));
    const RunResult r = b.run();
    return iteration(r, "B", 1).start - iteration(r, "B", 0).start;
  };
  // 31 delays between 32 tries; each try and its release take a few ms.
  const Duration random = gave_up_after({});
  EXPECT_GE(random, 31 * 50ms);
  EXPECT_LE(random, 31 * 249ms + 32 * 20ms);
  EXPECT_GT(random, 31 * 100ms);  // not the format's 100 ms, which is not WithRetryDelay here
  const Duration fixed = gave_up_after([](ClientSpec& c) { c.retry_interval = 1s; });
  EXPECT_GE(fixed, 31s);
  EXPECT_LE(fixed, 31s + 32 * 20ms);
}

TEST(Redsync, WithTriesBoundsLockAndOneTryIsTryLock) {
  const RunResult one = contend(30s, true, [](ClientSpec& c) { c.tries = 1; });
  const IterationRecord& it = iteration(one, "B", 0);
  EXPECT_EQ(it.outcome, "acquire gave up: lock already taken, locked nodes: [0 1 2] (Lock gave up after 1 try)");
  // No delay at all: the single try and its release, a few round trips.
  EXPECT_LT(it.start + 20ms, 1s);
  const RunResult five = contend(30s, true, [](ClientSpec& c) {
    c.tries = 5;
    c.retry_interval = 1s;  // WithRetryDelay(1 s): four delays
  });
  EXPECT_NE(iteration(five, "B", 0).outcome.find("after 5 tries"), std::string::npos);
  ScenarioBuilder g("generic-tries");
  g.redlock(3, 8s).unfenced().client("A", counter(1s, 1), [](ClientSpec& c) { c.tries = 3; });
  const auto p = validate_scenario(g.build());
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->path, "clients[0].tries");
}

TEST(Redsync, WithoutTheCallersExtendTheJobOutlivesTheExpiry) {
  // redsync never extends by itself: a 10 s job under the 8 s default expiry.
  ScenarioBuilder b("redsync-no-extend");
  b.redlock(3, 8s).duration(40s).settle(10s).unfenced();
  b.client("A", counter(10s, 1), redsync([](ClientSpec& c) { c.renew = false; }));
  b.client("B", counter(1s, 3, 500ms), redsync([](ClientSpec& c) {
             c.start = 500ms;
             c.renew = false;
           }));
  const RunResult r = b.run();
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
  EXPECT_TRUE(r.history.renewals.empty());
  // The caller's Extend loop (renew) keeps B out.
  ScenarioBuilder e("redsync-extend");
  e.redlock(3, 8s).duration(40s).settle(10s).unfenced();
  e.client("A", counter(10s, 1), redsync());
  e.client("B", counter(1s, 3, 500ms), redsync([](ClientSpec& c) { c.start = 500ms; }));
  const RunResult re = e.run();
  EXPECT_EQ(status(re, Property::kMutualExclusion), Status::kHolds);
  EXPECT_FALSE(re.history.renewals.empty());
}

TEST(Redsync, AnExtendAfterAnotherClientTookTheLockFailsWithErrTaken) {
  // A is paused 12 s right after its grant: its key expires at 8 s, B takes
  // the lock on every primary, and A's next Extend finds B's value.
  ScenarioBuilder b("redsync-extend-taken");
  b.redlock(3, 8s).duration(40s).settle(10s).unfenced();
  b.client("A", counter(20s, 1), redsync());
  b.client("B", counter(15s, 1), redsync([](ClientSpec& c) { c.start = 500ms; }));
  b.pause("A", 100ms, 12s);
  const RunResult r = b.run();
  bool taken = false;
  for (const BeliefRecord& x : r.history.beliefs) {
    if (x.client == "A" && x.end_reason.find("Extend: lock already taken, locked nodes: [0 1 2]") != std::string::npos)
      taken = true;
  }
  EXPECT_TRUE(taken);
}

TEST(Redsync, AStandbyLeaderWhoseLockGivesUpIsStillMakingProgress) {
  // A leads for the whole run; B's Lock() gives up every 32 tries and tries
  // again: a waiting standby, not a candidate stuck on a permanent error
  // (found by a new-user probe: progress was violated).
  ScenarioBuilder b("redsync-leader");
  b.redlock(3, 10s).duration(60s).settle(20s).unfenced();
  b.client("A", leader(1s, 1000), redsync());
  b.client("B", leader(1s, 1000), redsync([](ClientSpec& c) { c.start = 500ms; }));
  const RunResult r = b.run();
  EXPECT_EQ(status(r, Property::kProgress), Status::kHolds) << verdict_of(r, Property::kProgress).summary;
}

TEST(Redsync, IsARedlockLibraryAndItsCallerExtendsOnTheMonotonicClock) {
  ScenarioBuilder one("redsync-one-primary");
  one.redis(8s, 1, 3).unfenced().client("A", counter(1s, 1), redsync());
  const auto p = validate_scenario(one.build());
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->path, "clients[0].library");
  EXPECT_NE(p->message.find("Redlock library"), std::string::npos) << p->message;
  ScenarioBuilder wall("redsync-wall");
  wall.redlock(3, 8s).unfenced().client("A", counter(1s, 1),
                                        redsync([](ClientSpec& c) { c.renew_clock = sim::ClockKind::kWall; }));
  const auto q = validate_scenario(wall.build());
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->path, "clients[0].renew_clock");
}

}  // namespace
}  // namespace fencesim::testing
