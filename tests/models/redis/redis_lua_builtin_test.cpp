// The seed article's acquire-and-INCR script, run verbatim by the Lua engine
// (models/redis/commands/script.hpp), against the Redis model's built-in
// kAcquire (protocol.hpp: "the seed article's script"), which it stands for:
// the same replies (token, nil) and the same keys, values and TTLs, through
// a held lease, a refused acquire and an acquire after the TTL ran out.
#include <gtest/gtest.h>

#include "models/redis/commands/script.hpp"
#include "tests/models/redis/redis_harness.hpp"

namespace fencesim::testing {
namespace {

using redis::commands::ExpiryClock;
using redis::commands::Keyspace;
using redis::commands::RespValue;
using redis::commands::ScriptCache;

const char* const kSeedAcquire =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return "
    "false";

/// The built-in reply in the engine's words.
std::string describe(const std::optional<Reply>& r) {
  if (!r) return "(timeout)";
  if (!r->error.empty()) return "(error) " + r->error;
  if (r->nil) return "(nil)";
  if (r->integer) return "(integer) " + std::to_string(*r->integer);
  return r->text;
}

TEST(RedisLuaBuiltin, SeedArticleScriptAnswersAsTheBuiltInAcquire) {
  RedisHarness h(spec_with(0, 0), 10s);
  const std::string key = h.sc.lock.key;
  const std::string counter = h.svc->counter_key();
  Keyspace keys;
  ScriptCache scripts;
  std::vector<redis::Effect> effects;
  std::vector<std::string> builtin, engine;
  // The script runs on redis-0's clocks at the instant the tester sends.
  auto run_script = [&](const std::string& value) {
    sim::Node& n = h.sim.node(h.servers[0]);
    const ExpiryClock clock{n.clock(h.svc->expiry_clock()), n.wall(), true};
    const RespValue r =
        scripts.execute(keys, {"EVAL", kSeedAcquire, "2", key, counter, value, "10000"}, clock, effects);
    engine.push_back(r.describe());
  };
  int step = 0;
  for (const auto& [at, value] : std::vector<std::pair<Time, std::string>>{{0s, "v1"}, {1s, "v2"}, {11s, "v3"}}) {
    h.at(at, [&, value = value](sim::Process& p) {
      run_script(value);
      builtin.push_back(describe(h.send(p, 0, h.acquire(value))));
      ++step;
    });
  }
  h.run(12s);
  ASSERT_EQ(step, 3);
  EXPECT_EQ(engine, builtin);
  EXPECT_EQ(engine, (std::vector<std::string>{"(integer) 1", "(nil)", "(integer) 2"}));
  // The same state: the holder's value with a TTL, the counter without.
  ASSERT_NE(h.entry(0, key), nullptr);
  EXPECT_EQ(keys.at(key).value, h.entry(0, key)->value);
  EXPECT_TRUE(keys.at(key).has_expiry);
  EXPECT_TRUE(h.entry(0, key)->has_expiry);
  // The built-in server set its deadline when the command arrived (after
  // the network's latency), the engine when the tester sent it.
  const Duration lag = h.entry(0, key)->expire_at - keys.at(key).expire_at;
  EXPECT_GE(lag, Duration{0});
  EXPECT_LT(lag, Duration{1s});
  ASSERT_NE(h.entry(0, counter), nullptr);
  EXPECT_EQ(keys.at(counter).value, h.entry(0, counter)->value);
  EXPECT_FALSE(keys.at(counter).has_expiry);
}

}  // namespace
}  // namespace fencesim::testing
