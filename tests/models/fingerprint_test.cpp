// RunResult::fingerprint (models/fingerprint.hpp): a hash of the History, the
// engine's events and the Raft events — the same with the trace on or off,
// equal for two runs of one seed, different for other seeds, and sensitive
// to what the History does not record.
#include <gtest/gtest.h>

#include <string>

#include "models/fingerprint.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

/// Three workers on an etcd lock while a nemesis pauses, crashes and cuts
/// members and workers.
Scenario etcd_nemesis(std::uint64_t seed) {
  NemesisSpec n;
  n.kinds = {FaultKind::kCrash, FaultKind::kPartition, FaultKind::kPause};
  n.targets = {"etcd-0", "etcd-1", "etcd-2", "worker-0", "worker-1"};
  n.interval_min = 1s, n.interval_max = 3s;
  n.max_duration = 4s;
  ScenarioBuilder b("fingerprint-nemesis");
  b.seed(seed).duration(30s).settle(10s).etcd(3s).fenced(FenceCheck::kStrict, true).nemesis(n);
  for (int k = 0; k < 3; ++k) b.client("worker-" + std::to_string(k), counter(300ms, 30, 200ms));
  return b.build();
}

RunResult run(const Scenario& s, bool trace) {
  RunOptions opt;
  opt.trace = trace;
  return run_scenario(s, opt);
}

TEST(RunFingerprint, IsTheSameWithTheTraceOnAndOff) {
  const Scenario s = etcd_nemesis(3);
  const RunResult on = run(s, true);
  const RunResult off = run(s, false);
  EXPECT_FALSE(on.trace.events().empty());
  EXPECT_TRUE(off.trace.events().empty());
  EXPECT_FALSE(on.drawn.empty()) << "the nemesis must have drawn faults";
  EXPECT_EQ(on.fingerprint, off.fingerprint);
}

TEST(RunFingerprint, IsEqualForTwoRunsOfOneSeed) {
  const Scenario s = etcd_nemesis(4);
  EXPECT_EQ(run(s, false).fingerprint, run(s, false).fingerprint);
}

TEST(RunFingerprint, DiffersForOtherSeedsOfANemesisScenario) {
  const std::uint64_t base = run(etcd_nemesis(1), false).fingerprint;
  for (std::uint64_t seed : {2ULL, 3ULL, 1000ULL}) {
    EXPECT_NE(run(etcd_nemesis(seed), false).fingerprint, base) << "seed " << seed;
  }
}

TEST(RunFingerprint, SeesReplicationThatTheHistoryDoesNotRecord) {
  // The same workload on a Redis primary with and without a replica: the
  // primary answers the clients alike (the latency is fixed, so replication
  // takes no draw from the network's stream), and the History is the same
  // record for record. The replica's replication messages are engine events.
  auto scenario = [](int replicas) {
    return ScenarioBuilder("fingerprint-replica")
        .duration(20s)
        .redis(5s, replicas)
        .fenced()
        .client("A", counter(300ms, 20, 200ms))
        .client("B", counter(300ms, 20, 200ms))
        .build();
  };
  const RunResult alone = run(scenario(0), false);
  const RunResult replicated = run(scenario(1), false);
  ASSERT_GT(alone.history.grants.size(), 5u);
  EXPECT_EQ(history_fingerprint(alone.history), history_fingerprint(replicated.history))
      << "the premise: the History does not show the replica";
  EXPECT_GT(replicated.events, alone.events);
  EXPECT_NE(alone.fingerprint, replicated.fingerprint);
}

TEST(RunFingerprint, CombinesItsThreePartsInOrder) {
  EXPECT_NE(run_fingerprint(1, 2, std::nullopt), run_fingerprint(2, 1, std::nullopt));
  EXPECT_NE(run_fingerprint(1, 2, std::nullopt), run_fingerprint(1, 2, 0));
  EXPECT_NE(run_fingerprint(1, 2, 3), run_fingerprint(1, 2, 4));
  EXPECT_EQ(run_fingerprint(1, 2, 3), run_fingerprint(1, 2, 3));
}

