// min-replicas-to-write / min-replicas-max-lag (Redis 7.0 replication.c
// refreshGoodSlavesCount and replicationSendAck, server.c processCommand),
// poked at directly on the servers.
#include <gtest/gtest.h>

#include "tests/models/redis/redis_harness.hpp"

namespace fencesim::testing {
namespace {

RedisSpec min_replicas_spec(int min, Duration max_lag) {
  RedisSpec s = spec_with(2, 0);
  s.min_replicas_to_write = min;
  s.min_replicas_max_lag = max_lag;
  return s;
}

/// Cuts redis-0 off from both replicas at `cut` and acquires a fresh value
/// on it every 500 ms until 30 s; returns the last time an acquire was
/// granted and the first NOREPLICAS refusal (-1 s: none).
struct Outcome {
  Time last_grant{-1s};
  Time first_refusal{-1s};
};
Outcome cut_off_primary(const RedisSpec& spec, Time cut) {
  RedisHarness h(spec, 60s);
  h.observe(cut, [&] {
    h.sim.add_partition(sim::Partition{{{h.servers[0]}, {h.servers[1], h.servers[2]}}, {}, false});
  });
  Outcome out;
  h.at(100ms, [&](sim::Process& p) {
    for (int i = 0; h.sim.now() < 30s; ++i) {
      const std::string value = "v" + std::to_string(i);
      if (auto r = h.send(p, 0, h.acquire(value))) {
        if (r->error.empty() && !r->nil) {
          out.last_grant = h.sim.now();
          h.send(p, 0, h.release(value));
        } else if (r->error.rfind("NOREPLICAS", 0) == 0 && out.first_refusal < Time{0}) {
          out.first_refusal = h.sim.now();
        }
      }
      p.sleep(500ms);
    }
  });
  h.run(31s);
  return out;
}

TEST(MinReplicasToWrite, WithoutItACutOffPrimaryGoesOnGranting) {
  const Outcome o = cut_off_primary(min_replicas_spec(0, 10s), 3s);
  EXPECT_GT(o.last_grant, 29s);
  EXPECT_LT(o.first_refusal, Time{0});
}

TEST(MinReplicasToWrite, ACutOffPrimaryStopsGrantingWithinTheLagBound) {
  for (Duration lag : {Duration{2s}, Duration{4s}, Duration{10s}}) {
    const Outcome o = cut_off_primary(min_replicas_spec(1, lag), 3s);
    // The last ACK arrived at most 1 s before the cut; the count is taken
    // once a second on whole seconds: refusals begin after the lag and
    // within lag + 2 s of the cut, and nothing is granted after.
    EXPECT_GE(o.last_grant, 3s + lag - 1s) << sim::format_duration(lag);
    EXPECT_LT(o.last_grant, 3s + lag + 2s) << sim::format_duration(lag);
    EXPECT_GT(o.first_refusal, o.last_grant) << sim::format_duration(lag);
    EXPECT_LT(o.first_refusal, 3s + lag + 3s) << sim::format_duration(lag);
  }
}

TEST(MinReplicasToWrite, AMaxLagOfZeroTurnsTheCheckOff) {
  // checkGoodReplicasStatus: `!server.repl_min_slaves_max_lag` passes.
  const Outcome o = cut_off_primary(min_replicas_spec(1, 0s), 3s);
  EXPECT_GT(o.last_grant, 29s);
  EXPECT_LT(o.first_refusal, Time{0});
}

TEST(MinReplicasToWrite, ConnectedReplicasKeepThePrimaryWritable) {
  RedisHarness h(min_replicas_spec(2, 1s), 60s);
  int granted = 0, refused = 0;
  h.at(100ms, [&](sim::Process& p) {
    for (int i = 0; i < 40; ++i) {
      const std::string value = "v" + std::to_string(i);
      auto r = h.send(p, 0, h.acquire(value));
      ASSERT_TRUE(r.has_value());
      (r->error.empty() ? granted : refused) += 1;
      h.send(p, 0, h.release(value));
      p.sleep(500ms);
    }
  });
  h.run(25s);
  EXPECT_EQ(granted, 40);
  EXPECT_EQ(refused, 0);
  EXPECT_FALSE(h.noted("redis-0", "noreplicas"));
}

TEST(MinReplicasToWrite, AScriptThatWouldNotWriteStillAnswers) {
  // A renewal whose key holds another value writes nothing: 0, not NOREPLICAS.
  RedisHarness h(min_replicas_spec(1, 1s), 60s);
  h.observe(0s, [&] {
    h.sim.add_partition(sim::Partition{{{h.servers[0]}, {h.servers[1], h.servers[2]}}, {}, false});
  });
  std::optional<Reply> renew, acquire;
  h.at(5s, [&](sim::Process& p) {
    renew = h.send(p, 0, h.renew("nobody"));
    acquire = h.send(p, 0, h.acquire("v"));
  });
  h.run(10s);
  ASSERT_TRUE(renew && acquire);
  EXPECT_TRUE(renew->error.empty());
  EXPECT_EQ(renew->integer, 0);
  EXPECT_EQ(acquire->error, "NOREPLICAS Not enough good replicas to write.");
  EXPECT_TRUE(h.noted("redis-0", "noreplicas"));
}

TEST(MinReplicasToWrite, TheHealedPrimaryAcceptsWritesAgain) {
  RedisHarness h(min_replicas_spec(1, 1s), 60s);
  h.observe(1s, [&] {
    h.sim.add_partition(sim::Partition{{{h.servers[0]}, {h.servers[1], h.servers[2]}}, {}, false});
  });
  h.observe(10s, [&] { h.sim.heal(); });
  std::optional<Reply> during, after;
  h.at(8s, [&](sim::Process& p) { during = h.send(p, 0, h.acquire("a")); });
  h.at(15s, [&](sim::Process& p) { after = h.send(p, 0, h.acquire("b")); });
  h.run(20s);
  ASSERT_TRUE(during && after);
  EXPECT_EQ(during->error, "NOREPLICAS Not enough good replicas to write.");
  EXPECT_TRUE(after->error.empty()) << after->error;
  EXPECT_TRUE(h.noted("redis-0", "replicas-ok"));
}

}  // namespace
}  // namespace fencesim::testing
