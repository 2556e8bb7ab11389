// Our storage fences per row: each row remembers the highest token that
// wrote it, and a write to a row needs a token above that row's last one
// (`UPDATE t SET ... WHERE id = $1 AND last_token < $2`). Each row has its
// own lock: "row-1" and "row-2" are two Redis locks (lock.key and lock.keys),
// each with its own token counter ("row-1:token", "row-2:token"), so both
// counters start at 1. The request a check sees names the client's lock,
// which is also the row it writes (ResourceRequest::lock).
//
// These tests keep both halves honest:
//   * the two locks do not interfere: holders of row-1 and row-2 hold their
//     locks at once (mutual_exclusion is judged per lock and holds), and the
//     per-row check accepts both writes; the built-in fenced check, which
//     keeps ONE last_written / last_seen for the whole resource (the seed
//     article's storage), rejects the second one — equal tokens from two
//     independent counters — though its lease is live: the rows interfere;
//   * a stale holder of a row is rejected: A is paused past its TTL, B takes
//     row-1 and writes it, and A's late write with the older token is refused
//     for row-1 while C's row-2 is untouched.
#include <gtest/gtest.h>
#include <fencesim/builder.hpp>
#include <fencesim/policy.hpp>
#include <fencesim/run.hpp>

#include <memory>
#include <stdexcept>
#include <string>

using namespace std::chrono_literals;
using fencesim::Property;
using fencesim::Status;

class PerRowToken final : public fencesim::ResourceCheck {
 public:
  std::string name() const override { return "per-row token"; }
  fencesim::ResourceDecision decide(const fencesim::PolicyContext&, const fencesim::ResourceRequest& r,
                                    fencesim::ResourceMarks& s) const override {
    if (r.op == fencesim::ResourceOp::kRead) return {true, {}};
    const std::string& row = r.lock;    // the client's lock is the row it writes
    std::int64_t& last = s.marks[row];  // the row's last_token (0 before any write)
    if (!r.token) return {false, "write to " + row + " without a token"};
    if (*r.token <= last) {
      return {false, "token " + std::to_string(*r.token) + " <= " + row + ".last_token " + std::to_string(last)};
    }
    last = *r.token;
    return {true, {}};
  }
};

/// Two locks, two rows: A takes row-1 (lock.key), C row-2. `check` nullptr:
/// the built-in fenced check (strict), one set of marks for the whole resource.
fencesim::ScenarioBuilder base(std::shared_ptr<const fencesim::ResourceCheck> check) {
  fencesim::ScenarioBuilder b("per-row");
  b.duration(60s).redis(10s).locks("row-1", {"row-2"});
  if (check) {
    b.resource_check(std::move(check));
  } else {
    b.fenced(fencesim::FenceCheck::kStrict);
  }
  return b;
}

void take(fencesim::ClientSpec& c, const char* lock, fencesim::Duration start) {
  c.lock = lock;
  c.start = start;
}

/// (a) A holds row-1 for 3 s of work; C takes row-2 at 100 ms and writes
/// first. Nobody is paused: both leases are live at every write.
fencesim::Scenario concurrent(std::shared_ptr<const fencesim::ResourceCheck> check) {
  using namespace fencesim::workloads;
  return base(std::move(check))
      .client("A", writer(3s))
      .client("C", writer(500ms), [](fencesim::ClientSpec& c) { take(c, "row-2", 100ms); })
      .build();
}

/// (b) A (row-1) is paused 12 s from 200 ms, past its 10 s TTL, between its
/// read and its write; C takes row-2 at 1 s; B takes row-1 once A's lease
/// has expired. Each client writes once (the `writer` workload).
fencesim::Scenario stale_holder(std::shared_ptr<const fencesim::ResourceCheck> check) {
  using namespace fencesim::workloads;
  return base(std::move(check))
      .client("A", writer(500ms))
      .client("C", writer(500ms), [](fencesim::ClientSpec& c) { take(c, "row-2", 1s); })
      .client("B", writer(500ms), [](fencesim::ClientSpec& c) { take(c, "row-1", 2s); })
      .pause("A", 200ms, 12s)
      .build();
}

std::shared_ptr<const fencesim::ResourceCheck> per_row() { return std::make_shared<PerRowToken>(); }

/// The first write of `client` in the run's history.
const fencesim::ResourceOpRecord& write_of(const fencesim::RunResult& r, const std::string& client) {
  for (const auto& op : r.history.resource_ops) {
    if (op.write && op.client == client) return op;
  }
  throw std::runtime_error(client + " never wrote");
}

const fencesim::GrantRecord& grant_of(const fencesim::RunResult& r, const std::string& client) {
  for (const auto& g : r.history.grants) {
    if (g.client == client) return g;
  }
  throw std::runtime_error(client + " was never granted a lock");
}

