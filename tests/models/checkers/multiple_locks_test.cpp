// The checkers with more than one lock (lock.keys): each property is judged
// per lock (docs/FORMAT.md "More than one lock"). Each case has a twin on
// one lock that breaks, so the per-lock rule is what makes it hold.
#include <gtest/gtest.h>

#include "models/checkers/checkers.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;

CheckContext locks_ctx(sim::Duration end = 60s) {
  CheckContext c;
  c.run_end = end;
  return c;
}

/// A holds "va" from 0 to 5 s, B "vb" from 2 s to 6 s, on locks `la` and `lb`.
History overlapping(const std::string& la, const std::string& lb) {
  History h;
  auto a = h.begin_belief(0s, "A", "va", 1);
  h.beliefs[a].lock = la;
  auto b = h.begin_belief(2s, "B", "vb", 1);
  h.beliefs[b].lock = lb;
  h.end_belief(a, 5s, "release");
  h.end_belief(b, 6s, "release");
  return h;
}

TEST(MultipleLocks, HoldersOfTwoLocksAtOnceAreNoViolation) {
  EXPECT_EQ(check_mutual_exclusion(overlapping("row-1", "row-2"), locks_ctx()).status, Status::kHolds);
  const Verdict same = check_mutual_exclusion(overlapping("row-1", "row-1"), locks_ctx());
  EXPECT_EQ(same.status, Status::kViolated);
  EXPECT_EQ(same.summary.rfind("A and B both believed they held lock row-1 from 2.000000s", 0), 0u) << same.summary;
  // One lock (empty names): the story says "the lock", as before.
  EXPECT_NE(check_mutual_exclusion(overlapping("", ""), locks_ctx()).summary.find("held the lock"), std::string::npos);
}

TEST(MultipleLocks, TokensIncreasePerLock) {
  History h;
  h.grant(1s, "A", "va", 1, "redis-0");
  h.grant(2s, "C", "vc", 1, "redis-0");  // row-2's own counter starts at 1 too
  h.grant(3s, "B", "vb", 2, "redis-0");
  h.grants[0].lock = h.grants[2].lock = "row-1";
  h.grants[1].lock = "row-2";
  const Verdict v = check_token_monotonic(h);
  EXPECT_EQ(v.status, Status::kHolds) << v.summary;
  EXPECT_EQ(v.summary, "3 grants, tokens strictly increasing for each of 2 locks");
  // The same tokens on one lock: token 1 is handed out twice.
  for (GrantRecord& g : h.grants) g.lock = "row-1";
  EXPECT_EQ(check_token_monotonic(h).status, Status::kViolated);
}

ResourceOpRecord row_write(sim::Time at, std::string client, std::string row, std::int64_t read, std::int64_t value) {
  ResourceOpRecord op;
  op.at = at;
  op.client = std::move(client);
  op.write = true;
  op.kind = ResourceOpKind::kWrite;
  op.read_value = read;
  op.value = value;
  op.accepted = true;
  op.lock = std::move(row);
  op.copy = "resource";
  return op;
}

TEST(MultipleLocks, EachRowIsASerialHistoryOfItsOwn) {
  History h;
  h.resource_ops.push_back(row_write(1s, "A", "row-1", 0, 1));
  h.resource_ops.push_back(row_write(2s, "C", "row-2", 0, 1));  // row-2 starts from the initial value
  h.resource_ops.push_back(row_write(3s, "B", "row-1", 1, 2));
  EXPECT_EQ(check_no_lost_update(h, 0).status, Status::kHolds);
  // On one row, C's write from 0 after A's 1 loses A's update.
  h.resource_ops[1].lock = "row-1";
  const Verdict v = check_no_lost_update(h, 0);
  EXPECT_EQ(v.status, Status::kViolated);
  EXPECT_NE(v.summary.find("the previous accepted write to row row-1 had left 1"), std::string::npos) << v.summary;
}

