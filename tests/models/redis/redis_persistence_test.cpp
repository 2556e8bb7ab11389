// Persistence of the Redis lease service (lock.persistence, crash power_loss):
// what a restarted node comes back with under each appendfsync policy, after
// a process crash and after a power loss, and with which expiry; and when a
// lease ends at the service while nodes are down (a single primary's AOF, a
// down Redlock primary blocking others).
//
// Timing: the network latency is a fixed 1 ms, so a command sent at true
// time t is applied at t + 1 ms. Under aof_everysec the fsync runs every
// second of the node's monotonic clock from time 0 (at 1 s, 2 s, …).
#include <gtest/gtest.h>

#include "tests/models/redis/redis_harness.hpp"

namespace fencesim::testing {
namespace {

RedisSpec persistent(RedisPersistence p) {
  RedisSpec s = spec_with(0, 0);
  s.persistence = p;
  return s;
}

/// Two grants (tokens 1 and 2, the second released) before 1 s, then a third
/// at 1.5 s (token 3); a crash of redis-0 at 1.8 s and a restart at 2.5 s.
/// Returns the counter and lock key redis-0 has after the restart.
struct AfterRestart {
  std::optional<std::int64_t> counter;
  std::string lock_value;  ///< "" when the lock key is missing
};
AfterRestart crash_after_three_grants(RedisPersistence p, bool power_loss, Duration ttl = 10s) {
  RedisHarness h(persistent(p), ttl);
  h.at(0s, [&](sim::Process& pr) {
    h.send(pr, 0, h.acquire("v1"));
    h.send(pr, 0, h.release("v1"));
    h.send(pr, 0, h.acquire("v2"));
    h.send(pr, 0, h.release("v2"));
  });
  h.at(1500ms, [&](sim::Process& pr) { h.send(pr, 0, h.acquire("v3")); });
  h.observe(1800ms, [&] {
    if (power_loss) {
      h.sim.power_loss(h.servers[0]);
    } else {
      h.sim.crash(h.servers[0]);
    }
  });
  h.observe(2500ms, [&] { h.sim.restart(h.servers[0]); });
  AfterRestart out;
  h.observe(2600ms, [&] {
    out.counter = h.integer_at(0, kCounter);
    const redis::Entry* e = h.entry(0, kKey);
    out.lock_value = e != nullptr ? e->value : "";
  });
  h.run(3s);
  return out;
}

TEST(RedisPersistence, WithoutPersistenceARestartedNodeIsEmptyAfterEitherCrash) {
  for (bool power_loss : {false, true}) {
    const AfterRestart r = crash_after_three_grants(RedisPersistence::kNone, power_loss);
    EXPECT_EQ(r.counter, std::nullopt) << "power_loss " << power_loss;
    EXPECT_EQ(r.lock_value, "") << "power_loss " << power_loss;
  }
}

TEST(RedisPersistence, AofAlwaysKeepsEveryAcknowledgedWriteThroughAPowerLoss) {
  for (bool power_loss : {false, true}) {
    const AfterRestart r = crash_after_three_grants(RedisPersistence::kAofAlways, power_loss);
    EXPECT_EQ(r.counter, std::optional<std::int64_t>(3)) << "power_loss " << power_loss;
    EXPECT_EQ(r.lock_value, "v3") << "power_loss " << power_loss;
  }
}

TEST(RedisPersistence, AofEverysecLosesNothingAcknowledgedInAProcessCrash) {
  const AfterRestart r = crash_after_three_grants(RedisPersistence::kAofEverysec, false);
  EXPECT_EQ(r.counter, std::optional<std::int64_t>(3));
  EXPECT_EQ(r.lock_value, "v3");
}

TEST(RedisPersistence, AofEverysecLosesTheWritesSinceTheLastFsyncInAPowerLoss) {
  // The fsync at 1 s has tokens 1 and 2 and the release of v2; the grant at
  // 1.5 s (token 3, key v3) was written but not fsynced when power went.
  const AfterRestart r = crash_after_three_grants(RedisPersistence::kAofEverysec, true);
  EXPECT_EQ(r.counter, std::optional<std::int64_t>(2));
  EXPECT_EQ(r.lock_value, "");
}

TEST(RedisPersistence, ARestartedNodeExpiresKeysAtTheirStoredWallClockDeadline) {
  // Key set at 1 ms with a 3 s TTL: its deadline is the wall time 3.001 s.
  // The node is down from 1 s to 2 s and comes back with the key; it is
  // still there at 2.5 s and gone by 3.2 s (the active cycle deletes it).
  RedisHarness h(persistent(RedisPersistence::kAofAlways), 3s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.observe(2s, [&] { h.sim.restart(h.servers[0]); });
  Time deadline{0};
  bool there_after_restart = false;
  h.observe(2500ms, [&] {
    const redis::Entry* e = h.entry(0, kKey);
    there_after_restart = e != nullptr && e->value == "v1";
    if (e != nullptr) deadline = e->expire_at;
  });
  h.run(3200ms);
  EXPECT_TRUE(there_after_restart);
  EXPECT_EQ(deadline, 3s + 1ms);
  EXPECT_EQ(h.entry(0, kKey), nullptr);
  EXPECT_TRUE(h.noted("redis-0", "restart"));
}

TEST(RedisPersistence, AMonotonicExpiryIsReanchoredFromTheStoredWallClockDeadline) {
  // expiry_clock monotonic: the AOF stores the wall deadline (PXAT). The
  // node's wall clock is stepped 1 s ahead while it is down, so after the
  // restart the key has 1 s less to live than it would have had: set at
  // 1 ms with a 5 s TTL (wall deadline 5.001 s), back at 2 s with the wall
  // clock at 3 s, it has 2.001 s left, until the monotonic reading 4.001 s.
  RedisSpec spec = persistent(RedisPersistence::kAofAlways);
  spec.expiry_clock = sim::ClockKind::kMonotonic;
  RedisHarness h(spec, 5s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(1s, [&] { h.sim.crash(h.servers[0]); });
  h.observe(1500ms, [&] { h.sim.clock_jump(h.servers[0], sim::ClockKind::kWall, 1s); });
  h.observe(2s, [&] { h.sim.restart(h.servers[0]); });
  std::optional<Time> deadline;
  h.observe(2s + 1ms, [&] {
    if (const redis::Entry* e = h.entry(0, kKey)) deadline = e->expire_at;
  });
  h.run(2500ms);
  ASSERT_TRUE(deadline.has_value());
  EXPECT_EQ(*deadline, Time{4s + 1ms});  // not 5.001 s: re-anchored from the wall clock
}

TEST(RedisPersistence, TheLeaseIsHeldWhileTheDownPrimarysAofHoldsIt) {
  // Under aof_always the lease survives the primary's crash (no other client
  // can take the lock before it is back, and it comes back with the key);
  // without persistence it ends at the crash.
  for (RedisPersistence p : {RedisPersistence::kAofAlways, RedisPersistence::kNone}) {
    RedisHarness h(persistent(p), 10s);
    h.at(0s, [&](sim::Process& pr) { h.send(pr, 0, h.acquire("v1")); });
    h.observe(1s, [&] { h.sim.power_loss(h.servers[0]); });
    h.observe(2s, [&] { h.sim.restart(h.servers[0]); });
    h.run(5s);
    const auto end = h.lease_end_of("v1");
    if (p == RedisPersistence::kNone) {
      ASSERT_TRUE(end.has_value());
      EXPECT_EQ(end->at, 1s);
    } else {
      EXPECT_FALSE(end.has_value()) << "ended at " << sim::format_duration(end->at) << ": " << end->reason;
    }
  }
}

TEST(RedisPersistence, AReplicaAfterAFullResyncKeepsThePrimarysDataAcrossAPowerLoss) {
  // A replica's AOF is rewritten from the full resync (durable at once):
  // a power loss of the replica right after it loses nothing it had synced.
  RedisSpec spec = spec_with(1, 0);
  spec.persistence = RedisPersistence::kAofEverysec;
  RedisHarness h(spec, 10s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(300ms, [&] { h.sim.crash(h.servers[1]); });
  h.observe(400ms, [&] { h.sim.restart(h.servers[1]); });  // resyncs from redis-0
  // Its next fsync would be at 1.4 s; power goes at 0.6 s.
  h.observe(600ms, [&] { h.sim.power_loss(h.servers[1]); });
  h.observe(700ms, [&] { h.sim.restart(h.servers[1]); });
  std::optional<std::int64_t> counter;
  h.observe(700ms, [&] { counter = h.integer_at(1, kCounter); });
  h.run(3s);
  EXPECT_EQ(counter, std::optional<std::int64_t>(1));
}

TEST(RedlockLeaseEnd, ADownPrimaryBlocksOthersUntilItComesBackWithoutTheValue) {
  // Three primaries hold v1; two crash (a holder and a down primary still
  // block, 3 of 3); the first comes back empty at 2 s (2 of 3 still block);
  // the second comes back empty at 3 s: only redis-0 holds it, 1 of 3.
  RedisSpec spec;
  spec.redlock = 3;
  spec.replicas = 0;
  spec.sentinels = 0;
  spec.token = RedisToken::kNone;
  RedisHarness h(spec, 10s);
  h.at(0s, [&](sim::Process& p) {
    for (int i = 0; i < 3; ++i) h.send(p, i, h.acquire("v1", false));
  });
  h.observe(1s, [&] { h.sim.crash(h.servers[1]); });
  h.observe(1s, [&] { h.sim.crash(h.servers[2]); });
  h.observe(2s, [&] { h.sim.restart(h.servers[1]); });
  std::optional<LeaseEndRecord> at_2500ms;
  h.observe(2500ms, [&] { at_2500ms = h.lease_end_of("v1"); });
  h.observe(3s, [&] { h.sim.restart(h.servers[2]); });
  h.run(4s);
  ASSERT_NE(h.grant_of("v1"), nullptr);
  EXPECT_FALSE(at_2500ms.has_value()) << "ended at " << sim::format_duration(at_2500ms->at) << ": "
                                      << at_2500ms->reason;
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 3s);
  EXPECT_EQ(end->reason, "fewer than a majority of primaries hold it or are down");
}

}  // namespace
}  // namespace fencesim::testing
