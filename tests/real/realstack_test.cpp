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

#include <iostream>

#include "loader/loader.hpp"
#include "models/world.hpp"
#include "real/process.hpp"
#include "real/real.hpp"

namespace fencesim::real {
namespace {

Scenario load_shipped(const std::string& name) {
  LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/" + name + ".json");
  if (!lr.ok()) throw std::runtime_error(lr.error->to_string());
  return *lr.scenario;
}

void compare_both_ways(const Scenario& s, const std::string& name, double scale, RealResult* out = nullptr) {
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
  if (out) *out = std::move(real);
}

/// The crash happened as the model says: the crashed client's iteration in
/// progress is "crashed", and after the restart it acquired again.
void expect_crashed_and_came_back(const RealResult& real, const std::string& client) {
  bool crashed = false, acquired_after = false;
  for (const IterationRecord& it : real.run.history.iterations) {
    if (it.client != client) continue;
    if (it.outcome == "crashed") crashed = true;
    if (crashed && it.outcome != "crashed" && it.acquired) acquired_after = true;
  }
  EXPECT_TRUE(crashed) << client << " has no crashed iteration";
  EXPECT_TRUE(acquired_after) << client << " did not acquire after its restart";
}

void compare_both_ways(const std::string& name, double scale) { compare_both_ways(load_shipped(name), name, scale); }

// Scales: Redis at 0.25 (TTLs of 8-10 s become 2-2.5 s); etcd at 0.4-0.5
// (its TTL is whole seconds and at least 1.5 x the election timeout).
TEST(RealStack, WorkedExampleFenced) { compare_both_ways("worked-example-fenced", 0.25); }
TEST(RealStack, WorkedExampleUnfenced) { compare_both_ways("worked-example-unfenced", 0.25); }
TEST(RealStack, SentinelHolderPause) { compare_both_ways("sentinel-holder-pause", 0.25); }
TEST(RealStack, FencedReadsAndWrites) { compare_both_ways("fenced-reads-and-writes", 0.25); }
TEST(RealStack, CounterResetResource) { compare_both_ways("counter-reset-resource", 0.25); }
TEST(RealStack, EtcdHolderPausedFenced) { compare_both_ways("etcd-holder-paused-fenced", 0.5); }
TEST(RealStack, EtcdHolderPausedUnfenced) { compare_both_ways("etcd-holder-paused-unfenced", 0.5); }
TEST(RealStack, EtcdLeaderCrashLockHeld) { compare_both_ways("etcd-leader-crash-lock-held", 0.4); }
// A client crash: the Redis client's thread drops its connections and its
// state and comes back 5 s later as a new process.
TEST(RealStack, ClientCrashRestart) {
  RealResult real;
  compare_both_ways(load_shipped("client-crash-restart"), "client-crash-restart", 0.25, &real);
  expect_crashed_and_came_back(real, "A");
}
// appendonly yes, appendfsync everysec; a plain SIGKILL of redis-0 keeps the
// lock key and the counter (the AOF's pages are in the kernel).
TEST(RealStack, RedisPersistenceEverysecProcessCrash) {
  compare_both_ways("redis-persistence-everysec-process-crash", 0.25);
}
// No shipped etcd scenario crashes a client: etcd-holder-paused-fenced with
// the pause turned into a crash of A (SIGKILL of its Go helper, so its
// session's keepalives stop) and a restart 8 s later as a new session, with
// a second iteration for the restarted A to run.
TEST(RealStack, EtcdHolderCrashRestart) {
  Scenario s = load_shipped("etcd-holder-paused-fenced");
  s.name = "etcd-holder-crash-restart";
  ASSERT_EQ(s.faults.size(), 1u);
  s.faults[0].kind = FaultKind::kCrash;
  s.faults[0].restart_after = s.faults[0].duration;
  s.faults[0].duration.reset();
  s.clients[0].workload.iterations = 2;
  s.expect.clear();
  RealResult real;
  compare_both_ways(s, s.name, 0.5, &real);
  expect_crashed_and_came_back(real, "A");
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
                                                        {"redis-persistence-always", "power-loss"}}) {
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
