// Program clients (models/program/, program/host.cpp, docs/PROTOCOL.md)
// with tests/programs/raw_client.py, a client written against the protocol
// document alone: the lockstep, the history it feeds, faults, the errors,
// warm processes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "loader/loader.hpp"
#include "models/program/errors.hpp"
#include "models/world.hpp"
#include "program_testing.hpp"

namespace fencesim {
namespace {

using program::ProgramError;

/// Two program clients running raw_client.py in `mode`, on an unfenced
/// resource with no lock service; B starts 100 ms after A.
Scenario scenario(const std::string& mode, const std::string& extra_client_keys = "",
                  const std::string& faults = "[]") {
  const std::string program = R"({"command": ["python3", "raw_client.py", ")" + mode + R"("]})";
  const std::string text = R"({"version": 1, "scenario": "program-)" + mode + R"(", "seed": 1,
    "duration": "10s", "settle": "2s", "network": {"latency": "1ms"},
    "lock": {"service": "none"}, "resource": {"kind": "unfenced", "initial": 1000},
    "clients": [{"name": "A", "program": )" +
                           program + extra_client_keys + R"(},
                {"name": "B", "start": "100ms", "program": )" +
                           program + R"(}],
    "faults": )" + faults + "}";
  LoadResult r = load_scenario_text(text, "program_client_test");
  if (!r.ok()) throw std::runtime_error(r.error->to_string());
  resolve_program_folders(*r.scenario, std::string(FENCESIM_SOURCE_DIR) + "/tests/programs/scenario.json");
  return *r.scenario;
}

std::string notes_of(const RunResult& r, const std::string& client) {
  std::string out;
  for (const NoteRecord& n : r.history.notes) {
    if (n.node == client && n.kind == "program") out += n.text + "\n";
  }
  return out;
}

using program_testing::error_of;
using program_testing::from_text;
using program_testing::tools_required;

TEST(ProgramClient, ReadModifyWriteRecordsTheHistoryOfABuiltInClient) {
  const RunResult r = run_scenario(scenario("rmw"));
  // A reads 1000 at 1 ms, writes 1001 at 503 ms; B reads 1000 at 101 ms
  // (before A's write) and writes 1001 at 603 ms: a lost update.
  ASSERT_EQ(r.history.resource_ops.size(), 4u);
  EXPECT_EQ(r.history.resource_ops[0].client, "A");
  EXPECT_EQ(r.history.resource_ops[0].at, sim::Time{std::chrono::milliseconds(1)});
  EXPECT_EQ(r.history.resource_ops[3].client, "B");
  EXPECT_TRUE(r.history.resource_ops[3].write);
  EXPECT_EQ(r.history.resource_ops[3].read_value, 1000);
  EXPECT_EQ(notes_of(r, "A"), "wrote 1001 at 504000000\n");
  ASSERT_EQ(r.history.iterations.size(), 2u);
  EXPECT_TRUE(r.history.iterations[0].success);
  const auto lost = std::find_if(r.verdicts.begin(), r.verdicts.end(),
                                 [](const Verdict& v) { return v.property == Property::kNoLostUpdate; });
  ASSERT_NE(lost, r.verdicts.end());
  EXPECT_EQ(lost->status, Status::kViolated);
  // stderr is kept per client.
  ASSERT_EQ(r.program_output.size(), 2u);
  EXPECT_NE(r.program_output[0].second.find("init A restarts 0"), std::string::npos);
}

TEST(ProgramClient, SameSeedSameRun) {
  const RunResult a = run_scenario(scenario("hold"));
  const RunResult b = run_scenario(scenario("hold"));
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  // The beliefs the program stated overlap: mutual exclusion is violated.
  ASSERT_EQ(a.history.beliefs.size(), 2u);
  EXPECT_EQ(a.history.beliefs[0].value, "A-v");
  EXPECT_EQ(a.history.beliefs[0].end_reason, "release");
  const auto me = std::find_if(a.verdicts.begin(), a.verdicts.end(),
                               [](const Verdict& v) { return v.property == Property::kMutualExclusion; });
  ASSERT_NE(me, a.verdicts.end());
  EXPECT_EQ(me->status, Status::kNotApplicable);  // lock.service none takes no lock
}

TEST(ProgramClient, TimersCountOnTheClientsClocksAndAPauseHoldsDeliveries) {
  // A is paused from 500 ms to 4.5 s: its 1 s timer fires when the pause
  // ends, and its wall-clock timer 2 s after that reading.
  const RunResult r =
      run_scenario(scenario("clock", "", R"([{"at": "500ms", "kind": "pause", "target": "A", "duration": "4s"}])"));
  EXPECT_EQ(notes_of(r, "A"), "a 4500000000/4500000000 b 6500000000/6500000000\nnow 6500000000\n");
  // B starts at 100 ms.
  EXPECT_EQ(notes_of(r, "B"), "a 1100000000/1100000000 b 3100000000/3100000000\nnow 3100000000\n");
}

TEST(ProgramClient, ACrashKillsTheProcessAndTheRestartStartsANewOne) {
  const RunResult r =
      run_scenario(scenario("crash", "", R"([{"at": "1s", "kind": "crash", "target": "A", "restart_after": "2s"}])"));
  ASSERT_GE(r.history.beliefs.size(), 3u);
  EXPECT_EQ(r.history.beliefs[0].value, "A-0");
  EXPECT_EQ(r.history.beliefs[0].end_reason, "crash");
  EXPECT_EQ(notes_of(r, "A"), "done after 1 restarts\n");
  EXPECT_NE(r.program_output[0].second.find("init A restarts 1"), std::string::npos);
}

TEST(ProgramClient, ProtocolErrorsQuoteTheLineAndExitTwo) {
  for (const auto& [mode, words] : std::vector<std::pair<std::string, std::string>>{
           {"garbage", "expected a JSON object in line: this is not json"},
           {"unknown", "unknown message type \"sned\" in line: {\"type\": \"sned\", \"id\": 1}"},
           {"dup-id", "the id 4 was used before"},
           {"huge-id", "a request needs an \"id\", a positive integer below 2^63"},
           {"huge-after", "\"after\" must be an integer from -9223372036854775808 to 9223372036854775807"},
           {"bad-node", "\"nowhere\" is not one"},
           {"no-hello", "expected {\"type\":\"hello\",...} in its first line"},
           {"bad-utf8", "a line that is not UTF-8 (byte"}}) {
    const ProgramError e = error_of(scenario(mode));
    EXPECT_EQ(e.kind, ProgramError::Kind::kProtocol) << mode;
    EXPECT_EQ(e.exit_code(), 2) << mode;
    EXPECT_NE(std::string(e.what()).find("client A: the program broke the protocol"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ProgramClient, AProgramThatDiesOrHangsStopsTheRunWithExitThree) {
  const ProgramError died = error_of(scenario("die"));
  EXPECT_EQ(died.exit_code(), 3);
  EXPECT_NE(std::string(died.what()).find("exited with status 7"), std::string::npos) << died.what();
  EXPECT_NE(std::string(died.what()).find("boom: the program failed on purpose"), std::string::npos) << died.what();

  Scenario s = scenario("never-yield");
  // Long enough for Python to start on a loaded machine.
  s.clients[0].program->yield_timeout = std::chrono::seconds(3);
  s.clients[1].program->yield_timeout = std::chrono::seconds(3);
  const ProgramError e = error_of(s);
  EXPECT_EQ(e.exit_code(), 3);
  EXPECT_NE(std::string(e.what()).find("sent no yield within 3s (program.yield_timeout) after: {\"type\":\"init\""),
            std::string::npos)
      << e.what();
}

TEST(ProgramClient, AProgramThatExitsWithStatusZeroHasFinished) {
  // At once after init: no history, and the run goes on for B.
  const RunResult at_init = run_scenario(scenario("exit0-init"));
  EXPECT_TRUE(at_init.history.resource_ops.empty());
  // After a read, with a timer pending: the read is in the history and the
  // timer's firing is dropped.
  const RunResult later = run_scenario(scenario("exit0-later"));
  ASSERT_EQ(later.history.resource_ops.size(), 2u);
  EXPECT_EQ(later.history.resource_ops[0].client, "A");
  EXPECT_EQ(later.history.resource_ops[1].client, "B");
  EXPECT_FALSE(later.history.resource_ops[1].write);
}

TEST(ProgramClient, AProgramThatClosesItsStdoutButRunsOnStopsTheRunWithExitThree) {
  Scenario s = scenario("close-stdout");
  s.clients[0].program->yield_timeout = std::chrono::seconds(2);
  const ProgramError e = error_of(s);
  EXPECT_EQ(e.exit_code(), 3);
  EXPECT_NE(std::string(e.what()).find("closed its stdout but is still running 2s later"), std::string::npos)
      << e.what();
}

TEST(ProgramClient, AProgramThatCannotStartIsBadInput) {
  Scenario s = scenario("rmw");
  s.clients[0].program->command = {"no-such-program-fencesim"};
  const ProgramError e = error_of(s);
  EXPECT_EQ(e.kind, ProgramError::Kind::kStart);
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_NE(std::string(e.what()).find("cannot start the program no-such-program-fencesim"), std::string::npos);
}

TEST(ProgramClient, AReusableProgramStaysWarmBetweenRunsAndGivesTheSameRun) {
  const RunResult first = run_scenario(scenario("reuse"));
  const RunResult second = run_scenario(scenario("reuse"));
  EXPECT_EQ(first.fingerprint, second.fingerprint);
  // The same processes served both runs (a warm process may serve another
  // client than before): the same pids, in some order.
  auto pids = [](const RunResult& r) {
    std::set<std::string> out;
    for (const auto& [client, text] : r.program_output) out.insert(text.substr(0, text.find(" init")));
    return out;
  };
  EXPECT_EQ(pids(first), pids(second));
  EXPECT_EQ(pids(first).size(), 2u);
}

/// The seed article's worked example with two raw program clients that run
/// its Lua acquire script (SET NX PX + INCR) on the simulated Redis: the
/// same verdicts as the built-in client's worked-example-fenced.json.
TEST(ProgramClient, TheSeedArticlesScriptGrantsWithTokensInTheSimulatedRedis) {
  const std::string text = R"({"version": 1, "scenario": "seed-raw", "seed": 1, "duration": "60s",
    "settle": "20s", "network": {"latency": "1ms"},
    "lock": {"service": "redis", "ttl": "10s", "replicas": 0, "sentinels": 0},
    "resource": {"kind": "fenced", "check": "strict", "initial": 1000},
    "clients": [{"name": "A", "program": {"command": ["python3", "raw_client.py", "seed"]}},
                {"name": "B", "start": "2s", "program": {"command": ["python3", "raw_client.py", "seed"]}}],
    "faults": [{"at": "200ms", "kind": "pause", "target": "A", "duration": "12s"}],
    "expect": {"mutual_exclusion": "violated", "no_stale_write": "holds", "no_lost_update": "holds",
               "token_monotonic": "holds", "progress": "holds"}})";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_TRUE(r.all_met);
  // Four grants, tokens 1 to 4 from the script's INCR, recorded by the server.
  ASSERT_EQ(r.history.grants.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.history.grants[i].token, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(r.history.grants[i].server, "redis-0");
  }
  EXPECT_EQ(r.history.grants[0].client, "A");
  EXPECT_EQ(r.history.grants[0].value, "A-0");
  // A's lease expired at the server while it was paused.
  ASSERT_EQ(r.history.lease_ends.count("A-0"), 1u);
  EXPECT_EQ(r.history.lease_ends.at("A-0").reason, "expired on redis-0 wall clock");
  // A's late write with token 1 was rejected.
  const auto rejected = std::count_if(r.history.resource_ops.begin(), r.history.resource_ops.end(),
                                      [](const ResourceOpRecord& o) { return o.write && !o.accepted; });
  EXPECT_EQ(rejected, 1);
}

/// MULTI/EXEC/WATCH on a program's connection (models/redis/raw.cpp, Redis
/// 7.0 multi.c): B's SET between A's WATCH and EXEC aborts A's transaction
/// (nil); the next one runs atomically; a refused command dooms the next.
TEST(ProgramClient, RedisTransactionsWatchAbortAndExecAbort) {
  const std::string text = R"({"version": 1, "scenario": "tx", "seed": 1, "duration": "5s", "settle": "1s",
    "network": {"latency": "1ms"}, "lock": {"service": "redis", "ttl": "10s", "replicas": 0, "sentinels": 0},
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["python3", "raw_client.py", "tx"]}},
                {"name": "B", "start": "100ms", "program": {"command": ["python3", "raw_client.py", "tx"]}}]})";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(r, "B"), "[{\"status\":\"OK\"}]\n");
  EXPECT_EQ(notes_of(r, "A"),
            "[{\"status\":\"OK\"},{\"status\":\"OK\"},{\"status\":\"QUEUED\"},{\"status\":\"QUEUED\"},null,"
            "{\"status\":\"OK\"},{\"status\":\"QUEUED\"},{\"status\":\"QUEUED\"},[{\"status\":\"OK\"},1],"
            "{\"status\":\"OK\"},{\"error\":\"ERR unknown command 'NOSUCH', with args beginning with: \"},"
            "{\"error\":\"EXECABORT Transaction discarded because of previous errors.\"},"
            "{\"error\":\"ERR EXEC without MULTI\"},\"A2\",\"1\"]\n");
}