TEST(HistoryFingerprint, ChangesWithAnyRecord) {
  History h;
  h.grant(1s, "A", "v1", 7, "redis-0");
  const std::size_t b = h.begin_belief(1s, "A", "v1", 7);
  h.end_belief(b, 2s, "release");
  h.lease_end(3s, "v1", "deleted", LeaseEndCause::kDeleted);
  h.resource_ops.push_back(ResourceOpRecord{});
  h.iterations.push_back(IterationRecord{});
  h.faults.push_back(FaultRecord{});
  h.renewals.push_back(RenewalRecord{});
  h.note(4s, "redis-0", "expiry", "v1 expired");
  const std::uint64_t base = history_fingerprint(h);
  EXPECT_EQ(history_fingerprint(h), base);
  auto changed = [&](auto&& edit) {
    History copy = h;
    edit(copy);
    return history_fingerprint(copy);
  };
  EXPECT_NE(changed([](History& x) { x.grants[0].token = 8; }), base);
  EXPECT_NE(changed([](History& x) { x.grants[0].token.reset(); }), base);
  EXPECT_NE(changed([](History& x) { x.beliefs[0].end_reason = "crash"; }), base);
  EXPECT_NE(changed([](History& x) { x.lease_ends.begin()->second.at = 4s; }), base);
  EXPECT_NE(changed([](History& x) { x.resource_ops[0].accepted = true; }), base);
  EXPECT_NE(changed([](History& x) { x.resource_ops[0].tag = "B"; }), base);
  EXPECT_NE(changed([](History& x) { x.resource_ops[0].effect = "version 1 by A replaces version 2 by B"; }), base);
  EXPECT_NE(changed([](History& x) { x.resource_ops[0].kind = ResourceOpKind::kWrite; }), base);
  EXPECT_NE(changed([](History& x) { x.resource_ops[0].receipt = "r1"; }), base);
  EXPECT_NE(changed([](History& x) { x.iterations[0].done = 5s; }), base);
  EXPECT_NE(changed([](History& x) { x.faults[0].skipped = true; }), base);
  EXPECT_NE(changed([](History& x) { x.renewals[0].success = true; }), base);
  EXPECT_NE(changed([](History& x) { x.notes[0].text = "v1 expired!"; }), base);
  EXPECT_NE(changed([](History& x) { x.lease_losses = 1; }), base);
  // Strings are length-prefixed: moving a character between two fields shows.
  EXPECT_NE(changed([](History& x) { x.grants[0].client = "Av", x.grants[0].value = "1"; }), base);
}

TEST(RaftFingerprint, ChangesWithAnyEventAndCount) {
  raft::RaftHistory h;
  h.add(raft::RaftEvent{1s, "etcd-0", 1, 0, {}, 0, 0, {}, "", raft::EventKind::kBecameLeader});
  h.add(raft::RaftEvent{2s, "etcd-1", 1, 1, "put k", 1, 0, {}, "", raft::EventKind::kCommit});
  h.stats.elections = 1;
  const std::uint64_t base = raft_fingerprint(h);
  EXPECT_EQ(raft_fingerprint(h), base);
  auto changed = [&](auto&& edit) {
    raft::RaftHistory copy = h;
    edit(copy);
    return raft_fingerprint(copy);
  };
  EXPECT_NE(changed([](raft::RaftHistory& x) { x.events[1].index = 2; }), base);
  EXPECT_NE(changed([](raft::RaftHistory& x) { x.events[1].kind = raft::EventKind::kApply; }), base);
  EXPECT_NE(changed([](raft::RaftHistory& x) { x.events[0].member = "etcd-2"; }), base);
  EXPECT_NE(changed([](raft::RaftHistory& x) { x.events.pop_back(); }), base);
  EXPECT_NE(changed([](raft::RaftHistory& x) { x.stats.leader_changes = 1; }), base);
}

}  // namespace
}  // namespace fencesim::testing
