// The disk_stall fault on an etcd member (raft::RaftNode::stall,
// EtcdMember::stall) and `revoke_checks_leadership`: etcd-io/etcd#12528 and
// #15247 (a leader stuck in a WAL fdatasync steps down inside Raft, its
// lessor is not demoted, and its revocations of leases kept alive through
// the new leader are forwarded and committed), fixed by PR #16822
// (revokeExpiredLeases asks ensureLeadership first; etcd 3.5.13, 3.4.31).
#include <gtest/gtest.h>

#include "models/etcd/versions.hpp"
#include "models/validate.hpp"
#include "tests/models/etcd/etcd_harness.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

struct StallRun {
  std::optional<LeaseId> lease;
  int keepalives_ok = 0;           ///< through etcd-1, from 0.5 s to 19.5 s
  std::optional<Time> granted_at;  ///< the answer to a grant asked of etcd-0 at 3 s
  bool lease_alive_at_end = false;
  std::optional<Time> stepped_down;  ///< etcd-0's Raft stepped down
  History history;
};

/// etcd-0 leads; a lease (TTL 3 s) is granted and kept alive through
/// etcd-1 every second; etcd-0's Ready loop stalls from 2 s to 10 s.
StallRun stalled_leader(bool revoke_checks_leadership) {
  EtcdHarness h(
      3, 3s, [&](EtcdSpec& e) { e.revoke_checks_leadership = revoke_checks_leadership; }, 2);
  StallRun out;
  h.at(0s, [&](sim::Process& p) {
    if (auto g = h.call(p, 1, h.grant(3s))) out.lease = g->lease;
    p.sleep(500ms);
    for (int i = 0; i < 19 && out.lease; ++i) {
      if (auto k = h.call(p, 1, h.keepalive(*out.lease)); k && k->error.empty() && k->ttl > Duration{0}) {
        ++out.keepalives_ok;
      }
      p.sleep(1s);
    }
  });
  h.observe(2s, [&] { h.member(0).stall(10s); });
  h.at(
      3s,
      [&](sim::Process& p) {
        if (auto g = h.call(p, 0, h.grant(3s), 20s); g && g->error.empty()) out.granted_at = h.sim.now();
      },
      1);
  h.run(20s);
  out.lease_alive_at_end = out.lease && h.member(h.leader()).has_lease(*out.lease);
  for (const raft::RaftEvent& e : h.svc->raft_history().events) {
    if (e.kind == raft::EventKind::kSteppedDown && e.member == "etcd-0") out.stepped_down = e.at;
  }
  out.history = h.history;
  return out;
}