/// WAIT (models/redis/raw.cpp, Redis 7.0 waitCommand): the replicas that
/// acknowledged the connection's last write; with redis-2 cut off, the
/// answer comes at the timeout with 1. A replica refuses WAIT.
TEST(ProgramClient, RedisWaitCountsReplicaAcknowledgements) {
  const std::string text = R"({"version": 1, "scenario": "wait", "seed": 1, "duration": "5s", "settle": "1s",
    "network": {"latency": "1ms"}, "lock": {"service": "redis", "ttl": "10s", "replicas": 2, "sentinels": 0},
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["python3", "raw_client.py", "wait"]}}],
    "faults": [{"at": "1s", "kind": "partition", "isolate": ["redis-2"], "duration": "10s"}]})";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(r, "A"),
            "[[2,2],[{\"status\":\"OK\"},4],[2,108],[{\"status\":\"OK\"},1110],[1,1612],[1,1614],"
            "[{\"error\":\"ERR value is not an integer or out of range\"},1616],"
            "{\"error\":\"ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
            "replica is configured to be writable (which is not the default) writes to replicas are just local and "
            "are not propagated.\"}]\n");
}

/// Redis Cluster for a program's commands (cluster.c getNodeByQuery): on
/// each of the 6 nodes (3 shards, a replica each), SET k, EVAL over two
/// slots, the seed script over one hash tag, SCRIPT LOAD (no keys): MOVED
/// unless the node is the slot's primary, CROSSSLOT whatever the node.
TEST(ProgramClient, RedisClusterRoutesAProgramsCommandsBySlot) {
  const std::string text = R"({"version": 1, "scenario": "cl", "seed": 1, "duration": "5s", "settle": "1s",
    "network": {"latency": "1ms"},
    "lock": {"service": "redis", "ttl": "10s", "key": "{lock}:key", "cluster": {"shards": 3}},
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["python3", "raw_client.py", "cluster"]}}]})";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(r, "A"),
            "MOVED CROSSSLOT MOVED ok MOVED CROSSSLOT MOVED ok ok CROSSSLOT MOVED ok MOVED CROSSSLOT MOVED ok "
            "MOVED CROSSSLOT ok ok MOVED CROSSSLOT MOVED ok\n");
}

}  // namespace
}  // namespace fencesim

