// Issue #16, Redis as deployed: the Sentinel failback, belief without grant
// in Redlock pools, and why a failover aborted. The repro scenarios are in
// tests/models/redis/issue16/.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/models/redis/redis_harness.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

bool has_note(const History& h, const std::string& kind, const std::string& part) {
  return std::any_of(h.notes.begin(), h.notes.end(),
                     [&](const NoteRecord& n) { return n.kind == kind && n.text.find(part) != std::string::npos; });
}

std::string notes_of(const History& h, const std::string& kind) {
  std::string out;
  for (const NoteRecord& n : h.notes) {
    if (n.kind == kind) out += n.node + ": " + n.text + "\n";
  }
  return out;
}

// 1. A SENTINEL FAILOVER back to the old primary, still a primary (the
// sentinels convert it only ~10 s after the first switch): promote() on it
// must still make it the service's current primary.
TEST(SentinelFailback, AFailoverBackToAnUnconvertedOldPrimaryMakesItTheCurrentPrimaryAgain) {
  RedisHarness h(spec_with(/*replicas=*/1, /*sentinels=*/3));
  std::string why1, why2;
  bool ok1 = false, ok2 = false;
  sim::NodeId after_first = sim::kNoNode;
  h.observe(4s, [&] { ok1 = h.svc->failover_now(why1); });
  h.observe(6500ms, [&] { after_first = h.svc->current_primary(); });
  h.observe(7s, [&] {
    ASSERT_TRUE(h.server(0).is_primary()) << "redis-0 is not converted yet: the failback promotes a primary";
    ok2 = h.svc->failover_now(why2);
  });
  h.run(10s);
  ASSERT_TRUE(ok1) << why1;
  ASSERT_TRUE(ok2) << why2;
  EXPECT_EQ(after_first, h.servers[1]);
  EXPECT_EQ(h.svc->current_primary(), h.servers[0]) << "the failback's +switch-master names redis-0";
  EXPECT_TRUE(has_note(h.history, "promoted", "already a primary")) << notes_of(h.history, "promoted");
}

TEST(SentinelFailback, SwitchMasterMakesTheSwitchedToNodeTheCurrentPrimaryAndIgnoresAnOlderEpoch) {
  RedisHarness h(spec_with(/*replicas=*/2, /*sentinels=*/3));
  h.observe(1s, [&] { h.svc->on_switch_master(h.servers[2], 5); });
  h.observe(2s, [&] { EXPECT_EQ(h.svc->current_primary(), h.servers[2]); });
  h.observe(3s, [&] { h.svc->on_switch_master(h.servers[1], 4); });
  h.run(4s);
  EXPECT_EQ(h.svc->current_primary(), h.servers[2]) << "epoch 4 is older than the switch in epoch 5";
}

// 2. Redlock pools: A's majority is redis-0 and redis-1, an old primary of
// pool 1 that its sentinels switched away from (to redis-1-r1) but cannot
// reach to convert. A believes; the grant must be in the History, and as
// the pools' current primaries do not back it, its lease ends at once.
RunResult stale_pool_primary() {
  return ScenarioBuilder("issue16-pool-stale-primary")
      .duration(30s)
      .redlock(3, 10s)
      .redis_spec([](RedisSpec& r) {
        r.replicas = 1;
        r.sentinels = 3;
        r.down_after = 2s;
      })
      .unfenced(0)
      .client("A", counter(2s, 1), [](ClientSpec& c) { c.start = 6s; })
      .partition(0s, {{"redis-1", "A"}, {"sentinel-1-0", "sentinel-1-1", "sentinel-1-2", "redis-1-r1"}}, 30s)
      .partition(0s, {{"A"}, {"redis-2"}}, 30s)
      .run();
}

TEST(RedlockPoolsIssue16, AMajorityThroughAStalePoolPrimaryIsRecordedAsAGrantWhoseLeaseEndsAtOnce) {
  const RunResult r = stale_pool_primary();
  ASSERT_FALSE(r.history.beliefs.empty()) << "A's SETs on redis-0 and redis-1 are a majority";
  for (const BeliefRecord& b : r.history.beliefs) {
    const auto g = std::find_if(r.history.grants.begin(), r.history.grants.end(),
                                [&](const GrantRecord& x) { return x.value == b.value; });
    ASSERT_NE(g, r.history.grants.end()) << b.client << " believes " << b.value << " with no grant in the History";
    ASSERT_EQ(r.history.lease_ends.count(b.value), 1u);
    EXPECT_EQ(r.history.lease_ends.at(b.value).at, g->at) << "the current primaries do not back it: it ends at once";
    EXPECT_EQ(r.history.lease_ends.at(b.value).reason, "fewer than a majority of primaries hold it or are down");
  }
}

// 3. A forced failover to a replica that is paused past the failover
// timeout (max(2 × down_after, 3 s) = 10 s): it never answers INFO, and the
// abort note says so.
TEST(SentinelFailoverAbort, APromotedReplicaThatNeverAnswersInfoAbortsTheFailoverSayingSo) {
  RedisHarness h(spec_with(/*replicas=*/1, /*sentinels=*/3));
  std::string why;
  bool ok = false;
  h.observe(3900ms, [&] { h.sim.pause(h.servers[1], 15s); });
  h.observe(4s, [&] { ok = h.svc->failover_now(why); });
  // redis-1 resumes at 18.9 s and applies the REPLICAOF NO ONE that waited
  // for it, as a paused process would: a primary, but no sentinel names it.
  h.run(20s);
  ASSERT_TRUE(ok) << why;
  EXPECT_TRUE(h.server(1).is_primary());
  EXPECT_TRUE(has_note(h.history, "promoted", "but not the current one")) << notes_of(h.history, "promoted");
  EXPECT_TRUE(has_note(h.history, "failover-abort",
                       "-failover-abort-slave-timeout: the promoted replica redis-1 never answered INFO within the "
                       "failover timeout (10s)"))
      << notes_of(h.history, "failover-abort");
  EXPECT_EQ(h.svc->current_primary(), h.servers[0])
      << "the aborted failover's late promotion is not the current primary";
}

// The failover fault over Redlock pools: refused at load, naming the pools.
TEST(RedlockPoolsIssue16, AFailoverFaultIsRefusedNamingThePoolsAndWhatToDoInstead) {
  Scenario s;
  s.lock.set_service(ServiceKind::kRedis);
  s.lock.redis().redlock = 3;
  s.lock.redis().replicas = 1;
  s.lock.redis().sentinels = 3;
  FaultSpec f;
  f.kind = FaultKind::kFailover;
  f.target = "redis";
  const std::string problem = redis::descriptor().fault_problem(s, f);
  EXPECT_NE(problem.find("does not apply to Redlock pools"), std::string::npos) << problem;
  EXPECT_NE(problem.find("redis-p0 … redis-p2"), std::string::npos) << problem;
  EXPECT_NE(problem.find("crash the pool's primary instead"), std::string::npos) << problem;
}

}  // namespace
}  // namespace fencesim::testing
