// bsm/redislock as deployed (clients[].library "bsm-redislock";
// models/client/bsm_redislock_client.cpp): Obtain's NoRetry and
// LinearBackoff with the deadline of one TTL, FenceKey's token only on a new
// acquisition, the caller's watchdog, and the library's rules.
#include <gtest/gtest.h>

#include "models/validate.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using namespace std::chrono_literals;

auto bsm(std::function<void(ClientSpec&)> more = {}) {
  return with_library(ClientLibrary::kBsmRedislock, std::move(more));
}

/// A holds the lock for 30 s (its watchdog refreshing it); B starts at
/// 500 ms and runs two iterations 10 ms apart.
RunResult contend(std::function<void(ClientSpec&)> b_more) {
  ScenarioBuilder b("bsm-test");
  b.redis(10s, 1, 3).duration(60s).settle(5s).fenced();
  b.client("A", counter(30s, 1), bsm());
  b.client("B", counter(100ms, 2, 10ms), bsm([b_more](ClientSpec& c) {
             c.start = 500ms;
             if (b_more) b_more(c);
           }));
  return b.run();
}

TEST(BsmRedislock, ObtainMakesOneAttemptByDefault) {
  const RunResult r = contend({});
  EXPECT_EQ(iteration(r, "B", 0).outcome, "acquire gave up: redislock: not obtained (NoRetry: one attempt)");
  // The next iteration starts one round trip and the think time later.
  EXPECT_LT(iteration(r, "B", 1).start - iteration(r, "B", 0).start, 100ms);
}

TEST(BsmRedislock, LinearBackoffRetriesUntilTheDeadlineOfOneTtl) {
  const RunResult r = contend([](ClientSpec& c) { c.retry_strategy = RetryStrategy::kLinear; });
  const IterationRecord& first = iteration(r, "B", 0);
  EXPECT_EQ(first.outcome,
            "acquire gave up: redislock: not obtained; context deadline exceeded (Obtain's deadline of one TTL)");
  const Duration took = iteration(r, "B", 1).start - first.start;
  EXPECT_GE(took, 10s);
  EXPECT_LT(took, 10s + 100ms);
  // The watchdog kept A's key: nobody else was granted meanwhile.
  EXPECT_EQ(r.history.grants.front().client, "A");
  EXPECT_GT(r.history.grants.size() > 1 ? r.history.grants[1].at : Time::max(), 30s);
}

TEST(BsmRedislock, LimitRetryStopsObtainAfterTriesAttempts) {
  const RunResult r = contend([](ClientSpec& c) {
    c.retry_strategy = RetryStrategy::kLinear;
    c.retry_interval = 1s;
    c.tries = 4;  // LimitRetry(LinearBackoff(1 s), 3)
  });
  const IterationRecord& first = iteration(r, "B", 0);
  EXPECT_EQ(first.outcome, "acquire gave up: redislock: not obtained (LimitRetry: 4 attempts)");
  const Duration took = iteration(r, "B", 1).start - first.start;
  EXPECT_GE(took, 3s);  // three waits of 1 s between four attempts
  EXPECT_LT(took, 3s + 100ms);
}

TEST(BsmRedislock, ExponentialBackoffDoublesItsWaitUpToRetryInterval) {
  // 4 + 8 + 16 + … ms, capped at 1 s: 4+8+…+512 = 1020 ms over eight waits,
  // then 1 s each; LimitRetry at 14 attempts: 13 waits = 1020 ms + 5 × 1 s.
  const RunResult r = contend([](ClientSpec& c) {
    c.retry_strategy = RetryStrategy::kExponential;
    c.retry_interval = 1s;
    c.tries = 14;
  });
  const IterationRecord& first = iteration(r, "B", 0);
  EXPECT_EQ(first.outcome, "acquire gave up: redislock: not obtained (LimitRetry: 14 attempts)");
  const Duration took = iteration(r, "B", 1).start - first.start;
  EXPECT_GE(took, 6020ms);
  EXPECT_LT(took, 6020ms + 14 * 5ms);
}

TEST(BsmRedislock, FenceKeyCountsOnlyNewAcquisitions) {
  // Ten refused Obtains of B between A's grant and B's: tokens 1, 2, 3, 4.
  ScenarioBuilder b("bsm-fence");
  b.redis(10s, 1, 3).duration(60s).settle(20s).fenced();
  b.client("A", counter(2s, 2, 1s), bsm());
  b.client("B", counter(500ms, 12, 1s), bsm([](ClientSpec& c) { c.start = 500ms; }));
  b.pause("A", 1s, 15s);
  const RunResult r = b.run();
  std::vector<std::int64_t> tokens;
  for (const GrantRecord& g : r.history.grants) tokens.push_back(g.token.value_or(-1));
  EXPECT_EQ(tokens, (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(status(r, Property::kNoStaleWrite), Status::kHolds);
}

TEST(BsmRedislock, AFailedRefreshEndsTheBeliefAsTheWatchdogCancelsTheWork) {
  ScenarioBuilder b("bsm-refresh");
  b.redis(10s, 1, 3).duration(60s).settle(10s).fenced();
  b.client("A", counter(30s, 1), bsm());
  b.client("B", counter(20s, 1), bsm([](ClientSpec& c) {
             c.start = 500ms;
             c.retry_strategy = RetryStrategy::kLinear;
           }));
  b.pause("A", 1s, 15s);
  const RunResult r = b.run();
  bool ended = false;
  for (const BeliefRecord& x : r.history.beliefs) {
    if (x.client == "A" && x.end_reason.find("Refresh: redislock: not obtained") != std::string::npos) ended = true;
  }
  EXPECT_TRUE(ended);
}

TEST(BsmRedislock, IsASingleRedisLibraryAndRetryStrategyIsItsOwn) {
  ScenarioBuilder rl("bsm-redlock");
  rl.redlock(3, 8s).unfenced().client("A", counter(1s, 1), bsm());
  const auto p = validate_scenario(rl.build());
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->path, "clients[0].library");
  EXPECT_NE(p->suggestion.find("redsync"), std::string::npos) << p->suggestion;
  ScenarioBuilder g("generic-strategy");
  g.redis(8s, 1, 3).unfenced().client("A", counter(1s, 1),
                                      [](ClientSpec& c) { c.retry_strategy = RetryStrategy::kLinear; });
  const auto q = validate_scenario(g.build());
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->path, "clients[0].retry_strategy");
  // LimitRetry limits a strategy: with NoRetry there is nothing to limit.
  ScenarioBuilder n("bsm-tries-no-retry");
  n.redis(8s, 1, 3).unfenced().client("A", counter(1s, 1), bsm([](ClientSpec& c) { c.tries = 3; }));
  const auto t = validate_scenario(n.build());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->path, "clients[0].tries");
  EXPECT_NE(t->suggestion.find("retry_strategy"), std::string::npos) << t->suggestion;
}

}  // namespace
}  // namespace fencesim::testing