namespace fencesim {
namespace {

/// The Python SDK's asyncio mode (sdk/python/fencesim/aio.py): a renewal
/// coroutine beside the work on asyncio's own loop, on simulated time. Its
/// renewals come every TTL/3 (1 s) and the same seed gives the same run.
TEST(ProgramClient, PythonAsyncioModeRunsOnSimulatedTime) {
  const std::string program = R"({"command": ["python3", "-m", "fencesim", "async_client.py"],
                                  "env": {"PYTHONPATH": ")" +
                              std::string(FENCESIM_SOURCE_DIR) + R"(/sdk/python"}})";
  const std::string text = R"({"version": 1, "scenario": "aio", "seed": 1, "duration": "20s", "settle": "5s",
    "network": {"latency": "1ms"}, "lock": {"service": "redis", "ttl": "3s", "replicas": 0, "sentinels": 0},
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": )" +
                           program + R"(},
                {"name": "B", "start": "1s", "program": )" +
                           program + "}]}";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(r, "A"),
            "renew 1 at 1004; renew 1 at 2006; renew 1 at 3008; renew 1 at 4010; wrote True at 5010\n");
  EXPECT_EQ(notes_of(r, "B"),
            "renew 1 at 5574; renew 1 at 6576; renew 1 at 7578; renew 1 at 8580; wrote True at 9580\n");
  EXPECT_EQ(run_scenario(from_text(text)).fingerprint, r.fingerprint);
}

}  // namespace
}  // namespace fencesim

