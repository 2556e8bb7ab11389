// The raft_safety checker on hand-made histories: each guarantee, broken
// once, is reported with the first counterexample in words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "models/etcd/raft/safety.hpp"

namespace {

using namespace std::chrono_literals;
namespace raft = fencesim::raft;
using raft::EventKind;
using testing::ElementsAre;
using testing::HasSubstr;

/// Builds a history line by line: h.leader(0s, "etcd-0", 1).apply(...)...
struct H {
  raft::RaftHistory h;
  H& ev(sim::Time at, EventKind k, std::string member, raft::Term term, raft::Index index, std::string cmd = {}) {
    raft::RaftEvent e;
    e.at = at;
    e.kind = k;
    e.member = std::move(member);
    e.term = term;
    e.index = index;
    e.command = std::move(cmd);
    h.add(std::move(e));
    return *this;
  }
  H& leader(sim::Time at, std::string m, raft::Term t) { return ev(at, EventKind::kBecameLeader, std::move(m), t, 0); }
  H& commit(sim::Time at, std::string m, raft::Term t, raft::Index i, std::string c = {}) {
    return ev(at, EventKind::kCommit, std::move(m), t, i, std::move(c));
  }
  H& apply(sim::Time at, std::string m, raft::Term t, raft::Index i, std::string c = {}) {
    return ev(at, EventKind::kApply, std::move(m), t, i, std::move(c));
  }
  H& restart(sim::Time at, std::string m) { return ev(at, EventKind::kRestart, std::move(m), 0, 0); }
  H& truncate(sim::Time at, std::string m, raft::Term t, raft::Index from, raft::Index commit) {
    ev(at, EventKind::kTruncate, std::move(m), t, from);
    h.events.back().commit = commit;
    h.events.back().detail = "1 entries";
    return *this;
  }
  H& read(sim::Time asked, sim::Time at, std::string m, raft::Index index) {
    ev(at, EventKind::kRead, std::move(m), 0, index);
    h.events.back().issued_at = asked;
    return *this;
  }
  raft::SafetyVerdict check() const { return raft::check_raft_safety(h); }
};

H healthy() {
  H h;
  h.leader(0s, "etcd-0", 1)
      .commit(0s, "etcd-0", 1, 1)
      .apply(0s, "etcd-0", 1, 1)
      .commit(0s, "etcd-1", 1, 1)
      .apply(0s, "etcd-1", 1, 1)
      .commit(1s, "etcd-0", 1, 2, "a")
      .apply(1s, "etcd-0", 1, 2, "a")
      .leader(3s, "etcd-1", 2)
      .commit(3s, "etcd-1", 1, 2, "a")
      .apply(3s, "etcd-1", 1, 2, "a");
  return h;
}

TEST(RaftSafetyChecker, AHealthyHistoryHolds) {
  const raft::SafetyVerdict v = healthy().check();
  EXPECT_TRUE(v.holds) << v.summary;
  EXPECT_EQ(v.checked, 10u);
}

TEST(RaftSafetyChecker, TwoLeadersOfOneTermBreakElectionSafety) {
  H h = healthy();
  h.leader(4s, "etcd-2", 2);
  const raft::SafetyVerdict v = h.check();
  ASSERT_FALSE(v.holds);
  EXPECT_EQ(v.rule, "election safety");
  EXPECT_EQ(v.summary, "two leaders of term 2: etcd-1 at 3s and etcd-2 at 4s");
  EXPECT_EQ(v.at, sim::Time{4s});
}

TEST(RaftSafetyChecker, TheSameLeaderRecordedTwiceIsNotTwoLeaders) {
  H h = healthy();
  h.leader(4s, "etcd-1", 2);
  EXPECT_TRUE(h.check().holds);
}

TEST(RaftSafetyChecker, ADifferentCommandAtACommittedIndexIsALostEntry) {
  H h = healthy();
  h.apply(5s, "etcd-2", 1, 1).apply(5s, "etcd-2", 2, 2, "b");
  const raft::SafetyVerdict v = h.check();
  ASSERT_FALSE(v.holds);
  EXPECT_EQ(v.rule, "state machine safety");
  EXPECT_EQ(v.summary,
            "at 5s etcd-2 applied index 2 as term 2 \"b\", but index 2 had been committed as term 1 \"a\" by etcd-0 at "
            "1s");
  EXPECT_THAT(v.story, ElementsAre("1. at 1s etcd-0 committed index 2 = term 1 \"a\"",
                                   "2. at 5s etcd-2 applied index 2 = term 2 \"b\" — the committed entry was lost or "
                                   "changed"));
}

TEST(RaftSafetyChecker, AppliesMustFollowIndexOrderWithinAnIncarnation) {
  H h = healthy();
  h.apply(5s, "etcd-2", 1, 2, "a");  // skipped index 1
  const raft::SafetyVerdict v = h.check();
  ASSERT_FALSE(v.holds);
  EXPECT_EQ(v.rule, "apply order");
  EXPECT_THAT(v.summary, HasSubstr("etcd-2 applied index 2 after index 0"));
}

TEST(RaftSafetyChecker, ARestartStartsApplyingFromIndexOneAgain) {
  H h = healthy();
  h.restart(5s, "etcd-0").apply(5s, "etcd-0", 1, 1).apply(5s, "etcd-0", 1, 2, "a");
  EXPECT_TRUE(h.check().holds) << h.check().summary;
}

TEST(RaftSafetyChecker, RemovingAnEntryAtOrBelowTheCommitIndexLosesIt) {
  H h = healthy();
  h.truncate(6s, "etcd-1", 3, 2, 2);
  const raft::SafetyVerdict v = h.check();
  ASSERT_FALSE(v.holds);
  EXPECT_EQ(v.rule, "committed entry lost");
  EXPECT_THAT(v.summary,
              HasSubstr("at 6s etcd-1 (term 3) removed its log from index 2 although its commit index was 2"));
}

TEST(RaftSafetyChecker, RemovingUncommittedEntriesIsFine) {
  H h = healthy();
  h.truncate(6s, "etcd-2", 3, 3, 2);
  EXPECT_TRUE(h.check().holds);
}

TEST(RaftSafetyChecker, AReadBelowAnIndexCommittedBeforeItWasAskedIsStale) {
  H h = healthy();
  h.read(2s, 2100ms, "etcd-0", 2);  // fine: index 2 committed at 1 s
  EXPECT_TRUE(h.check().holds);
  h.read(2s, 2200ms, "etcd-2", 1);
  const raft::SafetyVerdict v = h.check();
  ASSERT_FALSE(v.holds);
  EXPECT_EQ(v.rule, "linearizable read");
  EXPECT_EQ(v.summary, "at 2.2s etcd-2 answered a read asked at 2s at index 1, but index 2 was committed at 1s");
}

TEST(RaftSafetyChecker, AReadMayMissWhatCommitsAfterItWasAsked) {
  H h = healthy();
  h.read(500ms, 1100ms, "etcd-1", 1);  // index 2 committed at 1 s, after the read was asked
  EXPECT_TRUE(h.check().holds);
}

// raft::Command built from a decoded form renders its text only when read.

struct Decoded {
  int n = 0;
};
int renders = 0;
std::string render_decoded(const Decoded& d) {
  ++renders;
  return "cmd " + std::to_string(d.n);
}

TEST(RaftCommand, ADecodedCommandRendersItsTextOnceWhenFirstRead) {
  renders = 0;
  const raft::Command c =
      raft::Command::with_decoded<Decoded, &render_decoded>(std::make_shared<const Decoded>(Decoded{7}));
  const raft::Command copy = c;  // shares the text and the decoded form
  EXPECT_FALSE(c.empty());
  ASSERT_NE(copy.decoded<Decoded>(), nullptr);
  EXPECT_EQ(copy.decoded<Decoded>()->n, 7);
  EXPECT_EQ(c.decoded<int>(), nullptr);
  EXPECT_EQ(renders, 0) << "nothing has read the text yet";
  EXPECT_TRUE(c == copy);
  EXPECT_EQ(renders, 0) << "copies compare equal without their text";
  EXPECT_EQ(copy.str(), "cmd 7");
  EXPECT_EQ(c.str(), "cmd 7");
  EXPECT_EQ(renders, 1);
  EXPECT_TRUE(c == raft::Command("cmd 7")) << "equal to the same text built as text";
  EXPECT_FALSE(c == raft::Command("cmd 8"));
}

}  // namespace
