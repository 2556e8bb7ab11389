// Expiry of the Redis lease service: which clock decides, what a clock step
// of the primary does to a lease, how replicas treat keys that are logically
// expired, and what a primary crash does to writes not yet replicated.
//
// Timing in these tests: the network latency is a fixed 1 ms, so a command
// sent at true time t is applied at t + 1 ms and a write reaches a replica
// replication_delay + 1 ms after the primary applied it.
#include <gtest/gtest.h>

#include "tests/models/redis/redis_harness.hpp"

namespace fencesim::testing {
namespace {

TEST(RedisExpiry, OnTheWallClockALeaseEndsWhenThePrimarysWallClockReachesTheAbsoluteDeadline) {
  RedisHarness h(spec_with(0, 0), 10s);
  std::optional<Reply> got;
  h.at(0s, [&](sim::Process& p) { got = h.send(p, 0, h.acquire("v1")); });
  const redis::Entry* stored = nullptr;
  Time expire_at{0};
  h.observe(5s, [&] {
    stored = h.entry(0, kKey);
    if (stored != nullptr) expire_at = stored->expire_at;
  });
  h.run(12s);

  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->integer, 1);
  ASSERT_NE(stored, nullptr);
  // SET PX 10000 applied at 1 ms: Redis stores the absolute Unix time.
  EXPECT_EQ(expire_at, 10s + 1ms);
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 10s + 1ms);
  EXPECT_EQ(end->reason, "expired on redis-0 wall clock");
  // The active expiry cycle (every 100 ms) has deleted it since.
  EXPECT_EQ(h.entry(0, kKey), nullptr);
}

TEST(RedisExpiry, AForwardJumpOfThePrimarysWallClockExpiresTheLeaseAtTheJump) {
  RedisHarness h(spec_with(0, 0), 10s);
  std::optional<Reply> first, renewal, second;
  h.at(0s, [&](sim::Process& p) { first = h.send(p, 0, h.acquire("v1")); });
  // 3.05 s: between two active-expiry cycles, so it is the jump itself, not
  // a deletion, that ends the lease.
  h.observe(3050ms, [&] { h.sim.clock_jump(h.servers[0], sim::ClockKind::kWall, 25s); });
  h.at(3500ms, [&](sim::Process& p) {
    renewal = h.send(p, 0, h.renew("v1"));
    second = h.send(p, 0, h.acquire("v2"));
  });
  h.run(5s);

  ASSERT_TRUE(first && renewal && second);
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 3050ms) << "the lease ends at the jump, 7 s before its TTL";
  EXPECT_EQ(end->reason, "expired on redis-0 wall clock");
  EXPECT_EQ(renewal->integer, 0) << "the compare-and-PEXPIRE finds the key gone";
  EXPECT_EQ(second->integer, 2) << "a second client is granted the lock at once";
}

TEST(RedisExpiry, ABackwardJumpOfThePrimarysWallClockExtendsTheLease) {
  RedisHarness h(spec_with(0, 0), 10s);
  std::optional<Reply> at_12s, other_at_12s;
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(3s, [&] { h.sim.clock_jump(h.servers[0], sim::ClockKind::kWall, -5s); });
  h.at(12s, [&](sim::Process& p) {
    at_12s = h.send(p, 0, h.get(kKey));
    other_at_12s = h.send(p, 0, h.acquire("v2"));
  });
  h.run(20s);

  ASSERT_TRUE(at_12s && other_at_12s);
  EXPECT_EQ(at_12s->text, "v1") << "2 s past its TTL in true time, the key is still there";
  EXPECT_TRUE(other_at_12s->nil) << "and nobody else can take the lock";
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 15s + 1ms) << "the wall deadline 10.001 s is read 5 s late";
}

TEST(RedisExpiry, OnTheMonotonicClockAWallJumpOfThePrimaryChangesNothing) {
  RedisSpec spec = spec_with(0, 0);
  spec.expiry_clock = sim::ClockKind::kMonotonic;
  RedisHarness h(spec, 10s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(3s, [&] { h.sim.clock_jump(h.servers[0], sim::ClockKind::kWall, 25s); });
  h.run(12s);

  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 10s + 1ms);
  EXPECT_EQ(end->reason, "expired on redis-0 monotonic clock");
}

TEST(RedisExpiry, OnTheMonotonicClockAForwardMonotonicJumpOfThePrimaryExpiresTheLeaseAtTheJump) {
  RedisSpec spec = spec_with(0, 0);
  spec.expiry_clock = sim::ClockKind::kMonotonic;
  RedisHarness h(spec, 10s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(4s, [&] { h.sim.clock_jump(h.servers[0], sim::ClockKind::kMonotonic, 20s); });
  h.run(12s);

  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 4s);
}