TEST(PerRowFencing, TwoLocksOnTwoRowsDoNotInterfere) {
  const fencesim::RunResult r = fencesim::run_scenario(concurrent(per_row()));
  // Each lock has its own counter: both grants carry token 1, and C did not
  // wait for A's lease (it was granted row-2 while A held row-1).
  EXPECT_EQ(grant_of(r, "A").lock, "row-1");
  EXPECT_EQ(grant_of(r, "C").lock, "row-2");
  EXPECT_EQ(grant_of(r, "A").token, 1);
  EXPECT_EQ(grant_of(r, "C").token, 1);
  EXPECT_LT(grant_of(r, "C").at, write_of(r, "A").at);
  // Both writes accepted, each on its own row.
  EXPECT_TRUE(write_of(r, "C").accepted) << write_of(r, "C").reason;
  EXPECT_TRUE(write_of(r, "A").accepted) << write_of(r, "A").reason;
  EXPECT_EQ(write_of(r, "A").lock, "row-1");
  EXPECT_EQ(write_of(r, "C").lock, "row-2");
  EXPECT_LT(write_of(r, "C").at, write_of(r, "A").at);
  // Two holders of two locks at once are not a violation.
  EXPECT_EQ(fencesim::verdict(r, Property::kMutualExclusion).status, Status::kHolds)
      << fencesim::verdict(r, Property::kMutualExclusion).summary;
  EXPECT_EQ(fencesim::verdict(r, Property::kNoStaleWrite).status, Status::kHolds);
  EXPECT_EQ(fencesim::verdict(r, Property::kTokenMonotonic).status, Status::kHolds);
}

TEST(PerRowFencing, TheBuiltInFenceOfOneLastTokenMakesTheRowsInterfere) {
  // The same run with the built-in fenced check: C's token 1 (row-2's
  // counter) became the resource's last_written, and A's token 1 (row-1's
  // counter) is refused although A's lease on row-1 is live.
  const fencesim::RunResult r = fencesim::run_scenario(concurrent(nullptr));
  EXPECT_TRUE(write_of(r, "C").accepted);
  const fencesim::ResourceOpRecord& a = write_of(r, "A");
  EXPECT_FALSE(a.accepted);
  EXPECT_EQ(a.reason, "token 1 <= last_written 1");
  EXPECT_EQ(fencesim::verdict(r, Property::kMutualExclusion).status, Status::kHolds);
  // A's lease had not ended at the service when its write was refused.
  const auto end = r.history.lease_ends.find(a.lease_value);
  EXPECT_TRUE(end == r.history.lease_ends.end() || end->second.at > a.at);
}

TEST(PerRowFencing, AStaleHolderOfARowIsRejected) {
  const fencesim::RunResult r = fencesim::run_scenario(stale_holder(per_row()));
  // B took row-1 after A's lease expired: token 2 of row-1's counter; C's
  // row-2 counter is independent (token 1).
  EXPECT_EQ(grant_of(r, "B").token, 2);
  EXPECT_EQ(grant_of(r, "C").token, 1);
  EXPECT_TRUE(write_of(r, "B").accepted);
  EXPECT_TRUE(write_of(r, "C").accepted);
  const fencesim::ResourceOpRecord& a = write_of(r, "A");
  EXPECT_FALSE(a.accepted);
  EXPECT_EQ(a.reason, "token 1 <= row-1.last_token 2");
  // A and B both believed they held row-1 (a lease is not a lock); C holding
  // row-2 meanwhile is no part of it.
  const fencesim::Verdict& me = fencesim::verdict(r, Property::kMutualExclusion);
  EXPECT_EQ(me.status, Status::kViolated);
  EXPECT_NE(me.summary.find("A and B both believed they held lock row-1"), std::string::npos) << me.summary;
  EXPECT_EQ(fencesim::verdict(r, Property::kNoStaleWrite).status, Status::kHolds)
      << fencesim::verdict(r, Property::kNoStaleWrite).summary;
}

TEST(PerRowFencing, TheReportNamesTheCheckAndTheLocks) {
  const fencesim::Scenario s = stale_holder(per_row());
  const fencesim::RunResult r = fencesim::run_scenario(s);
  const std::string md = fencesim::render_report_markdown(s, r, {"", false});
  EXPECT_NE(md.find("- resource: per-row token"), std::string::npos) << md;
  EXPECT_NE(md.find("- locks: row-1 (A, B); row-2 (C)"), std::string::npos) << md;
  const std::string json = fencesim::render_report_json(s, r, {"", false});
  EXPECT_NE(json.find("\"kind\": \"per-row token\""), std::string::npos);
  EXPECT_NE(json.find("\"counter_key\": \"row-2:token\""), std::string::npos);
}
