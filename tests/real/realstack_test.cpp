// RealStack: shipped scenarios run both ways — in the simulator and against
// the real stack (fencesim-real: real redis-server + Sentinel or etcd, a real
// PostgreSQL) — and the verdict of every property must be the same.
//
// Each test starts its own lock servers in a temporary folder on free
// loopback ports and stops them (real/real.hpp); the resource's PostgreSQL is
// one per test binary (SharedPostgres), with a new database per run. Time is scaled so that the set takes
// a few minutes; the scenarios' margins are seconds of scenario time (at
// scale 0.25 a margin of 2 s is still 500 ms of real time), and nothing here
// asserts a duration. A program that is missing fails the test with the
// Debian package to install; it is never skipped.
//
// Run only these: ctest -R RealStack -j2 (two real stacks at a time, except
// the timing-tight comparisons, which run alone: tests/real/CMakeLists.txt).
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "loader/loader.hpp"
#include "models/world.hpp"
#include "real/clocks.hpp"
#include "real/process.hpp"
#include "real/proxy.hpp"
#include "real/real.hpp"
#include "tests/support/hang_watchdog.hpp"
#include "tests/support/tier_tools.hpp"

namespace fencesim::real {
namespace {

// The servers every comparison starts (PostgreSQL's programs live outside
// PATH and are found by fencesim-real itself): missing ones fail under
// tools/test.sh and skip in a plain developer build (tests/support/tier_tools.hpp).
::testing::Environment* const kTierTools = ::testing::AddGlobalTestEnvironment(
    new fencesim::testing::TierTools("realstack", {{"redis-server", "redis-server"}, {"etcd", "etcd-server"}}));

/// One PostgreSQL for every comparison (real/real.hpp PostgresServer), each
/// run on a database of its own: it saves an initdb and a server start
/// (seconds on a loaded machine) per test. Under ctest, which runs each test
/// in a process of its own, FENCESIM_REALSTACK_POSTGRES names its folder:
/// the first test starts it detached, the next ones attach, and the
/// fixture test RealStack.postgres_stop stops it (tests/real/CMakeLists.txt).
/// Without it (the binary run by hand) it is this process's, stopped at its end.
const char* shared_postgres_dir() { return std::getenv("FENCESIM_REALSTACK_POSTGRES"); }

class SharedPostgres : public ::testing::Environment {
 public:
  PostgresServer& get() {
    if (server_) return *server_;
    const char* dir = shared_postgres_dir();
    server_ = dir ? std::make_unique<PostgresServer>(std::string(dir)) : std::make_unique<PostgresServer>();
    return *server_;
  }
  void TearDown() override { server_.reset(); }

