// RealStack: shipped scenarios run both ways — in the simulator and against
// the real stack (fencesim-real: real redis-server + Sentinel or etcd, a real
// PostgreSQL) — and the verdict of every property must be the same.
//
// Each test starts its own servers in a temporary folder on free loopback
// ports and stops them (real/real.hpp). Time is scaled so that the set takes
// a few minutes; the scenarios' margins are seconds of scenario time (at
// scale 0.25 a margin of 2 s is still 500 ms of real time), and nothing here
// asserts a duration. A program that is missing fails the test with the
// Debian package to install; it is never skipped.
//
// Run only these: ctest -R RealStack (they are RUN_SERIAL: two real runs
// at once on 2 cores would only add timing noise).
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <thread>

#include "loader/loader.hpp"
#include "models/world.hpp"
#include "real/clocks.hpp"
#include "real/process.hpp"
#include "real/real.hpp"

namespace fencesim::real {
namespace {

void compare_both_ways(const std::string& name, double scale) {
  const std::string file = std::string(FENCESIM_SOURCE_DIR) + "/scenarios/" + name + ".json";
  LoadResult lr = load_scenario_file(file);
  ASSERT_TRUE(lr.ok()) << lr.error->to_string();
  const Scenario& s = *lr.scenario;
  ASSERT_EQ(unsupported_reason(s), "");
  const RunResult sim = run_scenario(s);
  RealOptions opt;
  opt.scale = scale;
  opt.helper_dir = FENCESIM_BINARY_DIR;
  opt.log = &std::cout;
  RealResult real;
  try {
    real = run_real(s, opt);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  const Comparison c = compare_verdicts(sim.verdicts, real.run.verdicts);
  std::cout << name << " at scale " << scale << " (" << real.wall_seconds << " s):\n";
  for (const auto& l : c.lines) std::cout << "  " << l << "\n";
  for (const Property p : c.differing) {
    for (const Verdict& v : real.run.verdicts) {
      if (v.property != p) continue;
      std::string story;
      for (const auto& line : v.story) story += "    " + line + "\n";
      ADD_FAILURE() << name << ": " << to_string(p) << " differs; real: " << v.summary << "\n" << story;
    }
  }
  EXPECT_TRUE(c.differing.empty());
  // The comparison is only meaningful if the real run did what the scenario
  // is about: it granted the lock and the resource saw writes.
  EXPECT_FALSE(real.run.history.grants.empty());
  EXPECT_FALSE(real.run.history.resource_ops.empty());
}

// Scales: Redis at 0.25 (TTLs of 8-10 s become 2-2.5 s); etcd at 0.4-0.5
// (its TTL is whole seconds and at least 1.5 x the election timeout).
TEST(RealStack, WorkedExampleFenced) { compare_both_ways("worked-example-fenced", 0.25); }
TEST(RealStack, WorkedExampleUnfenced) { compare_both_ways("worked-example-unfenced", 0.25); }
TEST(RealStack, SentinelHolderPause) { compare_both_ways("sentinel-holder-pause", 0.25); }
TEST(RealStack, PlannedFailover) { compare_both_ways("planned-failover", 0.25); }
TEST(RealStack, FencedReadsAndWrites) { compare_both_ways("fenced-reads-and-writes", 0.25); }
TEST(RealStack, CounterResetResource) { compare_both_ways("counter-reset-resource", 0.25); }
TEST(RealStack, EtcdHolderPausedFenced) { compare_both_ways("etcd-holder-paused-fenced", 0.5); }
TEST(RealStack, EtcdHolderPausedUnfenced) { compare_both_ways("etcd-holder-paused-unfenced", 0.5); }
TEST(RealStack, EtcdLeaderCrashLockHeld) { compare_both_ways("etcd-leader-crash-lock-held", 0.4); }

// Clock faults (real/clocks.hpp): a Redis primary's wall clock stepped
// through fencesim-clock.so; a client's clocks are the runner's own. The
// clock-drift margin is A's 10.2 s write against the 10 s expiry: 0.23 s of
// scenario time, 115 ms of real time at scale 0.5 (57 ms at 0.25 was too
// close to B's grant-and-read on a loaded machine).
TEST(RealStack, RedisWallClockJump) { compare_both_ways("redis-wall-clock-jump", 0.25); }
TEST(RealStack, ClockDrift) { compare_both_ways("clock-drift", 0.5); }
TEST(RealStack, ClientClockJumpWallRenewal) { compare_both_ways("client-clock-jump-wall-renewal", 0.25); }

// The shim itself: redis-server under fencesim-clock.so answers TIME with
// the real clock until its control file is changed, then with the stepped
// one (a 1000 s step, so no amount of machine load can blur it), and a key
// whose PX deadline the step passed is gone.
TEST(RealStack, ClockShimStepsRedisWallClock) {
  const std::string server = require_program("redis-server", "redis-server");
  TempDir dir("clock-shim", false);
  ServerClock clock(dir.path() / "clock");
  const int port = free_port();
  ChildOptions opt;
  opt.err = dir.path() / "stderr.log";
  opt.env = clock.env(std::string(FENCESIM_BINARY_DIR) + "/fencesim-clock.so");
  Child redis({server, "--port", std::to_string(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", dir.path().string(), "--logfile", (dir.path() / "redis.log").string()},
              opt);
  redisContext* c = nullptr;
  for (int i = 0; i < 200 && (c == nullptr || c->err); ++i) {
    if (c) redisFree(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    c = redisConnect("127.0.0.1", port);
  }
  ASSERT_TRUE(c != nullptr && !c->err) << "redis-server under the shim did not start";
  auto server_time = [&] {
    auto* r = static_cast<redisReply*>(redisCommand(c, "TIME"));
    EXPECT_TRUE(r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    const long long t = r ? std::atoll(r->element[0]->str) : 0;
    freeReplyObject(r);
    return t;
  };
  EXPECT_LT(std::llabs(server_time() - static_cast<long long>(std::time(nullptr))), 100);
  freeReplyObject(redisCommand(c, "SET k v PX 500000"));
  clock.jump(ClockSelect::kWall, std::chrono::seconds(1000));
  EXPECT_GT(server_time() - static_cast<long long>(std::time(nullptr)), 900);
  auto* r = static_cast<redisReply*>(redisCommand(c, "GET k"));
  ASSERT_TRUE(r != nullptr);
  EXPECT_EQ(r->type, REDIS_REPLY_NIL) << "the key outlived a wall step past its deadline";
  freeReplyObject(r);
  redisFree(c);
}

// Clock faults the real stack cannot reproduce are refused with the reason.
TEST(RealStack, ClockFaultsTheRealStackCannotApplyAreRefused) {
  for (const auto& [file, words] :
       std::vector<std::pair<std::string, std::string>>{{"redis-wall-clock-jump-monotonic-expiry", "expiry_clock"},
                                                        {"etcd-leader-clock-jump", "vDSO"},
                                                        {"etcd-keepalive-stale-leader-3-4", "Go"}}) {
    LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/" + file + ".json");
    ASSERT_TRUE(lr.ok()) << file;
    const std::string why = unsupported_reason(*lr.scenario);
    EXPECT_NE(why.find(words), std::string::npos) << file << ": " << why;
  }
  LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/redis-wall-clock-jump.json");
  ASSERT_TRUE(lr.ok());
  lr.scenario->faults[0].target = "resource";
  EXPECT_NE(unsupported_reason(*lr.scenario).find("PostgreSQL"), std::string::npos);
}

TEST(RealStack, UnsupportedScenarioIsRefusedWithItsReason) {
  LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/partition-holder.json");
  ASSERT_TRUE(lr.ok());
  const std::string why = unsupported_reason(*lr.scenario);
  EXPECT_NE(why.find("partition"), std::string::npos) << why;
  RealOptions opt;
  EXPECT_THROW(run_real(*lr.scenario, opt), NotSupported);
}

// Keys the runner does not start as real processes are refused, not ignored
// (found by a new-user trial: a cluster file ran against one plain server).
TEST(RealStack, ScenariosTheRunnerCannotStartAreRefusedNotIgnored) {
  for (const auto& [file, words] :
       std::vector<std::pair<std::string, std::string>>{{"redis-cluster-hash-tag", "Redis Cluster"},
                                                        {"etcd-mixed-ttl-3-5", "own ttl"},
                                                        {"redis-persistence-always", "lock.persistence"}}) {
    LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/" + file + ".json");
    ASSERT_TRUE(lr.ok()) << file;
    const std::string why = unsupported_reason(*lr.scenario);
    EXPECT_NE(why.find(words), std::string::npos) << file << ": " << why;
  }
  LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/etcd-holder-paused-fenced.json");
  ASSERT_TRUE(lr.ok());
  ASSERT_EQ(unsupported_reason(*lr.scenario), "");
  lr.scenario->clients[0].library = EtcdLibrary::kJetcd;
  EXPECT_NE(unsupported_reason(*lr.scenario).find("jetcd"), std::string::npos);
}

TEST(RealStack, MissingProgramNamesTheDebianPackage) {
  try {
    require_program("fencesim-no-such-program", "some-debian-package");
    FAIL() << "no exception";
  } catch (const MissingProgram& e) {
    EXPECT_NE(std::string(e.what()).find("some-debian-package"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fencesim::real