TEST(RedisExpiry, OnTheWallClockReplicasKeepThePrimarysAbsoluteDeadline) {
  RedisSpec spec = spec_with(1, 0);
  RedisHarness h(spec, 10s);
  // The replica's wall clock is 2 s ahead: it holds the same absolute
  // deadline (PXAT), so it considers the key expired 2 s earlier in true time.
  h.observe(0s, [&] { h.sim.clock_jump(h.servers[1], sim::ClockKind::kWall, 2s); });
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  Time primary_deadline{0}, replica_deadline{0};
  h.observe(1s, [&] {
    primary_deadline = h.entry(0, kKey)->expire_at;
    replica_deadline = h.entry(1, kKey)->expire_at;
  });
  h.run(2s);
  EXPECT_EQ(primary_deadline, 10s + 1ms);
  EXPECT_EQ(replica_deadline, 10s + 1ms);
}

TEST(RedisExpiry, OnTheMonotonicClockEachNodeComputesItsOwnDeadlineWhenItApplies) {
  RedisSpec spec = spec_with(1, 0);
  spec.expiry_clock = sim::ClockKind::kMonotonic;
  spec.replication_delay = 5ms;
  RedisHarness h(spec, 10s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  Time primary_deadline{0}, replica_deadline{0};
  h.observe(1s, [&] {
    primary_deadline = h.entry(0, kKey)->expire_at;
    replica_deadline = h.entry(1, kKey)->expire_at;
  });
  h.run(2s);
  EXPECT_EQ(primary_deadline, 10s + 1ms);
  // Applied 5 ms (replication delay) + 1 ms (latency) later on the replica.
  EXPECT_EQ(replica_deadline, 10s + 7ms);
}

TEST(RedisExpiry, AReplicaHidesALogicallyExpiredKeyButKeepsItUntilThePrimarysDelArrives) {
  RedisHarness h(spec_with(1, 0), 2s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  // The replica's wall clock runs 5 s ahead from 1 s on: for it, the key's
  // absolute deadline (2.001 s) has passed, for the primary it has not.
  h.observe(1s, [&] { h.sim.clock_jump(h.servers[1], sim::ClockKind::kWall, 5s); });
  std::optional<Reply> replica_get, primary_get;
  bool replica_has_it_at_1500ms = false;
  h.at(1500ms, [&](sim::Process& p) {
    replica_has_it_at_1500ms = h.entry(1, kKey) != nullptr;
    replica_get = h.send(p, 1, h.get(kKey));
    primary_get = h.send(p, 0, h.get(kKey));
  });
  bool replica_has_it_before_del = false, primary_has_it_after_expiry = true;
  // The primary's active expiry runs every 100 ms: it deletes the key at
  // 2.1 s and the DEL reaches the replica 6 ms later.
  h.observe(2100ms, [&] { replica_has_it_before_del = h.entry(1, kKey) != nullptr; });
  h.observe(2105ms, [&] { primary_has_it_after_expiry = h.entry(0, kKey) != nullptr; });
  h.run(3s);

  EXPECT_TRUE(replica_has_it_at_1500ms) << "replicas never delete expired keys on their own";
  ASSERT_TRUE(replica_get && primary_get);
  EXPECT_TRUE(replica_get->nil) << "but a read on the replica hides it (expireIfNeeded on a replica)";
  EXPECT_EQ(primary_get->text, "v1");
  EXPECT_TRUE(replica_has_it_before_del);
  EXPECT_FALSE(primary_has_it_after_expiry);
  EXPECT_EQ(h.entry(1, kKey), nullptr) << "the primary's DEL has been applied";
  EXPECT_EQ(h.server(1).offset(), h.server(0).offset());
}

TEST(RedisExpiry, AReplicaAppliesTheReleasesDelFromThePrimary) {
  RedisHarness h(spec_with(1, 0), 10s);
  std::optional<Reply> released;
  h.at(0s, [&](sim::Process& p) {
    h.send(p, 0, h.acquire("v1"));
    p.sleep(1s);
    released = h.send(p, 0, h.release("v1"));
  });
  bool replica_had_it = false;
  h.observe(500ms, [&] { replica_had_it = h.entry(1, kKey) != nullptr; });
  h.run(2s);
  ASSERT_TRUE(released);
  EXPECT_EQ(released->integer, 1);
  EXPECT_TRUE(replica_had_it);
  EXPECT_EQ(h.entry(1, kKey), nullptr);
  EXPECT_EQ(h.integer_at(1, kKey + ":token"), std::optional<std::int64_t>(1)) << "the counter stays";
}

TEST(RedisExpiry, APrimaryCrashBeforeTheReplicationDelayLosesTheWrite) {
  RedisSpec spec = spec_with(1, 0);
  spec.replication_delay = 1s;
  RedisHarness h(spec, 10s);
  std::optional<Reply> got;
  h.at(0s, [&](sim::Process& p) { got = h.send(p, 0, h.acquire("v1")); });
  h.observe(500ms, [&] { h.sim.crash(h.servers[0]); });
  h.run(3s);

  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->integer, 1) << "the client was told it holds the lock";
  EXPECT_EQ(h.entry(1, kKey), nullptr) << "the replica never got the SET";
  EXPECT_EQ(h.entry(1, kKey + ":token"), nullptr) << "nor the INCR";
  EXPECT_EQ(h.server(1).offset(), 0u);
  // With the primary down and no promotion, the lease is held only while a
  // live replica holds it: none does, so it ended with the crash.
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 500ms);
  EXPECT_EQ(end->reason, "redis-0 is down and no live replica holds it");
}

