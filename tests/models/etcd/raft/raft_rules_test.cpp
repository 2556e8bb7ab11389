// The Raft rules, one scripted story each: elections and terms, the vote
// rules, log repair, the Figure 8 commit rule, persistence across a restart,
// PreVote, CheckQuorum and ReadIndex. Network latency is a fixed 1 ms, so the
// times in the comments are exact; election timeout 1 s, heartbeat 100 ms
// (E = 10 ticks, randomized timeouts 1.0–1.9 s).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/models/etcd/raft/cluster.hpp"

namespace {

using namespace std::chrono_literals;
using rafttest::Cluster;
using rafttest::Options;
namespace raft = fencesim::raft;
using raft::Role;
using testing::Contains;
using testing::ElementsAre;
using testing::HasSubstr;

std::string story(const raft::SafetyVerdict& v) {
  std::string s = v.summary;
  for (const auto& l : v.story) s += "\n  " + l;
  return s;
}

TEST(RaftBootstrap, EtcdZeroLeadsTermOneWithItsEmptyEntryCommittedEverywhere) {
  Cluster c(3);
  c.run_until(0ns);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(c.name(i));
    EXPECT_EQ(c.raft(i).term(), 1u);
    EXPECT_EQ(c.raft(i).leader(), c.id(0));
    EXPECT_EQ(c.raft(i).commit(), 1u);
    EXPECT_EQ(c.raft(i).applied(), 1u);
    EXPECT_EQ(c.raft(i).log(), (std::vector<raft::Entry>{{1, ""}}));
    EXPECT_EQ(c.members[i]->state, std::vector<std::string>{""});
    const int ticks = c.raft(i).randomized_election_ticks();
    EXPECT_GE(ticks, 10);
    EXPECT_LE(ticks, 19);
  }
  EXPECT_TRUE(c.raft(0).is_leader());
  EXPECT_EQ(c.leaders_of(1), std::vector<std::string>{"etcd-0"});
}

TEST(RaftBootstrap, ElectionTimeoutsAreDrawnFromEToTwoEMinusOneTicks) {
  // Over many seeds every value in {E, …, 2E−1} shows up and nothing else.
  std::vector<int> seen(40, 0);
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    Cluster c(Options().with_seed(seed).with_timeouts(500ms, 100ms));
    for (int i = 1; i < 3; ++i) seen.at(c.raft(i).randomized_election_ticks())++;
  }
  for (int t = 0; t < 40; ++t) {
    if (t >= 5 && t <= 9) {
      EXPECT_GT(seen[t], 0) << t;
    } else {
      EXPECT_EQ(seen[t], 0) << t;
    }
  }
}

TEST(RaftReplication, AProposalCommitsOnAMajorityAndEveryMemberAppliesIt) {
  Cluster c(3);
  c.at(100ms, [&] { EXPECT_EQ(c.propose(0, "put x 1"), std::optional<raft::Index>(2)); });
  c.run_until(103ms);
  // 100 ms append, 101 ms acknowledged by both, 102 ms committed on the
  // leader and the new commit index sent; 103 ms the followers apply.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.members[i]->state, (std::vector<std::string>{"", "put x 1"})) << i;
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftWalFsync, AFollowerAcknowledgesOnlyAfterItsFsyncSoTheCommitWaitsForIt) {
  // wal_fsync 10 ms: 100 ms append sent; 101 ms the followers append and
  // start their fsync; 111 ms they acknowledge; 112 ms the leader (its own
  // fsync ended at 110 ms) commits and sends the commit index; 113 ms the
  // followers apply. Without the fsync all of it is done at 103 ms.
  Cluster c(Options().with_wal_fsync(10ms));
  c.at(100ms, [&] { EXPECT_EQ(c.propose(0, "put x 1"), std::optional<raft::Index>(2)); });
  c.run_until(111ms);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.raft(i).last_index(), 2u) << i;
    EXPECT_EQ(c.raft(i).commit(), 1u) << i;
  }
  c.run_until(112ms);
  EXPECT_EQ(c.raft(0).commit(), 2u);
  EXPECT_EQ(c.members[1]->state, std::vector<std::string>{""});
  c.run_until(113ms);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.members[i]->state, (std::vector<std::string>{"", "put x 1"})) << i;
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftWalFsync, TheLeaderCountsItselfOnlyOnceItsOwnEntryIsOnDisk) {
  // One member: nobody else to wait for, so the commit is the fsync.
  Cluster c(Options().with_members(1).with_wal_fsync(25ms));
  c.at(100ms, [&] { c.propose(0, "put x 1"); });
  c.run_until(124ms);
  EXPECT_EQ(c.raft(0).commit(), 1u);
  c.run_until(125ms);
  EXPECT_EQ(c.raft(0).commit(), 2u);
}

