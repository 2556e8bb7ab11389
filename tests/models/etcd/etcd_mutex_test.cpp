// The etcd lock client (models/client/etcd_client.cpp: a session with
// keepalives and concurrency.Mutex) against the etcd-like service, told as
// whole runs through the ScenarioBuilder: lock order, the waiter's watch,
// tokens, sessions, member failover, the `etcd-leader` role, and Raft's own
// safety in every run.
#include <gtest/gtest.h>

#include "tests/models/etcd/etcd_harness.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using P = Property;
constexpr Status kHolds = Status::kHolds;

/// "lock/<lease>@<create revision>" → "lock/<lease>".
std::string key_of(const std::string& hold) { return hold.substr(0, hold.rfind('@')); }

std::vector<const GrantRecord*> grants_of(const RunResult& r, const std::string& client) {
  std::vector<const GrantRecord*> out;
  for (const GrantRecord& g : r.history.grants) {
    if (g.client == client) out.push_back(&g);
  }
  return out;
}

const BeliefRecord* belief(const RunResult& r, const std::string& client, int nth = 0) {
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.client == client && nth-- == 0) return &b;
  }
  return nullptr;
}

void expect_safe(const RunResult& r) {
  EXPECT_EQ(status(r, P::kRaftSafety), kHolds) << verdict_of(r, P::kRaftSafety).summary;
  EXPECT_FALSE(r.budget_exceeded);
}

ScenarioBuilder two_clients(const std::string& name) {
  ScenarioBuilder b(name);
  b.duration(20s).etcd(3s).fenced().client("A", counter(500ms)).client("B", counter(500ms), [](ClientSpec& c) {
    c.start = 100ms;
  });
  return b;
}

TEST(EtcdMutex, TwoClientsGetTheLockInCreateRevisionOrderWithTheCreateRevisionAsToken) {
  const RunResult r = two_clients("order").run();
  ASSERT_EQ(r.history.grants.size(), 2u);
  const GrantRecord& a = r.history.grants[0];
  const GrantRecord& b = r.history.grants[1];
  EXPECT_EQ(a.client, "A");
  EXPECT_EQ(b.client, "B");
  // A's key is the first write (revision 2), B's the second (3); A's Unlock
  // is revision 4. The token is the key's create revision.
  EXPECT_EQ(a.token, 2);
  EXPECT_EQ(b.token, 3);
  EXPECT_EQ(a.value.substr(a.value.rfind('@')), "@2");
  EXPECT_EQ(b.value.substr(b.value.rfind('@')), "@3");
  EXPECT_EQ(a.server, "etcd-0");  // client 0 talks to etcd-0
  EXPECT_EQ(b.server, "etcd-1");  // client 1 to etcd-1
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
  EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds);
  EXPECT_EQ(r.metrics.writes_accepted, 2);
  expect_safe(r);
}

TEST(EtcdMutex, TheWaiterWatchesThePreviousKeyAndGetsTheLockAsSoonAsItIsDeleted) {
  const RunResult r = two_clients("waiter").run();
  const BeliefRecord* a = belief(r, "A");
  const BeliefRecord* b = belief(r, "B");
  ASSERT_TRUE(a && b && a->end);
  EXPECT_EQ(a->end_reason, "release");
  // B asked at 0.1 s and waited on A's key; A's Unlock is applied a few
  // milliseconds after A sends it, the watch fires, B re-checks its own key
  // (a linearizable read) and owns the lock: no polling, no TTL to wait out.
  EXPECT_GT(b->start, *a->end);
  EXPECT_LT(b->start - *a->end, 20ms);
  const auto end = r.history.lease_ends.at(a->value);
  EXPECT_EQ(end.reason, "key deleted (unlock)");
  EXPECT_LE(end.at, r.history.grants[1].at) << "B's grant follows the deletion at the service";
  expect_safe(r);
}

TEST(EtcdMutex, WithHeaderRevisionTokensTheTokenIsTheHeaderOfTheAnswerThatMadeTheClientOwner) {
  const RunResult r = two_clients("header").etcd_spec([](EtcdSpec& e) { e.token = EtcdToken::kHeaderRevision; }).run();
  ASSERT_EQ(r.history.grants.size(), 2u);
  // A owns by its lock txn (header revision 2); B by its re-check after A's
  // Unlock at revision 4, although its key was created at 3.
  EXPECT_EQ(r.history.grants[0].token, 2);
  EXPECT_EQ(r.history.grants[1].token, 4);
  EXPECT_EQ(r.history.grants[1].value.substr(r.history.grants[1].value.rfind('@')), "@3");
  EXPECT_EQ(belief(r, "B")->token, 4);
  EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds);
  expect_safe(r);
}