namespace fencesim {
namespace {

/// LeaseTimeToLive (etcd v3.5 v3_server.go): the leader's lessor's remaining
/// TTL in whole seconds (truncated) and the granted TTL, from the leader or
/// through a follower; TTL -1 once it expired and was revoked, and for an
/// unknown lease (etcd v3.4 api/v3rpc/lease.go answers ErrLeaseNotFound so). RangePrefix lists the keys under a prefix
/// in key order, `limit` of them.
TEST(ProgramClient, EtcdLeaseTimeToLiveAndRangePrefix) {
  const std::string text = R"({"version": 1, "scenario": "ttl", "seed": 1, "duration": "10s", "settle": "2s",
    "network": {"latency": "1ms"}, "lock": {"service": "etcd", "ttl": "5s", "nodes": 3},
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["python3", "raw_client.py", "ttl"]}}]})";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(r, "A"),
            "LeaseGrant:5/None LeaseTimeToLive:2/5 LeaseTimeToLive:2/5 RangePrefix:p/a=P/A@3,p/b=P/B@2,p/c=P/C@5 "
            "RangePrefix:p/a=P/A@3,p/b=P/B@2 LeaseTimeToLive:-1/None LeaseTimeToLive:-1/None\n");
}

/// The Python SDK's etcd Watch: a timeout on simulated time, the events of
/// each revision in one delivery, nothing after the cancel.
TEST(ProgramClient, PythonSdkEtcdWatchStreamsEventsUntilCancelled) {
  const std::string text = R"({"version": 1, "scenario": "watch", "seed": 1, "duration": "10s", "settle": "2s",
    "network": {"latency": "1ms"}, "lock": {"service": "etcd", "ttl": "5s", "nodes": 3},
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["python3", "-m", "fencesim", "watch_client.py"],
                 "env": {"PYTHONPATH": ")" +
                           std::string(FENCESIM_SOURCE_DIR) + R"(/sdk/python"}}}]})";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(r, "A"),
            "nothing in 0.5s: None at 500 ms | PUT job/1@2 | PUT job/2@3 DELETE job/1@3 | prefix_end 'job0' "
            "'\\x00'\n");
}