TEST(RaftWalFsync, WritesDuringAnFsyncAreSyncedTogetherByTheNextOne) {
  // Leader alone: proposals at 100 ms (fsync 100–125), 110 ms and 120 ms
  // (both in the next fsync, 125–150): index 2 commits at 125 ms, 3 and 4
  // together at 150 ms, not at 175 ms.
  Cluster c(Options().with_members(1).with_wal_fsync(25ms));
  c.at(100ms, [&] { c.propose(0, "a"); });
  c.at(110ms, [&] { c.propose(0, "b"); });
  c.at(120ms, [&] { c.propose(0, "c"); });
  c.run_until(125ms);
  EXPECT_EQ(c.raft(0).commit(), 2u);
  c.run_until(149ms);
  EXPECT_EQ(c.raft(0).commit(), 2u);
  c.run_until(150ms);
  EXPECT_EQ(c.raft(0).commit(), 4u);
}

TEST(RaftWalFsync, AVoteIsPersistedBeforeItsReplyLeaves) {
  // The leader crashes; the member that campaigns first needs its own vote
  // and the other's on disk: with a 40 ms fsync the new leader comes later
  // than without, and Raft's rules still hold.
  auto elected_at = [](sim::Duration fsync) {
    Cluster c(Options().with_wal_fsync(fsync));
    c.at(100ms, [&] { c.crash(0); });
    sim::Duration at{-1};
    for (sim::Duration t = 100ms; t < 5s && at < sim::Duration{0}; t += 1ms) {
      c.run_until(t);
      if (c.raft(1).is_leader() || c.raft(2).is_leader()) at = t;
    }
    EXPECT_TRUE(c.check().holds) << story(c.check());
    return at;
  };
  const sim::Duration without = elected_at(0ms), with = elected_at(40ms);
  ASSERT_GT(without, sim::Duration{0});
  // The pre-vote round persists nothing; the candidate's term and vote
  // (40 ms) and the voter's vote (40 ms) are each synced before sending.
  EXPECT_GE(with - without, 80ms);
}

TEST(RaftReplication, AFollowerRefusesAProposalAndNamesTheLeader) {
  Cluster c(3);
  c.run_until(50ms);
  EXPECT_EQ(c.propose(1, "put x 1"), std::nullopt);
  EXPECT_EQ(c.raft(1).leader(), c.id(0));
}