TEST(EtcdMutex, AClientKeepsOneSessionForAllItsIterationsAndUnlockDeletesOnlyTheKey) {
  const RunResult r = ScenarioBuilder("session")
                          .duration(20s)
                          .etcd(3s)
                          .fenced()
                          .client("A", counter(200ms, /*iterations=*/3, /*think=*/300ms))
                          .run();
  const auto g = grants_of(r, "A");
  ASSERT_EQ(g.size(), 3u);
  // The same key (one lease) each time, re-created after each Unlock.
  EXPECT_EQ(key_of(g[0]->value), key_of(g[1]->value));
  EXPECT_EQ(key_of(g[1]->value), key_of(g[2]->value));
  EXPECT_EQ(g[0]->token, 2);
  EXPECT_EQ(g[1]->token, 4);
  EXPECT_EQ(g[2]->token, 6);
  EXPECT_EQ(r.history.lease_losses, 0);
  // Keepalives every TTL/3 = 1 s for the whole run, all answered.
  EXPECT_GE(r.history.renewals.size(), 15u);
  for (const RenewalRecord& k : r.history.renewals) EXPECT_TRUE(k.success);
  expect_safe(r);
}

TEST(EtcdMutex, AClientWhoseSessionEndsWhileWaitingFailsItsLockAndOpensANewSession) {
  const RunResult r = ScenarioBuilder("session-ends-while-waiting")
                          .duration(30s)
                          .etcd(3s)
                          .fenced()
                          .client("A", counter(10s))
                          .client("B", counter(200ms), [](ClientSpec& c) { c.start = 1s; })
                          // B waits on A's key; frozen for 6 s, it sends no
                          // keepalives and its lease is revoked with its key.
                          .pause("B", 2s, 6s)
                          .run();
  ASSERT_EQ(r.history.grants.size(), 2u);
  const GrantRecord& b = r.history.grants[1];
  EXPECT_EQ(b.client, "B");
  // B's first key was created at revision 3 (A's at 2). Its lease was
  // revoked (revision 4); after the pause its session deadline fired, the
  // Lock failed, and the next attempt made a new lease and key.
  EXPECT_GT(*b.token, 4);
  EXPECT_GE(r.history.lease_losses, 1);
  bool b_waiting_key_revoked = false;
  for (const auto& [value, end] : r.history.lease_ends) {
    if (value.substr(value.rfind('@')) == "@3") b_waiting_key_revoked = end.reason.find("revoked") != std::string::npos;
  }
  EXPECT_TRUE(b_waiting_key_revoked);
  EXPECT_GT(b.at, belief(r, "A")->end.value());
  EXPECT_EQ(r.metrics.iterations_ok, 2);
  EXPECT_EQ(status(r, P::kMutualExclusion), kHolds);
  expect_safe(r);
}

TEST(EtcdMutex, AWaiterWhoseWatchWasLostWhenItsMemberRestartedStillGetsTheLock) {
  // B (client 1) waits on A's key with its watch on etcd-1, which crashes and
  // is back 100 ms later, before any of B's keepalives fail: the watch is
  // gone with the member's volatile state, and nothing tells B. A clientv3
  // watch stream would break with the connection and be re-created; the
  // model's waiter re-checks the previous key after each command_timeout
  // without news and watches again.
  const RunResult r = ScenarioBuilder("watch-lost")
                          .duration(20s)
                          .etcd(3s)
                          .fenced()
                          .client("A", counter(5s))
                          .client("B", counter(200ms), [](ClientSpec& c) { c.start = 500ms; })
                          .crash("etcd-1", 1200ms, 100ms)
                          .run();
  const auto g = grants_of(r, "B");
  ASSERT_EQ(g.size(), 1u) << "B never got the lock";
  const BeliefRecord* a = belief(r, "A");
  ASSERT_TRUE(a && a->end);
  EXPECT_GT(g[0]->at, *a->end);
  EXPECT_LT(g[0]->at, *a->end + 1100ms);
  EXPECT_EQ(r.history.lease_losses, 0);
  expect_safe(r);
}