/// Whether Debian's python3 has redis-py (python3-redis, tools/deps.sh
/// --test). The tests that run redis-py itself use that interpreter: the
/// first python3 on PATH may be another one (pyenv) without it.
bool debian_python_has_redis_py() { return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0; }

/// SENTINEL masters at the simulated sentinels, and the SDK's
/// redis_sentinel() — redis-py's own Sentinel and SentinelManagedConnection
/// over SimConnection: it follows the failover to redis-1 after the primary
/// crashes (timeouts while the sentinels still name redis-0, then
/// MasterNotFoundError once they see it down: redis-py's check_master_state).
TEST(ProgramClient, PythonSdkRedisSentinelFollowsAFailover) {
  if (!debian_python_has_redis_py()) {
    // The skip line is the one CTest's SKIP_REGULAR_EXPRESSION matches.
    if (tools_required()) FAIL() << "the unit tier needs python3-redis: tools/deps.sh --test installs it";
    GTEST_SKIP() << "SKIP: the unit tier needs python3-redis: tools/deps.sh --test installs it";
  }
  const std::string text = R"({"version": 1, "scenario": "sentinel", "seed": 1, "duration": "20s", "settle": "2s",
    "network": {"latency": "1ms"},
    "lock": {"service": "redis", "ttl": "5s", "replicas": 1, "sentinels": 3, "down_after": "3s"},
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["/usr/bin/python3", "-m", "fencesim", "sentinel_client.py"],
                 "env": {"PYTHONPATH": ")" +
                           std::string(FENCESIM_SOURCE_DIR) + R"(/sdk/python"}}}],
    "faults": [{"at": "2500ms", "kind": "crash", "target": "redis-0", "restart_after": "30s"}]})";
  const RunResult r = run_scenario(from_text(text));
  const std::string notes = notes_of(r, "A");
  EXPECT_EQ(notes.substr(0, notes.find(" 3:")), "0:redis-0 1:redis-0 2:redis-0") << notes;
  EXPECT_NE(notes.find("TimeoutError"), std::string::npos) << notes;
  EXPECT_NE(notes.find("MasterNotFoundError"), std::string::npos) << notes;
  EXPECT_NE(notes.find("11:redis-1"), std::string::npos) << notes;
  EXPECT_NE(notes.find("sentinel_name fencesim"), std::string::npos) << notes;
}