TEST(RaftTerms, AStaleLeaderStepsDownOnAHigherTerm) {
  // etcd-0 is frozen for 4 s (a GC pause). Its followers stop hearing it,
  // elect a new leader of term 2, and go on. When etcd-0 wakes at 4.5 s it
  // still believes it leads term 1 — until the first message of term 2.
  Cluster c(3);
  c.at(500ms, [&] { c.sim.pause(c.id(0), 4s); });
  c.run_until(4499ms);
  const int l = c.leader();
  ASSERT_NE(l, -1);
  EXPECT_NE(l, 0);
  EXPECT_EQ(c.raft(l).term(), 2u);
  EXPECT_TRUE(c.raft(0).is_leader()) << "frozen, it still believes it leads";
  EXPECT_EQ(c.raft(0).term(), 1u);

  c.run_until(4500ms);
  EXPECT_EQ(c.raft(0).role(), Role::kFollower);
  EXPECT_EQ(c.raft(0).term(), 2u);
  EXPECT_EQ(c.raft(0).leader(), c.id(l));
  EXPECT_THAT(c.step_downs(0), ElementsAre("4.5s:higher term"));
  EXPECT_TRUE(c.log_has("4.5s etcd-0 stepped down from term 1"));
  c.run_until(6s);
  EXPECT_EQ(c.leader(), l) << "the stale leader does not disturb the new one";
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftVoting, AVoteIsDeniedToAShorterLog) {
  // etcd-2 misses "put a" while cut off; back, it asks for votes with a log
  // that ends at index 1 while the others' ends at index 2 (§5.4.1).
  Cluster c(Options().with_members(3).logging_votes());
  c.at(100ms, [&] { c.isolate({2}); });
  c.at(200ms, [&] { c.propose(0, "put a"); });
  c.at(400ms, [&] {
    EXPECT_EQ(c.raft(2).last_index(), 1u);
    EXPECT_EQ(c.raft(1).last_index(), 2u);
    // Back, and at the same instant asking for votes before the leader's
    // next heartbeat can repair its log; `transfer` bypasses the voters'
    // leader lease, as an etcd leadership transfer would.
    c.heal();
    c.raft(2).campaign(/*transfer=*/true);
  });
  c.run_until(410ms);
  EXPECT_TRUE(c.log_has("402ms etcd-2 got MsgVoteResp reject from etcd-0")) << testing::PrintToString(c.log);
  EXPECT_TRUE(c.log_has("402ms etcd-2 got MsgVoteResp reject from etcd-1"));
  EXPECT_EQ(c.raft(2).role(), Role::kFollower) << "two rejections of three: the election is lost";
  EXPECT_TRUE(c.leaders_of(2).empty() || c.leaders_of(2) != std::vector<std::string>{"etcd-2"});
  c.run_until(5s);
  for (raft::Term t = 2; t <= c.raft(0).term(); ++t) EXPECT_THAT(c.leaders_of(t), testing::Not(Contains("etcd-2")));
  EXPECT_THAT(c.members[2]->state, Contains("put a"));
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftVoting, AVoteIsDeniedToAnOlderLogEvenWhenItIsLonger) {
  // etcd-4 holds two uncommitted term-1 entries; etcd-1 … etcd-3 hold a
  // committed term-2 entry. etcd-4's log is longer but older: §5.4.1 compares
  // last terms first, so nobody votes for it.
  Cluster c(Options().with_members(5).logging_votes());
  c.at(100ms, [&] { c.split({{0, 4}, {1, 2, 3}}); });
  c.at(150ms, [&] {
    c.propose(0, "put a");
    c.propose(0, "put b");
  });
  c.at(200ms, [&] {
    c.crash(0);
    c.heal();
    c.isolate({4});
  });
  c.at(250ms, [&] { c.raft(1).campaign(true); });  // wins term 2 with etcd-2, etcd-3
  c.at(300ms, [&] { c.raft(4).campaign(true); });  // alone: term 2, no answers
  c.at(310ms, [&] { c.raft(4).campaign(true); });  // term 3
  c.at(350ms, [&] {
    EXPECT_EQ(c.leaders_of(2), std::vector<std::string>{"etcd-1"});
    EXPECT_EQ(c.raft(4).last_index(), 3u);
    EXPECT_EQ(c.raft(4).storage().last_term(), 1u);
    EXPECT_EQ(c.raft(1).last_index(), 2u);
    EXPECT_EQ(c.raft(1).storage().last_term(), 2u);
    c.heal();
    c.raft(4).campaign(true);  // term 4
  });
  c.run_until(360ms);
  for (const char* voter : {"etcd-1", "etcd-2", "etcd-3"}) {
    EXPECT_TRUE(c.log_has(std::string("352ms etcd-4 got MsgVoteResp reject from ") + voter))
        << voter << testing::PrintToString(c.log);
  }
  EXPECT_EQ(c.raft(4).role(), Role::kFollower);
  EXPECT_TRUE(c.leaders_of(4).empty());
  c.run_until(5s);
  EXPECT_FALSE(c.ever_applied("put a"));
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftLogRepair, UncommittedEntriesOfAnOldTermAreOverwritten) {
  // etcd-0 leads term 1 but is cut off; it accepts two proposals it can
  // never commit. The others elect a leader of term 2 and commit "kept".
  // When etcd-0 comes back, the new leader's entries replace its own.
  Cluster c(3);
  c.at(100ms, [&] { c.isolate({0}); });
  c.at(150ms, [&] {
    EXPECT_EQ(c.propose(0, "lost-1"), std::optional<raft::Index>(2));
    EXPECT_EQ(c.propose(0, "lost-2"), std::optional<raft::Index>(3));
  });
  c.at(3s, [&] {
    const int l = c.leader();
    ASSERT_TRUE(l == 1 || l == 2) << l;
    ASSERT_TRUE(c.propose(l, "kept").has_value());
    EXPECT_EQ(c.raft(0).log().size(), 3u);
    EXPECT_EQ(c.raft(0).commit(), 1u);
  });
  c.at(4s, [&] { c.heal(); });
  c.run_until(6s);
  std::vector<std::string> truncations;
  for (const raft::RaftEvent& e : c.history.events) {
    if (e.kind == raft::EventKind::kTruncate) truncations.push_back(e.member + "@" + std::to_string(e.index));
  }
  EXPECT_THAT(truncations, ElementsAre("etcd-0@2"));
  EXPECT_EQ(c.raft(0).log().at(1).term, 2u) << "index 2 now holds the term-2 leader's empty entry";
  EXPECT_FALSE(c.ever_applied("lost-1"));
  EXPECT_FALSE(c.ever_applied("lost-2"));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.members[i]->state, (std::vector<std::string>{"", "", "kept"})) << i;
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