TEST(MultipleLocks, TheHolderAuditComparesTokensOfTheSameLockOnly) {
  // A holds row-1 with token 1; the copy accepts row-2's token 2.
  History h;
  h.client_locks = {{"A", "row-1"}, {"C", "row-2"}};
  h.begin_belief(0s, "A", "va", 1);
  EXPECT_EQ(h.beliefs[0].lock, "row-1");  // labelled as it is recorded
  h.audit_holders(1s, "resource", 2, "row-2");
  EXPECT_TRUE(h.audit.empty()) << "a row-2 token audited a row-1 holder";
  h.audit_holders(2s, "resource", 2, "row-1");
  ASSERT_EQ(h.audit.size(), 1u);
  EXPECT_EQ(h.audit[0].lock, "row-1");
  // One lock: every holder against the copy's last_seen, as before.
  History one;
  one.begin_belief(0s, "A", "va", 1);
  one.audit_holders(1s, "resource", 2);
  ASSERT_EQ(one.audit.size(), 1u);
  EXPECT_EQ(one.audit[0].lock, "");
}

/// two-locks-one-fence (scenarios/): A holds row-1 (token 1), C writes row-2 with tokens 1 and 2.
fencesim::ScenarioBuilder two_rows() {
  using namespace fencesim::testing;
  return ScenarioBuilder("two-rows")
      .duration(30s)
      .settle(10s)
      .redis(10s)
      .locks("row-1", {"row-2"})
      .fenced()
      .client("A", writer(3s))
      .client("C", writer(500ms, 2, 500ms), [](ClientSpec& c) {
        c.lock = "row-2";
        c.start = 100ms;
      });
}

TEST(MultipleLocks, RunAuditsHoldersPerLock) {
  const RunResult r = two_rows().run();
  // C's token 2 of row-2 says nothing about A's token 1 of row-1.
  EXPECT_EQ(r.metrics.audit_findings, 0);
  const Verdict& me = fencesim::testing::verdict_of(r, Property::kMutualExclusion);
  EXPECT_EQ(me.summary, "no two of 3 beliefs in the same lock overlapped (over locks row-1, row-2)");
  for (const GrantRecord& g : r.history.grants) EXPECT_FALSE(g.lock.empty()) << g.client;
}

TEST(MultipleLocks, TwoHoldersOfOneLockAreStillAudited) {
  // A pauses past its lease on row-1; B takes row-1 (token 2) and writes: A is a stale holder of row-1.
  // (C writes row-2 once, with token 1, so the one fence lets B's token 2 through.)
  using namespace fencesim::testing;
  const RunResult r = ScenarioBuilder("two-rows-stale")
                          .duration(40s)
                          .redis(10s)
                          .locks("row-1", {"row-2"})
                          .fenced()
                          .client("A", writer(500ms))
                          .client("B", writer(500ms), [](ClientSpec& c) { c.start = 2s; })
                          .client("C", writer(500ms), [](ClientSpec& c) { c.lock = "row-2"; })
                          .pause("A", 200ms, 12s)
                          .run();
  ASSERT_GE(r.metrics.audit_findings, 1);
  ASSERT_TRUE(r.metrics.first_audit);
  for (const AuditFinding& a : r.history.audit) {
    EXPECT_EQ(a.lock, "row-1");
    EXPECT_EQ(a.holder, "A");
  }
}

TEST(MultipleLocks, TheTokenSummariesNameTheLock) {
  History h;
  h.grant(1s, "A", "va", 2, "redis-0");
  h.grant(2s, "B", "vb", 2, "redis-0");
  h.grants[0].lock = h.grants[1].lock = "row-1";
  const Verdict v = check_token_monotonic(h);
  EXPECT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.summary.rfind("redis-0 granted token 2 of lock row-1 to B at 2.000000s", 0), 0u) << v.summary;
  History one;
  one.grant(1s, "A", "va", 1, "redis-0");
  one.grants[0].lock = "row-2";
  EXPECT_EQ(check_token_monotonic(one).summary, "1 grants, tokens strictly increasing in lock row-2");
}

TEST(MultipleLocks, CounterResetSaysWhoseCounterItWas) {
  using namespace fencesim::testing;
  const RunResult r = two_rows().counter_reset("redis", 5s, 0).run();
  bool seen = false;
  for (const NoteRecord& n : r.history.notes) {
    if (n.kind != "counter_reset") continue;
    seen = true;
    EXPECT_EQ(n.text,
              "reset row-1:token to 0: the token counter of lock row-1 (lock.key); the counters of row-2 are "
              "untouched");
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace fencesim