/// The Node SDK's clocks and timers (sdk/node/lib/sim.js): timers that fell
/// due during a pause run when it ends, once each, in the order they fell
/// due, seeing the clocks of that moment; an interval is rescheduled from
/// when it ran; a wall-clock jump moves Date.now() and no timer; randomness
/// is the client's own stream.
TEST(ProgramClient, NodeSdkTimersRunLateAfterAPauseInTheOrderTheyFellDue) {
  REQUIRE_NODE_SDK();
  const std::string text = R"({"version": 1, "scenario": "node-timers", "seed": 1, "duration": "5s",
    "lock": {"service": "none"}, "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["node", ")" +
                           std::string(FENCESIM_SOURCE_DIR) + R"(/sdk/node/run.js", "node_timers.js"]}}],
    "faults": [{"at": "200ms", "kind": "pause", "target": "A", "duration": "1s"},
               {"at": "1500ms", "kind": "clock_jump", "target": "A", "by": "10s", "clock": "wall"}]})";
  const RunResult r = run_scenario(from_text(text));
  const std::string notes = notes_of(r, "A");
  const std::string timers = notes.substr(notes.find('\n') + 1);
  EXPECT_EQ(timers,
            "immediate wall 0 mono 0\n"
            "timeout 300 wall 1200 mono 1200\n"
            "interval 1 wall 1200 mono 1200\n"
            "timeout 500 wall 1200 mono 1200\n"
            "interval 2 wall 11600 mono 1600\n"
            "interval 3 wall 12000 mono 2000\n"
            "interval 4 wall 12400 mono 2400\n")
      << notes;
  // The random stream is the client's: the same seed draws the same values.
  const RunResult again = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(again, "A"), notes);
  EXPECT_EQ(notes.rfind("random 0.", 0), 0u) << notes;
}

/// The Node SDK's file calls (sdk/node/lib/sim.js, FS_CALLS) finish in the
/// order they were called: five ioredis connections reading ioredis's
/// package.json at once made the order of their first commands the thread
/// pool's (program.node-redlock-clock-jump differed between two runs).
TEST(ProgramClient, NodeSdkFileReadsFinishInTheOrderTheyWereCalled) {
  REQUIRE_NODE_SDK();
  const std::string text = R"({"version": 1, "scenario": "node-files", "seed": 1, "duration": "1s",
    "lock": {"service": "none"}, "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["node", ")" +
                           std::string(FENCESIM_SOURCE_DIR) + R"(/sdk/node/run.js", "node_files.js"]}}]})";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(r, "A"), "big 33554432, small x, stat 1, missing ENOENT\n");
}

/// A bad field inside a txn's operation is named with its place.
TEST(ProgramClient, EtcdTxnFieldErrorsNameTheirPlace) {
  const ProgramError e = error_of(from_text(R"({"version": 1, "scenario": "bad-txn", "seed": 1, "duration": "5s",
    "lock": {"service": "etcd", "ttl": "5s"}, "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["python3", "raw_client.py", "bad-txn"]}}]})"));
  EXPECT_EQ(e.exit_code(), 2);
  EXPECT_NE(std::string(e.what()).find("success[1]: the field \"key\" is missing"), std::string::npos) << e.what();
}

/// The general etcd v3 API (models/etcd/txn.hpp, models/program/
/// requests_etcd.cpp): compares as etcd's applyCompare, a txn's writes at
/// one revision and its range seeing them, the refusals, Range's limit,
/// DeleteRange over a range, and a Watch of a prefix on a follower that
/// replays from a revision and stops at its cancel.
TEST(ProgramClient, EtcdTxnRangeDeleteRangeAndWatch) {
  const std::string text = R"({"version": 1, "scenario": "etcd-txn", "seed": 1, "duration": "10s", "settle": "2s",
    "network": {"latency": "1ms"}, "lock": {"service": "etcd", "ttl": "5s", "nodes": 3},
    "resource": {"kind": "unfenced"},
    "clients": [{"name": "A", "program": {"command": ["python3", "raw_client.py", "etcd-txn"]}}]})";
  const RunResult r = run_scenario(from_text(text));
  EXPECT_EQ(notes_of(r, "A"),
            "taken:False k1=v1@2/2/v1 | cas:True rev 3 k1=v2@2/3/v2,k2=x@3/3/v1 | value-of-missing:False | "
            "version-of-missing:True rev 3 | etcdserver: duplicate key given in txn request | "
            "etcdserver: requested lease not found | limit:k1=v2@2/3/v2 count 2 more True | deleted:2 rev 4\n"
            "PUT:k1@2 PUT:k1@3 PUT:k2@3 | DELETE:k1@4 DELETE:k2@4\n");
}

}  // namespace
}  // namespace fencesim