// The Raft paper's Figure 8, with five members and one entry per
// AppendEntries, so that replication of a leader's batch can be cut halfway:
//  (a) etcd-0 (S1) leads term 1 and gets "x" at index 2 onto etcd-1 only; crashes.
//  (b) etcd-4 (S5) wins term 2 with etcd-2, etcd-3; its empty entry at index 2
//      stays on etcd-4 alone; it crashes.
//  (c) etcd-0 restarts and wins term 3 with everyone's votes; it appends its
//      empty entry (index 3) and brings index 2 = "x" (term 1) to etcd-2 and
//      etcd-3: "x" is on a majority. 4.5 ms after its election it is cut off,
//      before index 3 reaches them.
//  (d) etcd-4 restarts and wins term 4 with etcd-2 and etcd-3, whose last
//      term (1) is older than its (2), and overwrites index 2.
// Committing "x" in (c) by counting replicas would lose a committed entry.
std::unique_ptr<Cluster> figure8(bool count_old_replicas) {
  raft::Mutations m;
  m.disable_current_term_commit_rule = count_old_replicas;
  Options o = Options().with_members(5).with_max_entries_per_append(1).with_mutations(m);
  auto cp = std::make_unique<Cluster>(o);
  Cluster& c = *cp;
  c.on_leader = [&c](int who, raft::Term term) {
    if (who == 4 && term == 2) c.isolate({4});  // (b): its empty entry goes nowhere
    if (who == 0 && term == 3) c.at(c.sim.now() + 4500us, [&c] { c.isolate({0}); });  // (c)
  };
  c.at(100ms, [&] { c.split({{0, 1}, {2, 3, 4}}); });
  c.at(110ms, [&] { c.propose(0, "x"); });
  c.at(120ms, [&] {
    c.crash(0);
    c.heal();
  });
  c.at(130ms, [&] { c.raft(4).campaign(true); });
  c.at(150ms, [&] {
    c.crash(4);
    c.heal();
  });
  c.at(160ms, [&] { c.restart(0); });
  c.at(170ms, [&] { c.raft(0).campaign(true); });  // term 2: etcd-2, etcd-3 already voted
  c.at(190ms, [&] { c.raft(0).campaign(true); });  // term 3
  c.at(220ms, [&] { c.restart(4); });
  c.at(230ms, [&] { c.raft(4).campaign(true); });  // term 3: everybody voted for etcd-0
  c.at(250ms, [&] { c.raft(4).campaign(true); });  // term 4
  return cp;
}

