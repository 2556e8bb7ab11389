// The checkers with more than one lock (lock.keys): each property is judged
// per lock (docs/FORMAT.md "More than one lock"). Each case has a twin on
// one lock that breaks, so the per-lock rule is what makes it hold.
#include <gtest/gtest.h>

#include "models/checkers/checkers.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;

CheckContext ctx(sim::Duration end = 60s) {
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
  EXPECT_EQ(check_mutual_exclusion(overlapping("row-1", "row-2"), ctx()).status, Status::kHolds);
  const Verdict same = check_mutual_exclusion(overlapping("row-1", "row-1"), ctx());
  EXPECT_EQ(same.status, Status::kViolated);
  EXPECT_EQ(same.summary.rfind("A and B both believed they held lock row-1 from 2.000000s", 0), 0u) << same.summary;
  // One lock (empty names): the story says "the lock", as before.
  EXPECT_NE(check_mutual_exclusion(overlapping("", ""), ctx()).summary.find("held the lock"), std::string::npos);
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

}  // namespace
}  // namespace fencesim
