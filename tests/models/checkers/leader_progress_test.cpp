// progress for the `leader` workload (models/checkers/leader_progress.cpp):
// a healthy election with standbys holds; leadership lost for longer than
// `settle`, or a candidate stuck on a permanent error, breaks it.
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/checkers/checkers.hpp"
#include "models/validate.hpp"
#include "models/world.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;

const Verdict& progress_of(const RunResult& r) {
  for (const Verdict& v : r.verdicts) {
    if (v.property == Property::kProgress) return v;
  }
  throw std::out_of_range("no progress verdict");
}

std::string story_text(const Verdict& v) {
  std::string s;
  for (const std::string& line : v.story) s += line + "\n";
  return s;
}

/// client-go's defaults (LeaseDuration 15 s, RetryPeriod 2 s, RenewDeadline
/// 10 s) on the lock table, three candidates that want to lead for the
/// whole run (more writes than the run has time for).
Scenario election(Duration settle) {
  Scenario s;
  s.name = "leader-progress";
  s.duration = 60s;
  s.settle = settle;
  s.lock.set_service(ServiceKind::kTable);
  s.lock.ttl = s.lock.requested_ttl = 15s;
  s.lock.table().expiry = TableExpiry::kObserved;
  s.resource.kind = ResourceKind::kUnfenced;
  for (const char* n : {"A", "B", "C"}) {
    ClientSpec c;
    c.name = n;
    c.workload.kind = WorkloadKind::kLeader;
    c.workload.work = 1s;
    c.workload.iterations = 1000;
    c.renew_interval = 2s;
    c.lease_loss_after = 10s;
    if (n[0] != 'A') c.start = 1s;
    s.clients.push_back(c);
  }
  return s;
}

TEST(LeaderProgress, AHealthyElectionWithStandbysHolds) {
  // The per-iteration rule failed this run: B's and C's first writes wait
  // for the whole run while A leads, as client-go's standbys do.
  Scenario s = election(20s);
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  const Verdict& v = progress_of(r);
  EXPECT_EQ(v.status, Status::kHolds) << v.summary << "\n" << story_text(v);
  EXPECT_GE(v.checked, 3);
}

/// A is cut off from the API server (db) from 10 s to 22 s: it stops
/// leading at RenewDeadline (about 20 s) with its identity still in the
/// record, and takes it back at its first retry after the partition heals
/// (RetryPeriod with client-go's jitter: 2 s to 4.4 s after 22 s).
Scenario leader_cut_off(Duration settle) {
  Scenario s = election(settle);
  FaultSpec f;
  f.kind = FaultKind::kPartition;
  f.at = 10s;
  f.duration = 12s;
  f.groups = {{"A"}, {"db"}};
  f.origin = "faults[0]";
  s.faults.push_back(f);
  resolve_scenario(s);
  return s;
}

TEST(LeaderProgress, ALeaderlessGapLongerThanSettleBreaksItWithAStory) {
  const RunResult r = run_scenario(leader_cut_off(2s));
  const Verdict& v = progress_of(r);
  ASSERT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.at, sim::Time{22s});
  EXPECT_NE(v.summary.find("no candidate led from 22.000000s"), std::string::npos) << v.summary;
  const std::string story = story_text(v);
  EXPECT_NE(story.find("A became leader"), std::string::npos) << story;
  EXPECT_NE(story.find("A stopped leading"), std::string::npos) << story;
  EXPECT_NE(story.find("fault partition"), std::string::npos) << story;
  EXPECT_NE(story.find("still no candidate led"), std::string::npos) << story;
  EXPECT_NE(story.find("A became leader again"), std::string::npos) << story;
}

TEST(LeaderProgress, ASettleLongerThanTheRetryCoversTheGap) {
  const RunResult r = run_scenario(leader_cut_off(20s));
  const Verdict& v = progress_of(r);
  EXPECT_EQ(v.status, Status::kHolds) << v.summary << "\n" << story_text(v);
}

IterationRecord waiting(std::string client, sim::Time from) {
  IterationRecord it;
  it.client = std::move(client);
  it.start = from;
  it.acquire_sent = from;
  it.outcome = "started";
  return it;
}

TEST(LeaderProgress, LeadershipLostForGoodBreaksIt) {
  // A leads from 0 s; its lease ends at the service at 10 s and nobody ever
  // takes over, while B waits from 1 s to the end of the run.
  History h;
  h.grant(0s, "A", "va", std::nullopt, "db");
  h.begin_belief(0s, "A", "va", std::nullopt);
  h.lease_end(10s, "va", "expired", LeaseEndCause::kExpired);
  IterationRecord a = waiting("A", 0s);
  a.acquired = 0s;
  h.iterations.push_back(a);
  h.iterations.push_back(waiting("B", 1s));
  CheckContext c;
  c.run_end = 60s;
  const Verdict v = check_leader_progress(h, c, 20s, {"A", "B"});
  ASSERT_EQ(v.status, Status::kViolated);
  EXPECT_EQ(v.at, sim::Time{10s});
  const std::string story = story_text(v);
  EXPECT_NE(story.find("A's lease ended at the service: expired"), std::string::npos) << story;
  EXPECT_NE(story.find("B started trying to become leader"), std::string::npos) << story;
  // The same, with the lease held: A still leads, and B's wait is fine.
  History held = h;
  held.lease_ends.clear();
  EXPECT_EQ(check_leader_progress(held, c, 20s, {"A", "B"}).status, Status::kHolds);
}

TEST(LeaderProgress, ACandidateStuckOnAPermanentErrorBreaksIt) {
  History h;
  IterationRecord it = waiting("A", 2s);
  it.outcome = "acquire failed: CROSSSLOT Keys in request don't hash to the same slot";
  h.iterations.push_back(it);
  CheckContext c;
  c.run_end = 60s;
  const Verdict v = check_leader_progress(h, c, 20s, {"A"});
  ASSERT_EQ(v.status, Status::kViolated);
  EXPECT_NE(v.summary.find("permanent error: CROSSSLOT"), std::string::npos) << v.summary;
}

TEST(LeaderProgress, NobodyWaitingAfterTheirLastWriteIsNoLoss) {
  // A and B each wrote once and released: nobody wants to lead any more.
  History h;
  for (const char* n : {"A", "B"}) {
    IterationRecord it = waiting(n, n[0] == 'A' ? 0s : 1s);
    it.acquired = it.start + 1ms;
    it.success = true;
    h.iterations.push_back(it);
  }
  CheckContext c;
  c.run_end = 60s;
  EXPECT_EQ(check_leader_progress(h, c, 20s, {"A", "B"}).status, Status::kHolds);
}

}  // namespace
}  // namespace fencesim
