// Whole worlds around the Redis lease service, through the fluent
// ScenarioBuilder: split brain behind a partition, token reuse after a
// failover, counter resets, and Redlock's majority and validity rules.
#include <gtest/gtest.h>

#include <set>

#include "tests/models/redis/redis_harness.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using P = Property;
constexpr Status kHolds = Status::kHolds;
constexpr Status kViolated = Status::kViolated;

std::set<std::string> granting_servers(const RunResult& r) {
  std::set<std::string> out;
  for (const GrantRecord& g : r.history.grants) out.insert(g.server);
  return out;
}

std::vector<std::int64_t> tokens(const RunResult& r) {
  std::vector<std::int64_t> out;
  for (const GrantRecord& g : r.history.grants) out.push_back(g.token.value_or(-1));
  return out;
}

const BeliefRecord* belief_of(const RunResult& r, const std::string& value) {
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.value == value) return &b;
  }
  return nullptr;
}

// ------------------------------------------------------ single primary --

TEST(RedisWorld, SentinelsCutOffFromAPrimaryThatClientsStillReachLeadToTwoPrimariesGrantingTheLock) {
  const RunResult r =
      ScenarioBuilder("split-brain")
          .duration(30s)
          .redis(4s, 2, 3)
          .redis_spec([](RedisSpec& s) { s.down_after = 2s; })
          .unfenced(0)
          .client("A", allocator(10, 1s, 8, 500ms))
          .client("B", allocator(10, 1s, 4, 500ms), [](ClientSpec& c) { c.start = 8s; })
          .partition(1s, {{"redis-0", "A"}, {"sentinel-0", "sentinel-1", "sentinel-2", "redis-1", "redis-2", "B"}})
          .run();

  // A keeps being granted the lock by the old primary, which no sentinel can
  // reach to demote; B is granted it by the primary the sentinels promoted.
  EXPECT_EQ(granting_servers(r), (std::set<std::string>{"redis-0", "redis-1"}));
  int a_after_failover = 0, b_grants = 0;
  for (const GrantRecord& g : r.history.grants) {
    if (g.client == "A" && g.server == "redis-0" && g.at > 8s) ++a_after_failover;
    if (g.client == "B" && g.server == "redis-1") ++b_grants;
  }
  EXPECT_GT(a_after_failover, 0);
  EXPECT_GT(b_grants, 0);
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kViolated) << "both sides allocate from the same counter";
  bool promoted = false;
  for (const NoteRecord& n : r.history.notes) promoted = promoted || (n.node == "redis-1" && n.kind == "promoted");
  EXPECT_TRUE(promoted);
}

TEST(RedisWorld, WhenTheSplitHealsTheSentinelsDemoteTheOldPrimaryAndItsHolderLearnsOfTheLoss) {
  const RunResult r =
      ScenarioBuilder("split-brain-heal")
          .duration(30s)
          .redis(6s, 2, 3)
          .redis_spec([](RedisSpec& s) { s.down_after = 2s; })
          .unfenced(0)
          .client("A", allocator(10, 25s))
          .client("B", allocator(10, 1s), [](ClientSpec& c) { c.start = 6s; })
          .partition(1s, {{"redis-0", "A"}, {"sentinel-0", "sentinel-1", "sentinel-2", "redis-1", "redis-2", "B"}}, 7s)
          .run();
  bool demoted = false;
  Time demoted_at{0};
  for (const NoteRecord& n : r.history.notes) {
    if (n.node == "redis-0" && n.kind == "demoted") demoted = true, demoted_at = n.at;
  }
  ASSERT_TRUE(demoted) << "+convert-to-slave once a sentinel reaches it again";
  // The split heals at 8 s. The sentinels' first INFO then sees redis-0
  // report role master; it is converted at the first INFO (10 s later)
  // after more than SENTINEL_PUBLISH_PERIOD*4 = 8 s of that.
  EXPECT_GE(demoted_at, 16s);
  EXPECT_LT(demoted_at, 20s);
  // A renews every 2 s on redis-0 until then; its next renewal meets
  // READONLY, it asks the sentinels, and redis-1 refuses the renewal.
  const BeliefRecord* a = nullptr;
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.client == "A") a = &b;
  }
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->end_reason, "renewal refused");
  ASSERT_TRUE(a->end.has_value());
  EXPECT_GT(*a->end, demoted_at);
  EXPECT_LT(*a->end, demoted_at + 3s);
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
}