TEST(RaftCommitRule, AnEntryOfAnOldTermIsNotCommittedByCountingReplicasFigure8) {
  auto cp = figure8(/*count_old_replicas=*/false);
  Cluster& c = *cp;
  c.run_until(200ms);
  EXPECT_EQ(c.leaders_of(2), std::vector<std::string>{"etcd-4"});
  EXPECT_EQ(c.leaders_of(3), std::vector<std::string>{"etcd-0"});
  // (c): "x" (index 2, term 1) is on etcd-0, etcd-1, etcd-2, etcd-3 — a
  // majority — but index 3 (term 3) only on etcd-0 and etcd-1.
  for (int i : {0, 1, 2, 3}) EXPECT_EQ(c.raft(i).log().at(1), (raft::Entry{1, "x"})) << i;
  EXPECT_EQ(c.raft(2).last_index(), 2u);
  EXPECT_EQ(c.raft(3).last_index(), 2u);
  EXPECT_EQ(c.raft(0).commit(), 1u) << "§5.4.2: not committed by counting replicas";
  c.run_until(300ms);
  EXPECT_EQ(c.leaders_of(4), std::vector<std::string>{"etcd-4"});  // (d)
  c.at(1s, [&] { c.heal(); });
  c.run_until(4s);
  EXPECT_FALSE(c.ever_applied("x"));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.raft(i).log().at(1).term, 2u) << i;
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftCommitRule, CountingReplicasOfAnOldTermLosesACommittedEntryAndTheCheckerSaysSo) {
  auto cp = figure8(/*count_old_replicas=*/true);
  Cluster& c = *cp;
  c.run_until(200ms);
  EXPECT_EQ(c.raft(0).commit(), 2u) << "the mutated leader commits \"x\" at index 2 of term 1";
  EXPECT_THAT(c.members[0]->state, ElementsAre("", "x"));
  c.run_until(300ms);
  const raft::SafetyVerdict v = c.check();
  ASSERT_FALSE(v.holds);
  EXPECT_EQ(v.rule, "state machine safety");
  EXPECT_THAT(v.summary, HasSubstr("index 2"));
  EXPECT_THAT(v.summary, HasSubstr("\"x\""));
  EXPECT_THAT(story(v), HasSubstr("committed entry was lost or changed"));
}

