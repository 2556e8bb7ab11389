// Sentinel failover, restarts, the `failover` and `counter_reset` faults and
// the token script, poked at directly on the servers.
#include <gtest/gtest.h>

#include "tests/models/redis/redis_harness.hpp"

namespace fencesim::testing {
namespace {

RedisSpec sentinel_spec(int replicas, Duration down_after = 2s) {
  RedisSpec s = spec_with(replicas, 3);
  s.down_after = down_after;
  return s;
}

std::optional<std::int64_t> counter_on(RedisHarness& h, int i) { return h.integer_at(i, kCounter); }

// ------------------------------------------------------------ promotion --

TEST(SentinelFailover, SentinelsPromoteTheReplicaWithTheLargestReplicationOffset) {
  RedisHarness h(sentinel_spec(2), 60s);
  // redis-1 cannot hear the primary, so it misses the acquisition; redis-2,
  // the higher index, has the larger offset and must win.
  h.observe(0s, [&] { h.sim.add_partition(sim::Partition{{{h.servers[0]}, {h.servers[1]}}, {}, false}); });
  h.at(100ms, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(3s, [&] { h.sim.crash(h.servers[0]); });
  std::uint64_t offset1 = 99, offset2 = 0;
  h.observe(2900ms, [&] {
    offset1 = h.server(1).offset();
    offset2 = h.server(2).offset();
  });
  h.run(20s);

  EXPECT_EQ(offset1, 0u);
  EXPECT_EQ(offset2, 1u);
  EXPECT_EQ(h.name(h.svc->current_primary()), "redis-2");
  EXPECT_TRUE(h.server(2).is_primary());
  EXPECT_FALSE(h.server(1).is_primary());
  EXPECT_EQ(h.server(1).following(), h.servers[2]) << "the other replica is reconfigured to follow it";
  EXPECT_FALSE(h.lease_end_of("v1").has_value()) << "the promoted replica still holds the lease";
  ASSERT_FALSE(h.inbox.switches.empty()) << "clients hear +switch-master";
  EXPECT_EQ(h.inbox.switches.back().primary, h.servers[2]);
}

TEST(SentinelFailover, AmongEquallyUpToDateReplicasTheLowestIndexIsPromoted) {
  RedisHarness h(sentinel_spec(3), 60s);
  h.at(100ms, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(2s, [&] { h.sim.crash(h.servers[0]); });
  h.run(20s);

  EXPECT_EQ(h.server(1).offset(), h.server(3).offset());
  EXPECT_EQ(h.name(h.svc->current_primary()), "redis-1");
  EXPECT_TRUE(h.noted("redis-1", "promoted"));
}

TEST(SentinelFailover, AMajorityOfSentinelsPromotesWithinDownAfterPlusTheElection) {
  RedisHarness h(sentinel_spec(1), 60s);
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  Time promoted_by{-1};
  for (int ms = 1000; ms <= 20000; ms += 100) {
    h.observe(Duration{ms * 1'000'000LL}, [&, ms] {
      if (promoted_by < Time{0} && h.svc->current_primary() == h.servers[1]) promoted_by = Duration{ms * 1'000'000LL};
    });
  }
  h.run(20s);
  ASSERT_GE(promoted_by, Time{0});
  // The last good PING reply came at 2 ms: not before down_after (2 s) has
  // passed since, and not much after — the 100 ms poll, the ODOWN round,
  // the random 0–1 s desync and the election.
  EXPECT_GT(promoted_by, 2s);
  EXPECT_LT(promoted_by, 4s);
}

// A minority of sentinels can neither agree that the primary is down
// (ODOWN needs a majority of all sentinels) nor elect a leader.
TEST(SentinelFailover, SentinelsPartitionedFromEachOtherCannotPromote) {
  RedisHarness h(sentinel_spec(1), 60s);
  h.observe(500ms, [&] {
    h.sim.add_partition(sim::Partition{{{h.sentinels[0]}, {h.sentinels[1]}, {h.sentinels[2]}}, {}, false});
  });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.run(40s);
  EXPECT_EQ(h.svc->current_primary(), h.servers[0]);
  EXPECT_FALSE(h.server(1).is_primary());
  EXPECT_FALSE(h.noted("sentinel-0", "odown"));
  EXPECT_TRUE(h.inbox.switches.empty());
}

TEST(SentinelFailover, OneSentinelLeftOfThreeCannotPromote) {
  RedisHarness h(sentinel_spec(1), 60s);
  h.observe(500ms, [&] {
    h.sim.crash(h.sentinels[1]);
    h.sim.crash(h.sentinels[2]);
  });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.run(40s);
  EXPECT_EQ(h.svc->current_primary(), h.servers[0]);
  EXPECT_FALSE(h.server(1).is_primary());
  EXPECT_TRUE(h.inbox.switches.empty());
}

TEST(SentinelFailover, OneSentinelCutFromALivePrimaryCannotPromote) {
  RedisHarness h(sentinel_spec(1), 60s);
  h.observe(500ms, [&] { h.sim.add_partition(sim::Partition{{{h.servers[0]}, {h.sentinels[0]}}, {}, false}); });
  h.run(40s);
  EXPECT_EQ(h.svc->current_primary(), h.servers[0]);
  EXPECT_TRUE(h.server(0).is_primary());
  EXPECT_FALSE(h.server(1).is_primary());
  EXPECT_TRUE(h.inbox.switches.empty());
}

TEST(SentinelFailover, ASentinelThatMissedTheFailoverLearnsTheNewPrimaryFromItsPeers) {
  // sentinel-0 is cut off while the other two fail over; Sentinel's hello
  // messages (sentinel.c sentinelSendHello, every 2 s, with the config
  // epoch) bring it the newer configuration once it can hear them again.
  // Clients ask sentinel-0 first: if it stayed stale they would be sent to
  // the demoted primary for ever.
  RedisHarness h(sentinel_spec(1), 60s);
  h.observe(500ms, [&] {
    const std::uint64_t id = h.sim.add_partition(sim::Partition{{}, {h.sentinels[0]}, false});
    h.sim.at(
        h.sim.now() + 10s, [&h, id] { h.sim.remove_partition(id); }, sim::EventClass::kFault);
  });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.observe(8s, [&] { h.sim.restart(h.servers[0]); });
  sim::NodeId stale = sim::kNoNode;
  h.observe(10s, [&] { stale = h.svc->sentinel(h.sentinels[0])->primary(); });
  std::optional<redis::PrimaryIs> answer;
  h.at(15s, [&](sim::Process& p) {
    auto m = p.call(h.sentinels[0], std::make_shared<redis::GetPrimary>(), 1s);
    if (m && m->as<redis::PrimaryIs>()) answer = *m->as<redis::PrimaryIs>();
  });
  h.run(16s);
  ASSERT_EQ(h.svc->current_primary(), h.servers[1]);
  EXPECT_EQ(stale, h.servers[0]) << "cut off, it still has the old configuration";
  EXPECT_EQ(h.svc->sentinel(h.sentinels[0])->primary(), h.servers[1]);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->primary, h.servers[1]);
  EXPECT_FALSE(h.server(0).is_primary());
}

// ------------------------------------------------------------- restarts --

TEST(RedisRestart, WithSentinelsACrashedPrimaryComesBackEmptyAsAReplicaOfTheNewPrimary) {
  RedisHarness h(sentinel_spec(1), 60s);
  h.at(100ms, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.observe(15s, [&] { h.sim.restart(h.servers[0]); });
  bool empty_at_restart = false, primary_at_restart = true;
  sim::NodeId following_at_restart = sim::kNoNode;
  h.observe(15s, [&] {  // after the restart (same instant, scheduled later)
    empty_at_restart = h.server(0).data().empty();
    primary_at_restart = h.server(0).is_primary();
    following_at_restart = h.server(0).following();
  });
  std::optional<Reply> second;
  h.at(18s, [&](sim::Process& p) { second = h.send(p, 1, h.acquire("v2")); });
  h.run(20s);

  ASSERT_EQ(h.svc->current_primary(), h.servers[1]);
  EXPECT_TRUE(empty_at_restart) << "no persistence: nothing survives the crash";
  EXPECT_FALSE(primary_at_restart);
  EXPECT_EQ(following_at_restart, h.servers[1]);
  EXPECT_TRUE(h.noted("redis-0", "restart"));
  // It resynchronised from the new primary and follows its writes.
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->nil) << "v1 was replicated before the crash and is still held";
  ASSERT_NE(h.entry(0, kKey), nullptr);
  EXPECT_EQ(h.entry(0, kKey)->value, "v1");
  EXPECT_EQ(counter_on(h, 0), std::optional<std::int64_t>(1));
  EXPECT_EQ(h.server(0).offset(), h.server(1).offset());
}

TEST(RedisRestart, WithSentinelsAPrimaryThatRestartsBeforeTheyNoticeComesBackEmptyAndWipesItsReplicas) {
  // Restarted within down_after, the primary is never seen down: it is
  // still the primary, empty, and its replicas follow it into emptiness
  // (the Redis docs warn about exactly this with Sentinel and no
  // persistence). The token counter starts again from 1.
  RedisHarness h(sentinel_spec(1, 5s), 60s);
  h.at(100ms, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.observe(2s, [&] { h.sim.restart(h.servers[0]); });
  std::optional<Reply> second;
  h.at(5s, [&](sim::Process& p) { second = h.send(p, 0, h.acquire("v2")); });
  bool replica_wiped = false;
  h.observe(5s, [&] { replica_wiped = h.server(1).data().empty(); });
  h.run(20s);
  EXPECT_EQ(h.svc->current_primary(), h.servers[0]);
  EXPECT_TRUE(h.server(0).is_primary());
  EXPECT_FALSE(h.noted("redis-1", "promoted"));
  EXPECT_TRUE(replica_wiped);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->integer, 1);
  // While redis-0 was down its live replica held the lease; the lease ended
  // when redis-0 came back as the primary without it.
  EXPECT_EQ(h.lease_end_of("v1")->at, 2s);
}

TEST(RedisRestart, WithSentinelsAReplicaThatRestartsResyncsFromThePrimary) {
  RedisHarness h(sentinel_spec(1), 60s);
  h.at(100ms, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(1s, [&] { h.sim.crash(h.servers[1]); });
  h.observe(1500ms, [&] { h.sim.restart(h.servers[1]); });
  h.run(3s);
  EXPECT_EQ(h.svc->current_primary(), h.servers[0]);
  EXPECT_FALSE(h.server(1).is_primary());
  ASSERT_NE(h.entry(1, kKey), nullptr);
  EXPECT_EQ(h.entry(1, kKey)->value, "v1");
}

TEST(RedisRestart, WithoutSentinelsACrashedPrimaryComesBackEmptyAsThePrimary) {
  RedisHarness h(spec_with(0, 0), 60s);
  std::optional<Reply> before, after;
  h.at(100ms, [&](sim::Process& p) { before = h.send(p, 0, h.acquire("v1")); });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.observe(2s, [&] { h.sim.restart(h.servers[0]); });
  h.at(3s, [&](sim::Process& p) { after = h.send(p, 0, h.acquire("v2")); });
  h.run(4s);
  ASSERT_TRUE(before && after);
  EXPECT_TRUE(h.server(0).is_primary());
  EXPECT_EQ(before->integer, 1);
  EXPECT_EQ(after->integer, 1) << "the counter was lost with the data: the token is handed out again";
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 1s) << "the lease ended with the crash";
}

TEST(RedisRestart, WithoutSentinelsAPrimaryThatRestartsEmptyWipesItsReplicas) {
  // Redis docs, "Safety of replication when master has persistence turned
  // off": a master that restarts with an empty data set is followed by its
  // replicas, which full-resync from it and are wiped too.
  RedisHarness h(spec_with(1, 0), 60s);
  h.at(100ms, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.observe(2s, [&] { h.sim.restart(h.servers[0]); });
  std::optional<Reply> after;
  h.at(5s, [&](sim::Process& p) { after = h.send(p, 0, h.acquire("v2")); });
  bool replica_wiped_before_v2 = false;
  h.observe(5s, [&] { replica_wiped_before_v2 = h.server(1).data().empty(); });
  h.run(6s);
  EXPECT_TRUE(h.server(0).is_primary());
  EXPECT_FALSE(h.server(1).is_primary());
  EXPECT_TRUE(replica_wiped_before_v2);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->integer, 1);
  // And it follows the restarted primary's new writes.
  ASSERT_NE(h.entry(1, kKey), nullptr);
  EXPECT_EQ(h.entry(1, kKey)->value, "v2");
  EXPECT_EQ(counter_on(h, 1), std::optional<std::int64_t>(1));
  EXPECT_EQ(h.server(1).offset(), h.server(0).offset());
}

// ------------------------------------------------------- failover fault --

TEST(FailoverFault, PromotesTheBestReplicaNowAndTheOldPrimaryLosesItsUnreplicatedWrites) {
  RedisSpec spec = spec_with(2, 0);
  spec.replication_delay = 1s;
  RedisHarness h(spec, 30s);
  std::optional<Reply> granted, on_old, on_new;
  h.at(0s, [&](sim::Process& p) { granted = h.send(p, 0, h.acquire("v1")); });
  bool ok = false;
  std::string why;
  h.observe(500ms, [&] { ok = h.svc->failover_now(why); });
  h.at(600ms, [&](sim::Process& p) {
    on_old = h.send(p, 0, h.acquire("v2"));
    on_new = h.send(p, 1, h.acquire("v3"));
  });
  h.run(3s);

  ASSERT_TRUE(ok) << why;
  EXPECT_EQ(h.name(h.svc->current_primary()), "redis-1");
  EXPECT_FALSE(h.server(0).is_primary());
  EXPECT_EQ(h.server(0).following(), h.servers[1]);
  EXPECT_EQ(h.server(2).following(), h.servers[1]);
  // The old primary resynchronised from the new one: the SET and INCR it
  // had acknowledged but not yet streamed are gone everywhere.
  EXPECT_EQ(h.entry(0, kKey) != nullptr ? h.entry(0, kKey)->value : "", "v3");
  EXPECT_EQ(counter_on(h, 0), std::optional<std::int64_t>(1));
  ASSERT_TRUE(granted && on_old && on_new);
  EXPECT_EQ(granted->integer, 1);
  EXPECT_EQ(on_old->error.rfind("READONLY", 0), 0u) << "the demoted primary refuses writes";
  EXPECT_EQ(on_new->integer, 1) << "the new primary never saw the INCR: token 1 again";
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 500ms);
  EXPECT_EQ(end->reason, "redis-1, the current primary, does not hold it");
  ASSERT_EQ(h.inbox.switches.size(), 1u);
  EXPECT_EQ(h.inbox.switches[0].primary, h.servers[1]);
}

TEST(FailoverFault, AnOldPrimaryCutOffFromTheNewOneResyncsOnceItCanReachIt) {
  // The failover happens while redis-0 cannot reach redis-1: its request for
  // a full resync is lost. Like Redis's replicationCron, it must keep
  // trying, and lose its unreplicated write once the partition heals.
  RedisSpec spec = spec_with(1, 0);
  spec.replication_delay = 1s;
  RedisHarness h(spec, 30s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(300ms, [&] {
    const std::uint64_t id = h.sim.add_partition(sim::Partition{{{h.servers[0]}, {h.servers[1]}}, {}, false});
    h.sim.at(
        h.sim.now() + 2s, [&h, id] { h.sim.remove_partition(id); }, sim::EventClass::kFault);
  });
  std::string why;
  h.observe(500ms, [&] { h.svc->failover_now(why); });
  bool stale_while_cut_off = false;
  h.observe(2s, [&] { stale_while_cut_off = h.entry(0, kKey) != nullptr; });
  std::optional<Reply> on_new;
  h.at(5s, [&](sim::Process& p) { on_new = h.send(p, 1, h.acquire("v2")); });
  h.run(10s);

  EXPECT_TRUE(stale_while_cut_off) << "cut off, it still has the write it acknowledged";
  ASSERT_TRUE(on_new.has_value());
  EXPECT_EQ(on_new->integer, 1);
  ASSERT_NE(h.entry(0, kKey), nullptr);
  EXPECT_EQ(h.entry(0, kKey)->value, "v2") << "resynchronised and following the new primary";
  EXPECT_EQ(counter_on(h, 0), std::optional<std::int64_t>(1));
  EXPECT_EQ(h.server(0).offset(), h.server(1).offset());
}

TEST(FailoverFault, PromotesTheLiveReplicaWithTheLargestOffsetEvenAtAHigherIndex) {
  RedisHarness h(spec_with(2, 0), 30s);
  h.observe(0s, [&] { h.sim.add_partition(sim::Partition{{{h.servers[0]}, {h.servers[1]}}, {}, false}); });
  h.at(100ms, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  std::string why;
  h.observe(1s, [&] { h.svc->failover_now(why); });
  h.run(2s);
  EXPECT_EQ(h.name(h.svc->current_primary()), "redis-2");
  EXPECT_FALSE(h.lease_end_of("v1").has_value());
}

TEST(FailoverFault, SkipsWithoutALiveReplica) {
  RedisHarness h(spec_with(1, 0), 30s);
  bool ok = true;
  std::string why;
  h.observe(100ms, [&] { h.sim.crash(h.servers[1]); });
  h.observe(200ms, [&] { ok = h.svc->failover_now(why); });
  h.run(1s);
  EXPECT_FALSE(ok);
  EXPECT_EQ(why, "no live replica to promote");
  EXPECT_EQ(h.svc->current_primary(), h.servers[0]);
}

TEST(FailoverFault, WithSentinelsTheFailoverIsStepwiseAndTheOldPrimaryStaysWritableUntilConverted) {
  // Redis 7.0 sentinel.c: REPLICAOF NO ONE, +switch-master once an INFO
  // (every 1 s during the failover) shows the promotion, and the old primary
  // converted only after reporting role master for more than 8 s, sampled
  // by INFO every 10 s after the switch.
  RedisHarness h(sentinel_spec(1), 30s);
  std::string why;
  h.observe(1s, [&] { ASSERT_TRUE(h.svc->failover_now(why)) << why; });
  std::string second_why;
  h.observe(1100ms, [&] { EXPECT_FALSE(h.svc->failover_now(second_why)); });
  sim::NodeId view_before_switch = sim::kNoNode;
  h.observe(1500ms, [&] { view_before_switch = h.svc->sentinel(h.sentinels[0])->primary(); });
  bool both_primaries = false;
  h.observe(5s, [&] { both_primaries = h.server(0).is_primary() && h.server(1).is_primary(); });
  std::optional<Reply> late_write;
  h.at(6s, [&](sim::Process& p) { late_write = h.send(p, 0, h.acquire("lost")); });
  h.run(16s);
  EXPECT_NE(second_why.find("INPROG"), std::string::npos) << second_why;
  EXPECT_EQ(view_before_switch, h.servers[0]) << "+switch-master waits for the promotion to show in INFO";
  EXPECT_TRUE(both_primaries) << "after the switch the old primary is still a primary";
  ASSERT_TRUE(late_write.has_value());
  EXPECT_TRUE(late_write->error.empty() && !late_write->nil) << "the old primary still accepts writes";
  EXPECT_EQ(h.svc->current_primary(), h.servers[1]);
  for (sim::NodeId s : h.sentinels) EXPECT_EQ(h.svc->sentinel(s)->primary(), h.servers[1]);
  EXPECT_FALSE(h.server(0).is_primary()) << "converted about 10 s after the switch";
  EXPECT_FALSE(h.server(0).holds(h.sc.lock.key, "lost")) << "the write it accepted meanwhile is gone after the resync";
}

// -------------------------------------------------------- counter_reset --

TEST(CounterReset, TheNextTokenIsTheValuePlusOne) {
  RedisHarness h(spec_with(1, 0), 30s);
  std::optional<Reply> t1, t2;
  h.at(0s, [&](sim::Process& p) {
    t1 = h.send(p, 0, h.acquire("v1"));
    h.send(p, 0, h.release("v1"));
  });
  bool ok = false;
  std::string why;
  h.observe(1s, [&] { ok = h.svc->reset_counter(41, why); });
  h.at(2s, [&](sim::Process& p) { t2 = h.send(p, 0, h.acquire("v2")); });
  h.run(3s);
  ASSERT_TRUE(ok) << why;
  ASSERT_TRUE(t1 && t2);
  EXPECT_EQ(t1->integer, 1);
  EXPECT_EQ(t2->integer, 42);
  EXPECT_EQ(counter_on(h, 1), std::optional<std::int64_t>(42)) << "the rebuilt counter is replicated";
}

TEST(CounterReset, ARebuildBelowTheLastTokenHandsOutOldTokensAgain) {
  RedisHarness h(spec_with(0, 0), 30s);
  std::vector<std::int64_t> tokens;
  h.at(0s, [&](sim::Process& p) {
    for (int i = 0; i < 3; ++i) {
      const std::string v = "v" + std::to_string(i);
      tokens.push_back(h.send(p, 0, h.acquire(v))->integer.value_or(-1));
      h.send(p, 0, h.release(v));
    }
  });
  std::string why;
  h.observe(1s, [&] { h.svc->reset_counter(0, why); });
  h.at(2s, [&](sim::Process& p) { tokens.push_back(h.send(p, 0, h.acquire("v3"))->integer.value_or(-1)); });
  h.run(3s);
  EXPECT_EQ(tokens, (std::vector<std::int64_t>{1, 2, 3, 1}));
}

TEST(CounterReset, SkipsWhileThePrimaryIsDown) {
  RedisHarness h(spec_with(1, 0), 30s);
  bool ok = true;
  std::string why;
  h.observe(100ms, [&] { h.sim.crash(h.servers[0]); });
  h.observe(200ms, [&] { ok = h.svc->reset_counter(5, why); });
  h.run(1s);
  EXPECT_FALSE(ok);
  EXPECT_EQ(why, "the primary is down");
}

// --------------------------------------------------------- token script --

TEST(TokenScript, NoIncrWhenSetNxFailsSoTheCounterEqualsTheNumberOfSuccessfulAcquisitions) {
  RedisHarness h(spec_with(1, 0), 30s);
  std::vector<Reply> replies;
  h.at(0s, [&](sim::Process& p) {
    replies.push_back(*h.send(p, 0, h.acquire("a")));  // granted
    replies.push_back(*h.send(p, 0, h.acquire("b")));  // SET NX fails
    replies.push_back(*h.send(p, 0, h.acquire("c")));  // SET NX fails
    replies.push_back(*h.send(p, 0, h.release("a")));
    replies.push_back(*h.send(p, 0, h.acquire("d")));  // granted
    replies.push_back(*h.send(p, 0, h.acquire("e")));  // SET NX fails
  });
  h.run(1s);
  ASSERT_EQ(replies.size(), 6u);
  EXPECT_EQ(replies[0].integer, 1);
  EXPECT_TRUE(replies[1].nil);
  EXPECT_TRUE(replies[2].nil);
  EXPECT_EQ(replies[3].integer, 1);
  EXPECT_EQ(replies[4].integer, 2);
  EXPECT_TRUE(replies[5].nil);
  EXPECT_EQ(counter_on(h, 0), std::optional<std::int64_t>(2));
  EXPECT_EQ(counter_on(h, 1), std::optional<std::int64_t>(2));
  EXPECT_EQ(h.history.grants.size(), 2u);
  EXPECT_EQ(h.server(0).offset(), 3u) << "two acquisitions and one release; failed SET NX writes nothing";
}

TEST(TokenScript, WithoutATokenTheAcquireAnswersOkAndLeavesNoCounter) {
  RedisHarness h(spec_with(0, 0), 30s);
  std::optional<Reply> r;
  h.at(0s, [&](sim::Process& p) { r = h.send(p, 0, h.acquire("a", /*with_token=*/false)); });
  h.run(1s);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text, "OK");
  EXPECT_FALSE(r->integer.has_value());
  EXPECT_EQ(h.entry(0, kCounter), nullptr);
  ASSERT_EQ(h.history.grants.size(), 1u);
  EXPECT_FALSE(h.history.grants[0].token.has_value());
}

TEST(TokenScript, RenewAndReleaseAreCompareAndSetOnTheValue) {
  RedisHarness h(spec_with(0, 0), 30s);
  std::vector<std::int64_t> answers;
  h.at(0s, [&](sim::Process& p) {
    h.send(p, 0, h.acquire("mine"));
    answers.push_back(h.send(p, 0, h.renew("other"))->integer.value_or(-1));
    answers.push_back(h.send(p, 0, h.release("other"))->integer.value_or(-1));
    answers.push_back(h.send(p, 0, h.renew("mine"))->integer.value_or(-1));
    answers.push_back(h.send(p, 0, h.release("mine"))->integer.value_or(-1));
    answers.push_back(h.send(p, 0, h.release("mine"))->integer.value_or(-1));
  });
  h.run(1s);
  EXPECT_EQ(answers, (std::vector<std::int64_t>{0, 0, 1, 1, 0}));
}

TEST(TokenScript, ARenewalSetsTheDeadlineToNowPlusTheTtl) {
  RedisHarness h(spec_with(0, 0), 10s);
  h.at(0s, [&](sim::Process& p) {
    h.send(p, 0, h.acquire("v1"));
    p.sleep(4s);
    h.send(p, 0, h.renew("v1"));
  });
  h.run(20s);
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  // Acquired at 1 ms (sent at 0), renewal sent at 4.002 s, applied at 4.003 s.
  EXPECT_EQ(end->at, 14s + 3ms);
}

TEST(TokenScript, AReplicaAnswersWritesWithReadonly) {
  RedisHarness h(spec_with(1, 0), 10s);
  std::optional<Reply> r;
  h.at(0s, [&](sim::Process& p) { r = h.send(p, 1, h.acquire("v1")); });
  h.run(1s);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->error.rfind("READONLY", 0), 0u);
  EXPECT_TRUE(h.history.grants.empty());
}

}  // namespace
}  // namespace fencesim::testing