bool has_note(const History& h, const std::string& node, const std::string& kind, const std::string& text) {
  for (const NoteRecord& n : h.notes) {
    if (n.node == node && n.kind == kind && n.text.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(EtcdDiskStall, AStalledLeaderStepsDownInsideRaftButAnswersNothingUntilItsFsyncReturns) {
  const StallRun r = stalled_leader(true);
  ASSERT_TRUE(r.lease);
  // Raft saw the new leader's term while the loop was blocked.
  ASSERT_TRUE(r.stepped_down);
  EXPECT_GT(*r.stepped_down, 2s);
  EXPECT_LT(*r.stepped_down, 10s);
  // The grant asked of etcd-0 at 3 s is forwarded and answered only after 10 s.
  ASSERT_TRUE(r.granted_at);
  EXPECT_GE(*r.granted_at, 10s);
}

TEST(EtcdDiskStall, BeforeTheFixTheUndemotedLessorRevokesALeaseKeptAliveThroughTheNewLeader) {
  const StallRun r = stalled_leader(false);
  ASSERT_TRUE(r.lease);
  EXPECT_TRUE(has_note(r.history, "etcd-0", "lessor", "still primary after stepping down"));
  EXPECT_FALSE(r.lease_alive_at_end);
  // The keepalives before 10 s all succeeded: the lease was alive when revoked.
  EXPECT_GE(r.keepalives_ok, 9);
  EXPECT_LT(r.keepalives_ok, 19);
}

TEST(EtcdDiskStall, WithTheFixTheRevocationIsIgnoredAndTheLeaseLivesOn) {
  const StallRun r = stalled_leader(true);
  ASSERT_TRUE(r.lease);
  EXPECT_TRUE(has_note(r.history, "etcd-0", "lessor", "ignored the revocation"));
  EXPECT_TRUE(r.lease_alive_at_end);
  EXPECT_EQ(r.keepalives_ok, 19);
}

/// The shipped stall (etcd-0, the leader, from 5 s to 13 s) with the
/// lessor before the fix, and `more` added to its faults.
RunResult stall_run(std::vector<FaultSpec> more) {
  ScenarioBuilder b("stall-run");
  b.duration(40s).settle(10s).etcd(3s).unfenced();
  b.etcd_spec([](EtcdSpec& e) { e.revoke_checks_leadership = false; });
  b.client("B", counter(500ms, 3), [](ClientSpec& c) { c.start = 7s; });
  b.client("A", counter(15s, 1));
  Scenario s = b.build();
  FaultSpec f;
  f.kind = FaultKind::kDiskStall;
  f.at = 5s;
  f.target = "etcd-leader";
  f.duration = 8s;
  f.origin = "faults[0]";
  s.faults.push_back(f);
  for (FaultSpec& m : more) s.faults.push_back(m);
  return run_scenario(s);
}

/// The first lease end at the service by a revocation.
std::optional<Time> revoked(const RunResult& r) {
  std::optional<Time> first;
  for (const auto& [value, e] : r.history.lease_ends) {
    if (e.cause == LeaseEndCause::kRevoked && (!first || e.at < *first)) first = e.at;
  }
  return first;
}

TEST(EtcdDiskStall, TheStallEndsAtItsTrueEndWhateverTheMembersClock) {
  const RunResult plain = stall_run({});
  ASSERT_TRUE(revoked(plain));
  EXPECT_GE(*revoked(plain), 13s);
  EXPECT_LT(*revoked(plain), 13s + 10ms);
  FaultSpec slow;
  slow.kind = FaultKind::kClockDrift;
  slow.at = 4s;
  slow.target = "etcd-0";
  slow.ppm = -500'000;
  slow.origin = "faults[1]";
  const RunResult drifted = stall_run({slow});
  ASSERT_TRUE(revoked(drifted));
  EXPECT_GE(*revoked(drifted), 13s);
  EXPECT_LT(*revoked(drifted), 15s);  // not 21 s: the fault's length is true time
}

TEST(EtcdDiskStall, TheVersionsSetTheFix) {
  EXPECT_FALSE(etcd::version_profile("3.4.3")->revoke_checks_leadership);
  EXPECT_TRUE(etcd::version_profile("3.4")->revoke_checks_leadership);
  EXPECT_TRUE(etcd::version_profile("3.5")->revoke_checks_leadership);
  EXPECT_TRUE(etcd::version_profile("")->revoke_checks_leadership);
  EtcdSpec e;
  e.version = "3.5";
  etcd::apply_version(e);
  e.revoke_checks_leadership = false;  // 3.5.12 and earlier
  EXPECT_EQ(etcd::version_overrides(e), std::vector<std::string>{"revoke_checks_leadership"});
}

TEST(EtcdDiskStall, TheFaultNeedsAnEtcdMemberAndADuration) {
  auto stall_on = [](ServiceKind service, const std::string& target) {
    ScenarioBuilder b("stall-rules");
    if (service == ServiceKind::kEtcd) {
      b.etcd(3s);
    } else {
      b.redis(3s);
    }
    b.client("A", counter(1s));
    Scenario s = b.build();
    FaultSpec f;
    f.kind = FaultKind::kDiskStall;
    f.at = 1s;
    f.target = target;
    f.duration = 2s;
    f.origin = "faults[0]";
    s.faults.push_back(f);
    return validate_scenario(s);
  };
  EXPECT_FALSE(stall_on(ServiceKind::kEtcd, "etcd-leader"));
  EXPECT_FALSE(stall_on(ServiceKind::kEtcd, "etcd-2"));
  const auto redis = stall_on(ServiceKind::kRedis, "redis-0");
  ASSERT_TRUE(redis);
  EXPECT_EQ(redis->path, "faults[0].kind");
  EXPECT_NE(redis->message.find("etcd member's Raft Ready loop"), std::string::npos) << redis->message;
  const auto client = stall_on(ServiceKind::kEtcd, "A");
  ASSERT_TRUE(client);
  EXPECT_EQ(client->path, "faults[0].target");
  EXPECT_NE(client->message.find("needs an etcd member"), std::string::npos) << client->message;
}

}  // namespace
}  // namespace fencesim::testing