/// A's first Unlock waits in paused etcd-1's inbox while A, after its
/// command_timeout, unlocks through etcd-2 and locks again: the same session,
/// so the same key name. When etcd-1 resumes it forwards the stale Delete,
/// which deletes A's new key; B, waiting on it, owns the lock while A still
/// believes it does. etcd's Mutex.Unlock is a plain Delete(myKey) and the
/// session reuses myKey, so a delayed duplicate Unlock does this in etcd too.
ScenarioBuilder stale_unlock(bool fence_reads) {
  ScenarioBuilder b(fence_reads ? "stale-unlock-fenced-reads" : "stale-unlock");
  b.duration(20s)
      .etcd(3s)
      .fenced(FenceCheck::kStrict, fence_reads)
      .client("B", counter(300ms), [](ClientSpec& c) { c.start = 1600ms; })
      .client("A", counter(300ms, 2, 200ms))  // client 1: etcd-1
      .pause("etcd-1", 300ms, 1350ms);
  return b;
}

TEST(EtcdMutex, ADelayedUnlockOfAnEarlierIterationDeletesTheKeyTheSameSessionRecreated) {
  const RunResult r = stale_unlock(false).run();
  const BeliefRecord* a2 = belief(r, "A", 1);
  ASSERT_TRUE(a2 && a2->end);
  EXPECT_EQ(a2->end_reason, "release");
  const auto end = r.history.lease_ends.at(a2->value);
  EXPECT_EQ(end.reason, "key deleted (unlock)");
  EXPECT_EQ(end.at, 1653ms) << "etcd-1 resumed at 1.65 s and forwarded A's first Unlock";
  EXPECT_LT(end.at, *a2->end);
  EXPECT_EQ(status(r, P::kMutualExclusion), Status::kViolated);
  EXPECT_EQ(status(r, P::kNoStaleWrite), Status::kViolated);
  EXPECT_EQ(status(r, P::kNoLostUpdate), Status::kViolated);
  EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds);
  expect_safe(r);
}

TEST(EtcdMutex, FencedReadsAndWritesKeepTheIncrementWhenADelayedUnlockEndsAHold) {
  const RunResult r = stale_unlock(true).run();
  EXPECT_EQ(status(r, P::kMutualExclusion), Status::kViolated);
  EXPECT_EQ(status(r, P::kNoStaleWrite), kHolds);
  EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds);
  EXPECT_EQ(r.metrics.writes_rejected, 1);
  expect_safe(r);
}

TEST(EtcdMutex, AClientWhoseMemberIsIsolatedMovesToTheNextMember) {
  const RunResult r = ScenarioBuilder("member-isolated")
                          .duration(20s)
                          .etcd(3s)
                          .fenced()
                          .client("A", counter(200ms))
                          .client("B", counter(200ms), [](ClientSpec& c) { c.start = 2s; })
                          .isolate(0s, {"etcd-1"})
                          .run();
  const auto g = grants_of(r, "B");
  ASSERT_EQ(g.size(), 1u);
  // B (client 1) starts on etcd-1, which cannot answer: after its
  // command_timeout of 1 s it moves every request to etcd-2 and retries
  // there after its retry_interval of 100 ms.
  EXPECT_EQ(g[0]->server, "etcd-2");
  EXPECT_GE(g[0]->at, 3100ms);
  EXPECT_LT(g[0]->at, 3200ms);
  EXPECT_EQ(r.metrics.iterations_ok, 2);
  expect_safe(r);
}

TEST(EtcdMutex, AFollowerThatKnowsNoLeaderIsAFailureAndTheClientRetriesOnTheNextMember) {
  // etcd-1 alone with B: it loses its leader and answers "no leader" at once.
  const RunResult r = ScenarioBuilder("no-leader-answer")
                          .duration(20s)
                          .etcd(3s)
                          .fenced()
                          .client("A", counter(200ms), [](ClientSpec& c) { c.start = 10s; })
                          .client("B", counter(200ms), [](ClientSpec& c) { c.start = 5s; })
                          .partition(0s, {{"etcd-1", "B"}, {"etcd-0", "etcd-2"}}, 6s)
                          .run();
  const auto g = grants_of(r, "B");
  ASSERT_EQ(g.size(), 1u);
  // 5 s: "no leader" from etcd-1 (a failure, not a refusal) → etcd-2, which
  // B cannot reach until the partition ends at 6 s: a timeout at 6 s → etcd-0.
  EXPECT_EQ(g[0]->server, "etcd-0");
  EXPECT_GE(g[0]->at, 6s);
  EXPECT_LT(g[0]->at, 6500ms);
  expect_safe(r);
}