TEST(RedisWorld, WithoutThePartitionTheSameClientsNeverOverlap) {
  const RunResult r = ScenarioBuilder("split-brain-control")
                          .duration(30s)
                          .redis(4s, 2, 3)
                          .redis_spec([](RedisSpec& s) { s.down_after = 2s; })
                          .unfenced(0)
                          .client("A", allocator(10, 1s, 8, 500ms))
                          .client("B", allocator(10, 1s, 4, 500ms), [](ClientSpec& c) { c.start = 8s; })
                          .run();
  EXPECT_EQ(granting_servers(r), (std::set<std::string>{"redis-0"}));
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
  EXPECT_EQ(status(r, P::kProgress), kHolds);
}

TEST(RedisWorld, APromotedReplicaThatMissedTheIncrHandsOutAReusedToken) {
  const RunResult r = ScenarioBuilder("token-reuse")
                          .duration(20s)
                          .redis(30s, 1, 3)
                          .redis_spec([](RedisSpec& s) {
                            s.replication_delay = 1s;
                            s.down_after = 2s;
                          })
                          .fenced(FenceCheck::kStrict)
                          .client("A", counter(6s))
                          .client("B", counter(100ms), [](ClientSpec& c) { c.start = 100ms; })
                          .crash("redis-primary", 300ms)
                          .run();
  ASSERT_EQ(r.history.grants.size(), 2u);
  EXPECT_EQ(r.history.grants[0].server, "redis-0");
  EXPECT_EQ(r.history.grants[1].server, "redis-1");
  EXPECT_EQ(tokens(r), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(status(r, P::kTokenMonotonic), kViolated);
  // A's lease ended at the crash: the only replica never got it.
  const auto& end = r.history.lease_ends.at(r.history.grants[0].value);
  EXPECT_EQ(end.at, 300ms);
  // The strict check rejects A's write with the same token after B's.
  EXPECT_EQ(status(r, P::kNoStaleWrite), kHolds);
  EXPECT_EQ(r.metrics.writes_rejected, 1);
}

TEST(RedisWorld, TheFailoverFaultLosesAnUnreplicatedGrantAndTheTokenIsHandedOutAgain) {
  const RunResult r = ScenarioBuilder("failover-fault")
                          .duration(20s)
                          .redis(30s, 1, 0)
                          .redis_spec([](RedisSpec& s) { s.replication_delay = 1s; })
                          .unfenced(0)
                          .client("A", counter(5s))
                          .client("B", counter(100ms), [](ClientSpec& c) { c.start = 100ms; })
                          .failover(500ms)
                          .run();
  ASSERT_EQ(r.history.grants.size(), 2u);
  EXPECT_EQ(r.history.grants[1].server, "redis-1");
  EXPECT_EQ(tokens(r), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(status(r, P::kTokenMonotonic), kViolated);
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  EXPECT_EQ(r.history.lease_ends.at(r.history.grants[0].value).at, 500ms);
  ASSERT_EQ(r.history.faults.size(), 1u);
  EXPECT_FALSE(r.history.faults[0].skipped);
}

TEST(RedisWorld, ACounterResetMakesTheNextTokenTheValuePlusOne) {
  auto run = [](std::int64_t value) {
    return ScenarioBuilder("counter-reset")
        .duration(20s)
        .redis(5s)
        .unfenced(0)
        .client("A", counter(100ms, 3, 2s))
        .counter_reset("redis", 1s, value)
        .run();
  };
  const RunResult up = run(10);
  EXPECT_EQ(tokens(up), (std::vector<std::int64_t>{1, 11, 12}));
  EXPECT_EQ(status(up, P::kTokenMonotonic), kHolds);
  const RunResult down = run(0);
  EXPECT_EQ(tokens(down), (std::vector<std::int64_t>{1, 1, 2}));
  EXPECT_EQ(status(down, P::kTokenMonotonic), kViolated);
}

TEST(RedisWorld, ContendingClientsGetConsecutiveTokensBecauseAFailedSetNxNeverIncrements) {
  ScenarioBuilder b("contention");
  b.duration(30s).redis(5s).fenced(FenceCheck::kStrict);
  for (int i = 0; i < 4; ++i) b.client("C" + std::to_string(i), counter(300ms, 3, 200ms));
  const RunResult r = b.run();
  // Every client retried SET NX many times while another held the lock;
  // still the tokens are exactly 1..12, one per successful acquisition.
  ASSERT_EQ(r.history.grants.size(), 12u);
  std::vector<std::int64_t> expected;
  for (int i = 1; i <= 12; ++i) expected.push_back(i);
  EXPECT_EQ(tokens(r), expected);
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
  EXPECT_EQ(r.metrics.iterations_ok, 12);
}

// -------------------------------------------------------------- Redlock --

TEST(Redlock, WithOneOfThreePrimariesDownAClientStillAcquires) {
  const RunResult r = ScenarioBuilder("redlock-one-down")
                          .duration(10s)
                          .redlock(3, 10s)
                          .unfenced(0)
                          .client("A", counter(100ms))
                          .crash("redis-0", 0s)
                          .run();
  ASSERT_EQ(r.history.beliefs.size(), 1u);
  // The client waits for the dead primary up to the per-primary timeout
  // (5% of the TTL) before it counts the two acceptances.
  EXPECT_EQ(r.history.beliefs[0].start, 500ms);
  ASSERT_EQ(r.history.grants.size(), 1u);
  EXPECT_EQ(r.history.grants[0].server, "redis-2") << "the acceptance that completed the majority";
  EXPECT_FALSE(r.history.grants[0].token.has_value());
  EXPECT_EQ(r.metrics.iterations_ok, 1);
}

TEST(Redlock, WithTwoOfThreePrimariesDownAClientNeverAcquires) {
  const RunResult r = ScenarioBuilder("redlock-two-down")
                          .duration(10s)
                          .redlock(3, 10s)
                          .unfenced(0)
                          .client("A", counter(100ms))
                          .crash("redis-0", 0s)
                          .crash("redis-1", 0s)
                          .run();
  EXPECT_TRUE(r.history.beliefs.empty());
  EXPECT_TRUE(r.history.grants.empty());
  ASSERT_EQ(r.history.iterations.size(), 1u);
  EXPECT_FALSE(r.history.iterations[0].acquired.has_value());
}

TEST(Redlock, AReplySlowerThanThePerPrimaryTimeoutDoesNotCount) {
  // Two primaries answer after 2 × 300 ms, past the 500 ms per-primary
  // timeout: only one acceptance counts, so no attempt succeeds until the
  // slowness ends at 3 s. Each failed attempt deletes its value everywhere.
  const RunResult r = ScenarioBuilder("redlock-slow")
                          .duration(10s)
                          .redlock(3, 10s)
                          .unfenced(0)
                          .client("A", counter(100ms))
                          .slow("redis-0", 0s, 300ms, 3s)
                          .slow("redis-1", 0s, 300ms, 3s)
                          .run();
  ASSERT_EQ(r.history.beliefs.size(), 1u);
  EXPECT_GE(r.history.beliefs[0].start, 3s);
  EXPECT_LT(r.history.beliefs[0].start, 4s);
  // The service did see majorities for abandoned attempts (the slow SETs
  // land after the client gave up); the client's cleanup ended each of them.
  EXPECT_GT(r.history.grants.size(), 1u);
  for (const GrantRecord& g : r.history.grants) {
    if (g.value == r.history.beliefs[0].value) continue;
    ASSERT_EQ(r.history.lease_ends.count(g.value), 1u);
    EXPECT_LT(r.history.lease_ends.at(g.value).at, g.at + 1s) << "deleted by the cleanup, not expired";
  }
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
}

TEST(Redlock, AnAcquisitionThatTookLongerThanTheTtlMinusDriftFails) {
  // The replies are in time (2 ms), but the client is paused for 9.95 s
  // before it looks at them: validity = 10 s − 9.95 s − (100 ms + 2 ms) < 0.
  // It deletes its value everywhere and tries again.
  const RunResult r = ScenarioBuilder("redlock-validity")
                          .duration(20s)
                          .redlock(3, 10s)
                          .unfenced(0)
                          .client("A", counter(100ms))
                          .pause("A", 1ms, 9950ms)
                          .run();
  ASSERT_EQ(r.history.grants.size(), 2u);
  const GrantRecord& abandoned = r.history.grants[0];
  EXPECT_EQ(belief_of(r, abandoned.value), nullptr) << "never believed held";
  ASSERT_EQ(r.history.lease_ends.count(abandoned.value), 1u);
  EXPECT_EQ(r.history.lease_ends.at(abandoned.value).at, 9951ms + 1ms) << "the cleanup DEL at the pause's end";
  ASSERT_EQ(r.history.beliefs.size(), 1u);
  EXPECT_EQ(r.history.beliefs[0].value, r.history.grants[1].value);
  EXPECT_GE(r.history.beliefs[0].start, 9951ms + 100ms) << "after retry_interval";
}

TEST(Redlock, WithATtlThisShortAReplyInsideThePerPrimaryTimeoutCanStillBeTooSlowForTheValidity) {
  // TTL 2.1 ms: the per-primary timeout is 105 us, but ttl − drift is only
  // 2.1 ms − (21 us + 2 ms) = 79 us. With 20 us latency and primaries slowed
  // by 20 us each way, every reply takes 80 us: in time for the timeout,
  // too late for the validity. Once the slowness ends (40 us), it acquires.
  auto run = [](bool slow) {
    ScenarioBuilder b("redlock-short-ttl");
    b.duration(1s).latency(20us, 20us).redlock(3, 2100us).unfenced(0).client("A", counter(10us), [](ClientSpec& c) {
      c.renew = false;
      c.retry_interval = 1ms;
    });
    if (slow) {
      for (const char* n : {"redis-0", "redis-1", "redis-2"}) b.slow(n, 0s, 20us, 10ms);
    }
    return b.run();
  };
  const RunResult fast = run(false);
  ASSERT_EQ(fast.history.beliefs.size(), 1u);
  EXPECT_EQ(fast.history.beliefs[0].start, 40us);

  const RunResult slowed = run(true);
  ASSERT_EQ(slowed.history.beliefs.size(), 1u);
  EXPECT_GE(slowed.history.beliefs[0].start, 10ms);
  // Every earlier attempt reached a majority at the service but was given
  // up by the client; none of them was believed.
  EXPECT_GT(slowed.history.grants.size(), 5u);
  EXPECT_EQ(slowed.history.grants.back().value, slowed.history.beliefs[0].value);
}

TEST(Redlock, AnAcquisitionJustInsideTheValidityHolds) {
  // Paused 9.8 s: validity = 10 s − 9.8 s − 102 ms > 0, the lock is held.
  const RunResult r = ScenarioBuilder("redlock-validity-ok")
                          .duration(20s)
                          .redlock(3, 10s)
                          .unfenced(0)
                          .client("A", counter(100ms))
                          .pause("A", 1ms, 9800ms)
                          .run();
  ASSERT_EQ(r.history.grants.size(), 1u);
  ASSERT_EQ(r.history.beliefs.size(), 1u);
  EXPECT_EQ(r.history.beliefs[0].start, 9801ms);
}

TEST(Redlock, AWallJumpOnOnePrimaryOfThreeDoesNotEndALeaseHeldOnAllThree) {
  const RunResult r = ScenarioBuilder("redlock-jump-one")
                          .duration(20s)
                          .redlock(3, 10s)
                          .unfenced(0)
                          .client("A", counter(6s))
                          .client("B", counter(100ms), [](ClientSpec& c) { c.start = 2500ms; })
                          .clock_jump("redis-1", 2s, 20s)
                          .run();
  ASSERT_FALSE(r.history.grants.empty());
  const GrantRecord& a = r.history.grants[0];
  EXPECT_EQ(a.client, "A");
  // redis-1 dropped A's key at the jump, but two primaries still hold it.
  const auto end = r.history.lease_ends.find(a.value);
  ASSERT_NE(end, r.history.lease_ends.end());
  EXPECT_GT(end->second.at, 6s) << "A's lease lasted until its release";
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
}

TEST(Redlock, AWallJumpOnOneOfTheTwoPrimariesAHolderReachedLetsASecondClientIn) {
  // Kleppmann, "How to do distributed locking": A is granted the lock by
  // redis-0 and redis-1 (redis-2 is out of its reach); redis-1's wall clock
  // jumps and the key expires there; B is granted redis-1 and redis-2.
  const RunResult r = ScenarioBuilder("redlock-jump-kleppmann")
                          .duration(20s)
                          .redlock(3, 10s)
                          .unfenced(0)
                          .client("A", counter(6s))
                          .client("B", counter(100ms), [](ClientSpec& c) { c.start = 2500ms; })
                          .partition(0s, {{"A"}, {"redis-2"}}, 1s)
                          .clock_jump("redis-1", 2s, 20s)
                          .run();
  ASSERT_GE(r.history.grants.size(), 2u);
  const GrantRecord& a = r.history.grants[0];
  EXPECT_EQ(a.client, "A");
  EXPECT_EQ(r.history.lease_ends.at(a.value).at, 2s) << "the majority lost it at the jump";
  EXPECT_EQ(r.history.grants[1].client, "B");
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  // A learns of it only at its next extension, refused by a majority.
  const BeliefRecord* ab = belief_of(r, a.value);
  ASSERT_NE(ab, nullptr);
  EXPECT_EQ(ab->end_reason, "renewal refused");
}

// Redlock pools with replicas and Sentinel (samcook/RedLock.net#11,
// mike-marcacci/node-redlock#16): pool 1's primary crashes before A's SET reached
// its replica; pool 1's sentinels promote the replica, which has forgotten
// A's key, and B gathers a majority while A still believes it holds.
RunResult pool_failover(Duration replication_delay) {
  return ScenarioBuilder("redlock-pool-failover")
      .duration(30s)
      .redlock(3, 10s)
      .redis_spec([replication_delay](RedisSpec& r) {
        r.replicas = 1;
        r.sentinels = 3;
        r.replication_delay = replication_delay;
        r.down_after = 2s;
      })
      .unfenced(0)
      .client("A", counter(8s))
      .client("B", counter(100ms), [](ClientSpec& c) { c.start = 1s; })
      .partition(0s, {{"A"}, {"redis-2"}}, 30s)
      .crash("redis-1", 500ms)
      .run();
}

TEST(RedlockPools, APoolThatFailsOverToAReplicaThatMissedTheSetForgetsTheKeyAndASecondClientGetsAMajority) {
  const RunResult r = pool_failover(2s);
  ASSERT_GE(r.history.grants.size(), 2u);
  const GrantRecord& a = r.history.grants[0];
  EXPECT_EQ(a.client, "A");
  EXPECT_EQ(a.server, "redis-1") << "pool 0 and pool 1 made A's majority";
  const GrantRecord& b = r.history.grants[1];
  EXPECT_EQ(b.client, "B");
  // B's majority is pool 1's promoted replica and pool 2.
  EXPECT_TRUE(b.server == "redis-1-r1" || b.server == "redis-2") << b.server;
  // A's lease ends at the service when pool 1's new primary, without the
  // key, takes over (a down primary blocked others until then).
  ASSERT_EQ(r.history.lease_ends.count(a.value), 1u);
  // down_after (2 s) after redis-1's last answered PING, plus the
  // objective-down check and the election.
  EXPECT_GT(r.history.lease_ends.at(a.value).at, 2s) << "not before down_after has passed";
  EXPECT_LE(r.history.lease_ends.at(a.value).at, b.at);
  EXPECT_LT(b.at - a.at, 10s) << "inside A's validity time";
  EXPECT_EQ(status(r, P::kMutualExclusion), kViolated);
  const BeliefRecord* ab = belief_of(r, a.value);
  ASSERT_NE(ab, nullptr);
  EXPECT_TRUE(!ab->end || *ab->end > b.at) << "A still believed it held the lock when B was granted";
}

TEST(RedlockPools, WhenTheReplicaHadTheSetThePromotedReplicaKeepsBlockingAndNoOneElseGetsIn) {
  const RunResult r = pool_failover(5ms);
  ASSERT_GE(r.history.grants.size(), 1u);
  const GrantRecord& a = r.history.grants[0];
  EXPECT_EQ(a.client, "A");
  for (const GrantRecord& g : r.history.grants) {
    if (g.client == "B") {
      EXPECT_GE(g.at, a.at + 8s) << "B only after A's work and release";
    }
  }
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
}

}  // namespace
}  // namespace fencesim::testing
