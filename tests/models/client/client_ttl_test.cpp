// clients[].ttl under Redis and Redlock: a client's own TTL is the PX of its
// SET (docs/FORMAT.md "Clients").
#include <gtest/gtest.h>

#include <optional>

#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

/// A holds a lock of the lock's 10 s TTL (or its own) without renewing and
/// works 5 s: its lease ends at the service when its own TTL runs out.
RunResult unrenewed_holder(std::optional<Duration> ttl, int redlock) {
  ScenarioBuilder b(std::string(redlock > 0 ? "redlock" : "redis") + (ttl ? "-own-ttl" : "-lock-ttl"));
  b.duration(20s).redis(10s).fenced();
  if (redlock > 0)
    b.redis_spec([redlock](RedisSpec& r) {
       r.redlock = redlock;
       r.token = RedisToken::kNone;
     }).unfenced();
  return b
      .client("A", counter(5s),
              [ttl](ClientSpec& c) {
                c.renew = false;
                c.ttl = ttl;
              })
      .run();
}

TEST(ClientTtl, ARedisClientsOwnTtlIsThePxOfItsSet) {
  for (int redlock : {0, 3}) {
    const RunResult own = unrenewed_holder(2s, redlock);
    ASSERT_EQ(own.history.grants.size(), 1u);
    auto end = own.history.lease_ends.find(own.history.grants[0].value);
    ASSERT_NE(end, own.history.lease_ends.end());
    EXPECT_GE(end->second.at, sim::Time{2s});
    EXPECT_LT(end->second.at, sim::Time{2500ms});  // expired, before the 5 s release
    const RunResult lock = unrenewed_holder(std::nullopt, redlock);
    ASSERT_EQ(lock.history.grants.size(), 1u);
    auto end2 = lock.history.lease_ends.find(lock.history.grants[0].value);
    ASSERT_NE(end2, lock.history.lease_ends.end());
    EXPECT_GE(end2->second.at, sim::Time{5s});  // ended by the release
  }
}

}  // namespace
}  // namespace fencesim::testing