TEST(EtcdMutex, ALeaderCrashWhileALockIsHeldDoesNotEndTheHold) {
  const RunResult r = ScenarioBuilder("leader-crash")
                          .duration(30s)
                          .etcd(3s)
                          .fenced()
                          .client("A", counter(6s))
                          .client("B", counter(200ms), [](ClientSpec& c) { c.start = 1s; })
                          .crash("etcd-leader", 2s, 5s)
                          .run();
  ASSERT_EQ(r.history.faults.size(), 1u);
  EXPECT_EQ(r.history.faults[0].target, "etcd-0");
  const BeliefRecord* a = belief(r, "A");
  ASSERT_TRUE(a && a->end);
  EXPECT_EQ(a->end_reason, "release") << "A's session survived the failover";
  EXPECT_GT(*a->end, 6s);
  // The hold ended only with A's Unlock, not at the crash or the election.
  EXPECT_EQ(r.history.lease_ends.at(a->value).reason, "key deleted (unlock)");
  EXPECT_EQ(r.history.lease_losses, 0);
  EXPECT_EQ(r.metrics.iterations_ok, 2);
  for (const Verdict& v : r.verdicts) {
    if (v.status != Status::kNotApplicable) {
      EXPECT_EQ(v.status, kHolds) << to_string(v.property) << ": " << v.summary;
    }
  }
}

TEST(EtcdMutex, TheEtcdLeaderRoleTargetsTheLeaderAtThatInstantAndIsSkippedWhenThereIsNone) {
  const RunResult r = ScenarioBuilder("leader-role")
                          .duration(30s)
                          .etcd(3s)
                          .fenced()
                          .client("A", counter(200ms, 5, 1s))
                          .crash("etcd-leader", 2s)       // etcd-0, for good
                          .crash("etcd-leader", 10s)      // whoever won the election
                          .pause("etcd-leader", 20s, 1s)  // one member left: no leader
                          .run();
  ASSERT_EQ(r.history.faults.size(), 3u);
  EXPECT_EQ(r.history.faults[0].target, "etcd-0");
  std::string second_leader;
  for (const NoteRecord& n : r.history.notes) {
    if (n.kind == "leader" && n.at > 2s && n.at < 10s) second_leader = n.node;
  }
  ASSERT_FALSE(second_leader.empty());
  EXPECT_EQ(r.history.faults[1].target, second_leader);
  EXPECT_FALSE(r.history.faults[1].skipped);
  EXPECT_TRUE(r.history.faults[2].skipped);
  EXPECT_EQ(r.history.faults[2].skip_reason, "there is no etcd leader");
  expect_safe(r);
}

TEST(EtcdMutex, RaftSafetyHoldsUnderRandomFaultsOnMembersAndClients) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    NemesisSpec n;
    n.kinds = {FaultKind::kCrash, FaultKind::kPartition, FaultKind::kPause, FaultKind::kClockJump,
               FaultKind::kClockDrift};
    n.targets = {"etcd-0", "etcd-1", "etcd-2", "worker-0", "worker-1", "worker-2"};
    n.interval_min = 1s, n.interval_max = 3s;
    n.max_duration = 4s;
    ScenarioBuilder b("nemesis");
    b.seed(seed).duration(60s).settle(10s).etcd(3s).fenced(FenceCheck::kStrict, true).nemesis(n);
    for (int k = 0; k < 3; ++k) b.client("worker-" + std::to_string(k), counter(300ms, 30, 200ms));
    const RunResult r = b.run();
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_safe(r);
    // Fenced reads and writes with the create revision: no increment lost.
    EXPECT_EQ(status(r, P::kNoLostUpdate), kHolds) << verdict_of(r, P::kNoLostUpdate).summary;
    EXPECT_EQ(status(r, P::kTokenMonotonic), kHolds) << verdict_of(r, P::kTokenMonotonic).summary;
    EXPECT_GT(r.metrics.iterations_ok, 10);
  }
}

TEST(EtcdMutex, AClusterThatSchedulesFasterThanItRunsIsStoppedAtTheBudgetInsteadOfFillingTheMemory) {
  // 25 members beating every nanosecond with a millisecond of latency: each
  // tick sends 24 messages that wait a million ticks. Without the budget of
  // waiting events this took 14 GB within the event budget.
  ScenarioBuilder b("runaway");
  b.duration(1s).etcd(3s, 25).etcd_spec([](EtcdSpec& e) {
    e.heartbeat = Duration{1};
    e.election_timeout = Duration{2};
  });
  b.client("worker-0", counter(100ms, 5));
  RunOptions opt;
  opt.pending_budget = 100'000;
  const RunResult r = b.run(opt);
  EXPECT_TRUE(r.budget_exceeded);
  EXPECT_FALSE(r.all_met);
  EXPECT_LT(r.events, Limits::kEventBudget);
}

}  // namespace
}  // namespace fencesim::testing
