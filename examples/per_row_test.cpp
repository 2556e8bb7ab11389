// Our storage fences per row: each row remembers the highest token that
// wrote it, and a write to a row needs a token above that row's last one
// (`UPDATE t SET ... WHERE id = $1 AND last_token < $2`). A global fence
// (fencesim's built-in "fenced") would also reject a write to one row because
// a newer token wrote another row. These tests keep both halves honest: a
// stale holder of a row is rejected, and the rows do not interfere.
//
// The clients of both rows take their tokens from one Redis lock here (one
// counter): fencesim models one lock key per scenario. Which row a client
// writes is the check's own mapping (row_of below).
#include <gtest/gtest.h>
#include <fencesim/builder.hpp>
#include <fencesim/policy.hpp>
#include <fencesim/run.hpp>

#include <map>
#include <memory>
#include <string>

using namespace std::chrono_literals;
using fencesim::Property;
using fencesim::Status;

class PerRowToken final : public fencesim::ResourceCheck {
 public:
  explicit PerRowToken(std::map<std::string, std::string> rows) : rows_(std::move(rows)) {}
  std::string name() const override { return "per-row token"; }
  fencesim::ResourceDecision decide(const fencesim::PolicyContext&, const fencesim::ResourceRequest& r,
                                    fencesim::ResourceMarks& s) const override {
    if (r.op == fencesim::ResourceOp::kRead) return {true, {}};
    const std::string row = rows_.at(r.client);
    std::int64_t& last = s.marks[row];  // the row's last_token (0 before any write)
    if (!r.token) return {false, "write to " + row + " without a token"};
    if (*r.token <= last) {
      return {false, "token " + std::to_string(*r.token) + " <= " + row + ".last_token " + std::to_string(last)};
    }
    last = *r.token;
    return {true, {}};
  }

 private:
  std::map<std::string, std::string> rows_;  // client -> row
};

// A writes row-1 and is paused past the TTL before its write; C takes the
// lock meanwhile and writes row-2; B (row-1) starts late. Each client writes
// once (the `writer` workload: read, work, write).
fencesim::ScenarioBuilder design(std::shared_ptr<const fencesim::ResourceCheck> check, bool with_b) {
  using namespace fencesim::workloads;
  fencesim::ScenarioBuilder b("per-row");
  b.duration(60s).redis(10s).client("A", writer(500ms)).pause("A", 200ms, 12s);
  b.client("C", writer(500ms), [](fencesim::ClientSpec& c) { c.start = 1s; });
  if (with_b) b.client("B", writer(500ms), [](fencesim::ClientSpec& c) { c.start = 2s; });
  if (check) {
    b.resource_check(std::move(check));
  } else {
    b.fenced(fencesim::FenceCheck::kStrict);
  }
  return b;
}

std::shared_ptr<const fencesim::ResourceCheck> per_row() {
  return std::make_shared<PerRowToken>(
      std::map<std::string, std::string>{{"A", "row-1"}, {"B", "row-1"}, {"C", "row-2"}});
}

/// The first write of `client` in the run's history.
const fencesim::ResourceOpRecord& write_of(const fencesim::RunResult& r, const std::string& client) {
  for (const auto& op : r.history.resource_ops) {
    if (op.write && op.client == client) return op;
  }
  throw std::runtime_error(client + " never wrote");
}

TEST(PerRowFencing, TwoRowsDoNotInterfere) {
  // A's token 1 is older than C's token 2, but C wrote another row: accepted.
  const fencesim::RunResult r = fencesim::run_scenario(design(per_row(), false).build());
  EXPECT_TRUE(write_of(r, "C").accepted);
  EXPECT_EQ(write_of(r, "C").token, 2);
  EXPECT_TRUE(write_of(r, "A").accepted) << write_of(r, "A").reason;
  EXPECT_EQ(write_of(r, "A").token, 1);
  // The same design with a global fence rejects A: the rows interfere.
  const fencesim::RunResult global = fencesim::run_scenario(design(nullptr, false).build());
  EXPECT_FALSE(write_of(global, "A").accepted);
  EXPECT_EQ(write_of(global, "A").reason, "token 1 < last_seen 2");
}

TEST(PerRowFencing, AStaleHolderOfARowIsRejected) {
  // B took row-1's lock after A's lease expired and wrote row-1 with token
  // 3: A's late write with token 1 is stale for row-1.
  const fencesim::RunResult r = fencesim::run_scenario(design(per_row(), true).build());
  EXPECT_TRUE(write_of(r, "B").accepted);
  EXPECT_TRUE(write_of(r, "C").accepted);
  const fencesim::ResourceOpRecord& a = write_of(r, "A");
  EXPECT_FALSE(a.accepted);
  EXPECT_EQ(a.reason, "token 1 <= row-1.last_token " + std::to_string(*write_of(r, "B").token));
  EXPECT_EQ(fencesim::verdict(r, Property::kMutualExclusion).status, Status::kViolated);  // a lease is not a lock
  EXPECT_EQ(fencesim::verdict(r, Property::kNoStaleWrite).status, Status::kHolds)
      << fencesim::verdict(r, Property::kNoStaleWrite).summary;
}

TEST(PerRowFencing, TheReportNamesTheCheck) {
  const fencesim::Scenario s = design(per_row(), true).build();
  const fencesim::RunResult r = fencesim::run_scenario(s);
  const std::string md = fencesim::render_report_markdown(s, r, {"", false});
  EXPECT_NE(md.find("- resource: per-row token"), std::string::npos) << md;
  const std::string json = fencesim::render_report_json(s, r, {"", false});
  EXPECT_NE(json.find("\"kind\": \"per-row token\""), std::string::npos);
}