TEST(RaftPersistence, ARestartedMemberKeepsItsVoteAndTerm) {
  // With etcd-0 down, etcd-1 votes for etcd-2 in term 2, crashes and
  // restarts. When etcd-0 comes back and asks for a vote in the same term 2,
  // etcd-1 remembers it already voted: were its vote volatile, term 2 would
  // have two leaders.
  Cluster c(Options().with_members(3).logging_votes());
  c.at(100ms, [&] { c.crash(0); });
  c.at(200ms, [&] { c.raft(2).campaign(true); });
  c.at(210ms, [&] { c.crash(1); });
  c.at(220ms, [&] { c.restart(1); });
  c.at(230ms, [&] {
    EXPECT_EQ(c.leaders_of(2), std::vector<std::string>{"etcd-2"});
    EXPECT_EQ(c.raft(1).term(), 2u);
    EXPECT_EQ(c.raft(1).vote(), c.id(2));
    EXPECT_EQ(c.raft(1).role(), Role::kFollower);
    EXPECT_EQ(c.raft(1).leader(), sim::kNoNode);
    c.restart(0);
    EXPECT_EQ(c.raft(0).term(), 1u);
    c.isolate({2});
  });
  c.at(240ms, [&] { c.raft(0).campaign(true); });  // term 2
  c.run_until(250ms);
  EXPECT_TRUE(c.log_has("242ms etcd-0 got MsgVoteResp reject from etcd-1")) << testing::PrintToString(c.log);
  EXPECT_EQ(c.leaders_of(2), std::vector<std::string>{"etcd-2"});
  c.at(300ms, [&] { c.heal(); });
  c.run_until(5s);
  EXPECT_NE(c.leader(), -1);
  EXPECT_EQ(c.leaders_of(2), std::vector<std::string>{"etcd-2"});
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftPersistence, ARestartedMemberRebuildsItsStateMachineFromTheLog) {
  Cluster c(3);
  c.at(100ms, [&] {
    c.propose(0, "a");
    c.propose(0, "b");
  });
  c.at(200ms, [&] { c.crash(2); });
  c.at(300ms, [&] { c.propose(0, "c"); });
  c.at(400ms, [&] {
    c.restart(2);
    // Re-applied from index 1 up to its persisted commit index at once.
    EXPECT_THAT(c.members[2]->state, ElementsAre("", "a", "b"));
    EXPECT_EQ(c.raft(2).applied(), 3u);
  });
  c.run_until(600ms);
  EXPECT_THAT(c.members[2]->state, ElementsAre("", "a", "b", "c"));
  EXPECT_EQ(c.history.stats.restarts, 1u);
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftPreVote, PreVoteStopsARejoiningMemberFromRaisingTheTerm) {
  Cluster c(3);
  c.at(500ms, [&] { c.isolate({2}); });
  c.at(5500ms, [&] {
    EXPECT_EQ(c.raft(2).term(), 1u) << "pre-candidates do not raise their term";
    EXPECT_GT(c.history.stats.pre_campaigns, 0u);
    EXPECT_EQ(c.history.stats.elections, 0u);
    c.heal();
  });
  c.run_until(8s);
  EXPECT_EQ(c.leader(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.raft(i).term(), 1u) << i;
  EXPECT_EQ(c.raft(2).leader(), c.id(0));
  EXPECT_EQ(c.history.stats.step_downs, 0u);
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftPreVote, WithoutPreVoteARejoiningMemberRaisesTheTermAndDeposesTheLeader) {
  // The contrast: the same story with PreVote off.
  Cluster c(Options().with_members(3).without_pre_vote());
  c.at(500ms, [&] { c.isolate({2}); });
  c.at(5500ms, [&] {
    EXPECT_GE(c.raft(2).term(), 3u) << "each election timeout bumped its term";
    c.heal();
  });
  c.run_until(8s);
  EXPECT_THAT(c.step_downs(0), Contains(HasSubstr("higher term")));
  EXPECT_GE(c.raft(0).term(), 3u);
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftCheckQuorum, CheckQuorumStepsACutOffLeaderDown) {
  // Cut off at 1 s, the leader still counts the followers heard during the
  // current check window; the next check, at most two election timeouts
  // later, finds no quorum.
  Cluster c(3);
  c.at(1s, [&] { c.isolate({0}); });
  c.at(1050ms, [&] { EXPECT_EQ(c.propose(0, "never"), std::optional<raft::Index>(2)); });
  c.run_until(3100ms);
  EXPECT_EQ(c.raft(0).role(), Role::kFollower);
  const auto downs = c.step_downs(0);
  ASSERT_EQ(downs.size(), 1u);
  EXPECT_THAT(downs[0], HasSubstr(":check quorum"));
  EXPECT_EQ(c.raft(0).commit(), 1u) << "a cut-off leader cannot commit";
  EXPECT_FALSE(c.ever_applied("never"));
  c.run_until(5s);
  const int l = c.leader();
  EXPECT_TRUE(l == 1 || l == 2) << l;
  EXPECT_TRUE(c.check().holds) << story(c.check());
}

TEST(RaftReadIndex, AReadOnTheLeaderOrAFollowerIsConfirmedByAQuorum) {
  Cluster c(3);
  std::vector<std::string> answers;
  auto record = [&](const char* who) {
    return [&c, &answers, who](const raft::ReadResult& r) {
      answers.push_back(c.now() + " " + who + (r.ok ? " ok@" + std::to_string(r.index) : " failed: " + r.error));
    };
  };
  c.at(500ms, [&] {
    c.propose(0, "a");
    c.raft(0).read_index(record("leader"));
    c.raft(1).read_index(record("follower"));
  });
  c.run_until(1s);
  // "a" (index 2) commits at 502 ms, so a read asked at 500 ms may return
  // index 1. The leader's heartbeat round trip ends at 502 ms. The
  // follower's request reaches the leader at 501 ms (read index 1), its
  // round trip ends at 503 ms, and the answer is back at 504 ms.
  EXPECT_THAT(answers, ElementsAre("502ms leader ok@1", "504ms follower ok@1"));
}

TEST(RaftReadIndex, ReadIndexOnACutOffLeaderDoesNotAnswer) {
  Cluster c(3);
  std::vector<std::string> answers;
  c.at(1s, [&] { c.isolate({0}); });
  c.at(1050ms, [&] {
    c.raft(0).read_index(
        [&](const raft::ReadResult& r) { answers.push_back(c.now() + (r.ok ? " ok" : " failed: " + r.error)); });
  });
  c.run_until(3100ms);
  // No answer while it believed it led; when CheckQuorum deposed it, the
  // pending read failed instead of answering.
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_THAT(answers[0], HasSubstr("failed: leader changed"));
  EXPECT_EQ(c.step_downs(0).size(), 1u);
  EXPECT_EQ(c.history.stats.reads_answered, 0u);
}

}  // namespace