TEST(RedisExpiry, AFullResyncOfOneReplicaDoesNotHandTheOthersWritesBeforeTheReplicationDelay) {
  // redis-2 restarts and takes a full resync, which carries the 0 s write
  // at once. redis-1 must still get it only through the stream, 3 s after
  // the write — so a primary crash at 2 s loses it on redis-1.
  RedisSpec spec = spec_with(2, 0);
  spec.replication_delay = 3s;
  RedisHarness h(spec, 30s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(500ms, [&] { h.sim.crash(h.servers[2]); });
  h.observe(600ms, [&] { h.sim.restart(h.servers[2]); });
  bool synced_replica_has_it = false;
  h.observe(1500ms, [&] { synced_replica_has_it = h.entry(2, kKey) != nullptr; });
  h.observe(2s, [&] { h.sim.crash(h.servers[0]); });
  h.run(5s);
  EXPECT_TRUE(synced_replica_has_it);
  EXPECT_EQ(h.entry(1, kKey), nullptr) << "the other replica never got the write";
  EXPECT_EQ(h.server(1).offset(), 0u);
}

TEST(RedisExpiry, APrimaryCrashAfterReplicationLeavesTheLeaseHeldByTheReplicaUntilItsTtl) {
  RedisSpec spec = spec_with(1, 0);
  spec.replication_delay = 1s;
  RedisHarness h(spec, 10s);
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(1500ms, [&] { h.sim.crash(h.servers[0]); });
  h.run(12s);

  ASSERT_NE(h.entry(1, kKey), nullptr);
  EXPECT_EQ(h.entry(1, kKey)->value, "v1") << "nobody deletes it on the replica";
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 10s + 1ms) << "held by the live replica until the absolute deadline";
}

TEST(RedisExpiry, ARenewalThatReachesAPausedPrimaryBeforeTheDeadlineIsRefusedWhenThePauseEndsAfterIt) {
  // A pause is a stalled event loop: the command waits in the inbox, and by
  // the time Redis runs it the key is logically expired (expireIfNeeded).
  RedisHarness h(spec_with(0, 0), 10s);
  std::optional<Reply> renewal;
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  h.observe(8s, [&] { h.sim.pause(h.servers[0], 3s); });
  h.at(9s, [&](sim::Process& p) { renewal = h.send(p, 0, h.renew("v1"), 5s); });
  h.run(12s);
  ASSERT_TRUE(renewal.has_value());
  EXPECT_EQ(renewal->integer, 0);
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 10s + 1ms) << "logical expiry ends the lease, paused or not";
}

TEST(RedisExpiry, APromotedReplicaExpiresKeysOnItsOwnWallClock) {
  // The replica's wall clock is 5 s ahead. It holds the primary's absolute
  // deadline (10.001 s); once promoted, it reads that deadline on its own
  // clock, which passed it at true time 5.001 s.
  RedisHarness h(spec_with(1, 0), 10s);
  h.observe(0s, [&] { h.sim.clock_jump(h.servers[1], sim::ClockKind::kWall, 5s); });
  h.at(0s, [&](sim::Process& p) { h.send(p, 0, h.acquire("v1")); });
  std::string why;
  h.observe(3s, [&] { h.svc->failover_now(why); });
  bool held_after_failover = false;
  h.observe(4s, [&] { held_after_failover = h.server(1).holds(kKey, "v1"); });
  h.run(6s);
  EXPECT_TRUE(held_after_failover);
  const auto end = h.lease_end_of("v1");
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->at, 5001ms);
  EXPECT_EQ(end->reason, "expired on redis-1 wall clock");
  EXPECT_EQ(h.entry(1, kKey), nullptr) << "and, as the primary now, deletes it";
  EXPECT_EQ(h.entry(0, kKey), nullptr) << "its DEL reaches the demoted primary";
}

}  // namespace
}  // namespace fencesim::testing