 private:
  std::unique_ptr<PostgresServer> server_;
};
SharedPostgres* const kPostgres = static_cast<SharedPostgres*>(::testing::AddGlobalTestEnvironment(new SharedPostgres));

// A comparison still running after 240 s (the longest takes about 45 s;
// CTest's TIMEOUT is 300 s) prints the processes and its threads' stacks
// and aborts (tests/support/hang_watchdog.hpp).
const bool kWatchdog = fencesim::testing::install_hang_watchdog(std::chrono::seconds(240));

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
  opt.stop_when_done = true;  // the idle tail after the clients are done is not compared
  opt.helper_dir = FENCESIM_BINARY_DIR;
  opt.log = &std::cout;
  RealResult real;
  try {
    opt.postgres = &kPostgres->get();
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
TEST(RealStack, PlannedFailover) { compare_both_ways("planned-failover", 0.25); }
TEST(RealStack, FencedReadsAndWrites) { compare_both_ways("fenced-reads-and-writes", 0.25); }
TEST(RealStack, CounterResetResource) { compare_both_ways("counter-reset-resource", 0.25); }
TEST(RealStack, EtcdHolderPausedFenced) { compare_both_ways("etcd-holder-paused-fenced", 0.5); }
TEST(RealStack, EtcdHolderPausedUnfenced) { compare_both_ways("etcd-holder-paused-unfenced", 0.5); }
TEST(RealStack, EtcdLeaderCrashLockHeld) { compare_both_ways("etcd-leader-crash-lock-held", 0.4); }
// Link faults through the runner's TCP proxies (real/proxy.hpp).
TEST(RealStack, PartitionHolder) { compare_both_ways("partition-holder", 0.25); }
// The replication link of each replica is held for replication_delay by its
// proxy and the bytes still held when the primary is killed are dropped, so
// the promoted replica never gets the grant's INCR. Real Sentinel needs
// 1-2 s of real time beyond down_after to promote and announce it (a 1 s ask
// period and a 1 s INFO period during the failover, not scaled), and A's
// renewal at 6.7 s of scenario time must come after B's grant on the
// promoted replica: at scale 0.75 B's grant comes at 3 s x 0.75 + 1-2 s =
// 3.25-4.25 s of real time and A's renewal at 6.7 s x 0.75 = 5.0 s, a
// margin of 0.75-1.75 s (scale 1, 70 s of real time per run: 1.7-2.7 s;
// scale 0.5: -0.15-0.85 s, too close).
TEST(RealStack, SentinelFailoverTokenReuseStrict) { compare_both_ways("sentinel-failover-token-reuse-strict", 0.75); }
TEST(RealStack, SentinelFailoverTokenReuseMonotonic) {
  compare_both_ways("sentinel-failover-token-reuse-monotonic", 0.75);
}
TEST(RealStack, OneWayPartition) { compare_both_ways("one-way-partition", 0.25); }
TEST(RealStack, SlowRenewal) { compare_both_ways("slow-renewal", 0.25); }
// A cut off from the three etcd members by its proxies. clientv3 3.4.23
// checks a keepalive's deadline once a second (lease.go deadlineLoop), so
// A's session ends about 1 s after its deadline, after the leader's lessor
// (a 500 ms check) revoked the lease and B got the lock: mutual_exclusion
// is violated both ways (the model had ended the session at the deadline
// until it was given the same 1 s check; docs/CONFORMANCE.md). The
// overlap is 0.4-1 s of real time at any scale.
TEST(RealStack, EtcdHolderIsolated) { compare_both_ways("etcd-holder-isolated", 0.5); }

// ZooKeeper (Debian 12's 3.8, a 3-server ensemble) with kazoo's real Lock
// (real/zk-lock/zk_lock.py), at scale 0.5: tickTime 1-2 s becomes 0.5-1 s,
// sessions of 3-6 s become 1.5-3 s. The real clients are kazoo's, so the
// Curator scenarios run with "library": "kazoo" on both sides (the model's
// kazoo client). The first run found that kazoo's release blocks while
// disconnected (client.retry), which the model then learned.
Scenario with_kazoo(const std::string& name) {
  Scenario s = load_shipped(name);
  for (ClientSpec& c : s.clients) c.library = ClientLibrary::kKazoo;
  return s;
}
TEST(RealStack, ZooKeeperKazooPartitionLostOnReconnect) {
  compare_both_ways("zookeeper-kazoo-partition-lost-on-reconnect", 0.5);
}
TEST(RealStack, ZooKeeperKazooGcPauseFenced) {
  compare_both_ways(with_kazoo("zookeeper-curator-gc-pause-fenced"), "zookeeper-curator-gc-pause-fenced (kazoo)", 0.5);
}
TEST(RealStack, ZooKeeperKazooGcPauseUnfenced) {
  compare_both_ways(with_kazoo("zookeeper-curator-gc-pause-unfenced"), "zookeeper-curator-gc-pause-unfenced (kazoo)",
                    0.5);
}
// A leader crash (zk-leader found by the four-letter srvr) and its restart.
TEST(RealStack, ZooKeeperKazooLeaderCrashLockHeld) {
  compare_both_ways(with_kazoo("zookeeper-leader-crash-lock-held"), "zookeeper-leader-crash-lock-held (kazoo)", 0.5);
}

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

// Program clients run against one Redis primary (alone, or with Sentinel
// and its replicas) or an etcd cluster; replicas without Sentinel, and
// Cluster, are refused, naming the client.
TEST(RealStack, ProgramClientsOnReplicasWithoutSentinelOrClusterAreRefused) {
  LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/programs/redis-py-lock-pause.json");
  ASSERT_TRUE(lr.ok());
  EXPECT_EQ(unsupported_reason(*lr.scenario), "");
  Scenario sentinel = *lr.scenario;
  sentinel.lock.redis().sentinels = 3;
  sentinel.lock.redis().replicas = 1;
  EXPECT_EQ(unsupported_reason(sentinel), "");
  Scenario replicas = *lr.scenario;
  replicas.lock.redis().replicas = 1;
  EXPECT_NE(unsupported_reason(replicas).find("client A is a program"), std::string::npos)
      << unsupported_reason(replicas);
  Scenario cluster = *lr.scenario;
  cluster.lock.redis().cluster = RedisClusterSpec{};
  EXPECT_NE(unsupported_reason(cluster).find("Cluster"), std::string::npos) << unsupported_reason(cluster);
  LoadResult etcd =
      load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/programs/etcd-txn-lock-pause.json");
  ASSERT_TRUE(etcd.ok());
  EXPECT_EQ(unsupported_reason(*etcd.scenario), "");
}

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

// The ctest fixture's cleanup (RealStack.postgres_stop), left out of the
// discovered tests.
TEST(RealStackFixture, StopSharedPostgres) {
  if (const char* dir = shared_postgres_dir()) PostgresServer::stop_shared(dir);
}

TEST(RealStack, UnsupportedScenarioIsRefusedWithItsReason) {
  LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/split-brain-primary.json");
  ASSERT_TRUE(lr.ok());
  const std::string why = unsupported_reason(*lr.scenario);
  EXPECT_NE(why.find("Sentinel's links are not on a proxy"), std::string::npos) << why;
  RealOptions opt;
  EXPECT_THROW(run_real(*lr.scenario, opt), NotSupported);
}

// ZooKeeper's real clients are kazoo's: a Curator client is refused with
// what to change; Hazelcast has no real stack here, nor Redisson (Java).
TEST(RealStack, JavaClientsUnpackagedLibrariesAndHazelcastAreRefusedWithTheirReasons) {
  const Scenario curator = load_shipped("zookeeper-curator-gc-pause-fenced");
  EXPECT_NE(unsupported_reason(curator).find("set \"library\": \"kazoo\""), std::string::npos)
      << unsupported_reason(curator);
  EXPECT_EQ(unsupported_reason(with_kazoo("zookeeper-curator-gc-pause-fenced")), "");
  const Scenario hz = load_shipped("hazelcast-leader-crash-lock-held");
  EXPECT_NE(unsupported_reason(hz).find("only redis, etcd and zookeeper"), std::string::npos) << unsupported_reason(hz);
  const Scenario redisson = load_shipped("redisson-watchdog-gc-pause-fenced");
  EXPECT_NE(unsupported_reason(redisson).find("Redisson is a Java library"), std::string::npos)
      << unsupported_reason(redisson);
  const Scenario redsync = load_shipped("redsync-job-outlives-expiry");
  EXPECT_NE(unsupported_reason(redsync).find("not packaged in Debian 12"), std::string::npos)
      << unsupported_reason(redsync);
  const Scenario bsm = load_shipped("bsm-redislock-gc-pause-fencekey");
  EXPECT_NE(unsupported_reason(bsm).find("bsm/redislock is not packaged in Debian 12"), std::string::npos)
      << unsupported_reason(bsm);
}

// Link faults are applied where the runner has a proxy on the link and
// refused (with the link named) where it has none.
TEST(RealStack, LinkFaultsAreRefusedOnLinksWithoutAProxy) {
  for (const auto& [file, words] : std::vector<std::pair<std::string, std::string>>{
           {"etcd-leader-isolated-minority", "etcd's peer links"},
           {"split-brain-primary", "sentinel-"},
       }) {
    LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/" + file + ".json");
    ASSERT_TRUE(lr.ok()) << file;
    const std::string why = unsupported_reason(*lr.scenario);
    EXPECT_NE(why.find(words), std::string::npos) << file << ": " << why;
  }
  for (const std::string file : {"partition-holder", "one-way-partition", "slow-renewal", "etcd-holder-isolated",
                                 "sentinel-failover-token-reuse-strict"}) {
    LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/" + file + ".json");
    ASSERT_TRUE(lr.ok()) << file;
    EXPECT_EQ(unsupported_reason(*lr.scenario), "") << file;
  }
  // A slow primary with Sentinel: its Sentinel links would stay fast.
  LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/partition-holder.json");
  ASSERT_TRUE(lr.ok());
  FaultSpec slow;
  slow.at = std::chrono::seconds(1);
  slow.kind = FaultKind::kSlow;
  slow.target = "redis-0";
  slow.delay = std::chrono::seconds(1);
  slow.duration = std::chrono::seconds(1);
  slow.origin = "faults[2]";
  lr.scenario->faults.push_back(slow);
  EXPECT_NE(unsupported_reason(*lr.scenario).find("Sentinel"), std::string::npos);
  lr.scenario->network.loss_ppb = 1000;
  lr.scenario->faults.pop_back();
  EXPECT_NE(unsupported_reason(*lr.scenario).find("network.loss"), std::string::npos);
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
  lr.scenario->clients[0].library = ClientLibrary::kJetcd;
  EXPECT_NE(unsupported_reason(*lr.scenario).find("jetcd"), std::string::npos);
}

// The proxy itself: bytes pass, a blocked direction holds them (nothing
// arrives, the connection stays open) and delivers them once unblocked.
// No duration is asserted: "nothing arrives while blocked" holds for any
// wait, and the waits for bytes that must arrive are 10 s.
int listen_any(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::listen(fd, 4), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}
int dial_port(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}
std::string read_some(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return "";
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : (n == 0 ? "<eof>" : "<error>");
}

// A server the runner starts (or restarts mid-run) holds none of the
// runner's descriptors: a copy of a proxy's or a client's socket in a
// restarted Redis kept a connection open after the runner closed it, and a
// client waiting on it for PostgreSQL's answer waited forever
// (redis-persistence-everysec-process-crash; docs/CONFORMANCE.md "Runs of
// the RealStack set").
TEST(RealStack, ChildrenInheritOnlyTheirStandardStreams) {
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);  // inheritable, as hiredis's are
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // inheritable too
  ASSERT_GE(sock, 3);
  Child sleeper({"/bin/sleep", "30"}, ChildOptions{});
  const std::string proc = "/proc/" + std::to_string(sleeper.pid());
  auto open_fds = [&] {
    std::vector<int> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(proc + "/fd", ec)) {
      out.push_back(std::stoi(e.path().filename()));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  // Until the exec the forked copy has the parent's descriptors, and sleep's
  // start-up (the dynamic loader, locale files) opens and closes some of
  // its own; an inherited one would stay open for good. Wait for the exec,
  // then up to 2 s for exactly the standard streams.
  std::string exe;
  for (int i = 0; i < 400 && exe.find("sleep") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::error_code ec;
    exe = std::filesystem::read_symlink(proc + "/exe", ec).string();
  }
  ASSERT_NE(exe.find("sleep"), std::string::npos) << "the child did not exec /bin/sleep";
  std::vector<int> seen = open_fds();
  for (int i = 0; i < 400 && seen != std::vector<int>{0, 1, 2}; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    seen = open_fds();
  }
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
  ::close(sock);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(RealStack, ProxyPassesHoldsAndReleasesBytes) {
  int server_port = 0;
  const int lfd = listen_any(server_port);
  ProxyNet net;
  LinkFaults links(net);
  const int via = net.add_link("A", "redis-0", server_port);
  EXPECT_EQ(net.port("A", "redis-0"), via);
  EXPECT_EQ(net.target_of_port(via), "redis-0");
  const int c = dial_port(via);
  ASSERT_EQ(::send(c, "ping", 4, 0), 4);
  const int s = ::accept(lfd, nullptr, nullptr);
  ASSERT_GE(s, 0);
  EXPECT_EQ(read_some(s, 10000), "ping");
  // Cut A off from redis-0: both directions held, nothing closed.
  const int id = links.add_partition({{"A"}}, /*isolate=*/true, /*one_way=*/false);
  EXPECT_TRUE(links.blocks("A", "redis-0"));
  EXPECT_TRUE(links.blocks("redis-0", "A"));
  ASSERT_EQ(::send(c, "held", 4, 0), 4);
  ASSERT_EQ(::send(s, "back", 4, 0), 4);
  EXPECT_EQ(read_some(s, 300), "");
  EXPECT_EQ(read_some(c, 300), "");
  links.end_partition(id);
  EXPECT_EQ(read_some(s, 10000), "held");
  EXPECT_EQ(read_some(c, 10000), "back");
  // One way: only messages from the first group are blocked.
  links.add_partition({{"redis-0"}, {"A"}}, false, /*one_way=*/true);
  EXPECT_TRUE(links.blocks("redis-0", "A"));
  EXPECT_FALSE(links.blocks("A", "redis-0"));
  ASSERT_EQ(::send(c, "up", 2, 0), 2);
  EXPECT_EQ(read_some(s, 10000), "up");
  ASSERT_EQ(::send(s, "down", 4, 0), 4);
  EXPECT_EQ(read_some(c, 300), "");
  links.heal();
  EXPECT_EQ(read_some(c, 10000), "down");
  // A slow link still delivers, in order.
  const int slow = links.add_slow("A", std::chrono::milliseconds(50));
  ASSERT_EQ(::send(c, "late", 4, 0), 4);
  EXPECT_EQ(read_some(s, 10000), "late");
  links.end_slow(slow);
  // Closing the proxy ends the held connections.
  links.add_partition({{"A"}}, true, false);
  net.close_all();
  EXPECT_EQ(read_some(c, 10000), "<eof>");
  ::close(c);
  ::close(s);
  ::close(lfd);
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

namespace fencesim::real {
namespace {

/// scenarios/programs/<stem>.json shortened to `duration` + `settle` of
/// real time (a program's sleeps cannot be scaled), with Debian's python3
/// (and its python3-redis) first in PATH.
Scenario program_scenario(const std::string& stem, std::chrono::seconds duration, std::chrono::seconds settle) {
  const char* path = std::getenv("PATH");
  ::setenv("PATH", (std::string("/usr/bin:") + (path ? path : "")).c_str(), 1);
  LoadResult lr = load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/programs/" + stem + ".json");
  if (!lr.ok()) throw std::runtime_error(lr.error->to_string());
  Scenario s = *lr.scenario;
  s.duration = duration;
  s.settle = settle;
  return s;
}

// Issue 31: example 2's program — redis-py's own Lock, unchanged, with a
// paused holder and an unfenced read-modify-write — against a real
// redis-server and PostgreSQL, the SDK's real backend (FENCESIM_BACKEND=
// real: a real redis-py connection, real time, the holder SIGSTOPped), and
// in the simulation: the same verdicts. On real time (a program's sleeps
// cannot be scaled), shortened to 16 s: the race is over by 12.2 s.
TEST(RealStack, ProgramRedisPyLockPause) {
  const Scenario s = program_scenario("redis-py-lock-pause", std::chrono::seconds(16), std::chrono::seconds(3));
  RealResult real;
  compare_both_ways(s, "program-redis-py-lock-pause", 1.0, &real);
  // What the scenario is about happened for real: A's late write lost B's update.
  std::size_t a_writes = 0;
  for (const ResourceOpRecord& op : real.run.history.resource_ops) a_writes += op.client == "A" && op.write;
  EXPECT_EQ(a_writes, 1u);
}

// Issue 32, example 4: example 1's program — node-redlock's using() with
// automatic extension, unchanged, the holder paused past the lock's
// duration — against a real redis-server through real ioredis (the Node
// SDK's real backend, sdk/node/lib/real.js) and in the simulation: the same
// verdicts. On real time, shortened to 8 s: the race is over by 4.2 s.
TEST(RealStack, ProgramNodeRedlockUsingPause) {
  if (std::system("node --version >/dev/null 2>&1") != 0 ||
      std::system("test -d " FENCESIM_SOURCE_DIR "/scenarios/programs/node/redlock/node_modules/redlock") != 0 ||
      std::system("test -d " FENCESIM_SOURCE_DIR "/sdk/node/node_modules/@sinonjs/fake-timers") != 0) {
    const char* required = std::getenv("FENCESIM_REQUIRE_TOOLS");
    if (required != nullptr && std::string(required) == "1")
      FAIL() << "the realstack tier needs node and the npm packages of tools/node-deps.sh";
    GTEST_SKIP() << "SKIP: the realstack tier needs node and the npm packages of tools/node-deps.sh";
  }
  const Scenario s = program_scenario("node-redlock-using-pause", std::chrono::seconds(8), std::chrono::seconds(2));
  RealResult real;
  compare_both_ways(s, "program-node-redlock-using-pause", 1.0, &real);
  // What the scenario is about happened for real: after its pause A wrote
  // once more, from its stale read, before its signal aborted.
  bool a_late_write = false;
  for (const ResourceOpRecord& op : real.run.history.resource_ops) {
    a_late_write |= op.client == "A" && op.write && op.at > sim::Time{std::chrono::milliseconds(4200)};
  }
  EXPECT_TRUE(a_late_write);
}

// Issue 31, example 4 on etcd's general API (scenarios/programs/
// etcd-txn-lock-pause.json): a lock on Txn, Watch and a lease, the holder
// paused past its lease and fenced by the key's create revision — against a
// real 3-member etcd through its JSON gateway (the SDK's real backend,
// sdk/python/fencesim/_real_etcd.py) and in the simulation: the same
// verdicts. On real time, shortened to 14 s: B's five iterations are over
// by about 12 s.
TEST(RealStack, ProgramEtcdTxnLockPause) {
  const Scenario s = program_scenario("etcd-txn-lock-pause", std::chrono::seconds(14), std::chrono::seconds(2));
  RealResult real;
  compare_both_ways(s, "program-etcd-txn-lock-pause", 1.0, &real);
  // What the scenario is about happened for real: A's late write was
  // rejected by the fence, and B took the lock while A was paused.
  std::size_t a_rejected = 0, b_accepted = 0;
  for (const ResourceOpRecord& op : real.run.history.resource_ops) {
    a_rejected += op.client == "A" && op.write && !op.accepted;
    b_accepted += op.client == "B" && op.write && op.accepted;
  }
  EXPECT_EQ(a_rejected, 1u);
  EXPECT_GE(b_accepted, 1u);
}

// Issue 31 with Sentinel (scenarios/programs/redis-py-lock-sentinel-
// failover.json): redis-py's Lock on the primary the sentinels name; the
// primary dies before its replica has the lock key, and the promoted
// replica grants it again — against real redis-servers and Sentinels
// (redis-py's own Sentinel client, its connections on the runner's links)
// and in the simulation: the same verdicts. On real time, shortened to
// 12 s: A's late write comes at 10 s.
TEST(RealStack, ProgramRedisPyLockSentinelFailover) {
  const Scenario s =
      program_scenario("redis-py-lock-sentinel-failover", std::chrono::seconds(12), std::chrono::seconds(2));
  RealResult real;
  compare_both_ways(s, "program-redis-py-lock-sentinel-failover", 1.0, &real);
  // B got the lock (from the promoted replica: the old primary was down
  // from 250 ms) and wrote, for real.
  bool b_wrote = false;
  for (const ResourceOpRecord& op : real.run.history.resource_ops) b_wrote |= op.client == "B" && op.write;
  EXPECT_TRUE(b_wrote);
}

}  // namespace
}  // namespace fencesim::real
