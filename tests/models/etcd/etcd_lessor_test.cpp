// The lessor of the etcd-like service (models/etcd/etcd.cpp), driven by raw
// requests through the harness: grant, keepalive, expiry and revocation by
// the leader, Promote on a new leader, and `keepalive_checks_leadership`.
//
// etcd sources modelled: lease/lessor.go (Grant, Renew, revokeExpiredLeases,
// Promote, Demote), etcdserver/v3_server.go LeaseRenew (3.4: the leader
// renews on its own; later versions first confirm leadership), and PR #4778
// ("the new leader needs to refresh with an extended TTL … clients might
// still send keep alive to the old leader until it gives up leadership").
#include <gtest/gtest.h>

#include "tests/models/etcd/etcd_harness.hpp"

namespace fencesim::testing {
namespace {

/// The true time member `name` became leader (the lessor's promotion note).
std::vector<Time> promotions(const History& h, const std::string& name) {
  std::vector<Time> out;
  for (const NoteRecord& n : h.notes) {
    if (n.node == name && n.kind == "leader") out.push_back(n.at);
  }
  return out;
}

/// True time `member` last stepped down from leadership, if it did.
std::optional<Time> stepped_down(const raft::RaftHistory& h, const std::string& member) {
  std::optional<Time> at;
  for (const raft::RaftEvent& e : h.events) {
    if (e.kind == raft::EventKind::kSteppedDown && e.member == member) at = e.at;
  }
  return at;
}

bool any_revoke_in_logs(EtcdHarness& h) {
  for (int i = 0; i < static_cast<int>(h.members.size()); ++i) {
    for (const raft::Entry& e : h.member(i).raft().log()) {
      if (e.command.str().rfind("revoke", 0) == 0) return true;
    }
  }
  return false;
}

TEST(EtcdLessor, TheBootstrapLeaderIsPromotedOnceAtTimeZeroAndChecksExpiryEvery500ms) {
  EtcdHarness h;
  std::optional<Response> g;
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 0, h.grant(2s)); });
  h.run(10s);
  EXPECT_EQ(promotions(h.history, "etcd-0"), (std::vector<Time>{0s}));
  EXPECT_TRUE(promotions(h.history, "etcd-1").empty());
  // Granted at 3 ms with TTL 2 s: expired at 2.003 s, found by the check at
  // 2.5 s (one lessor loop, on a 500 ms grid from the promotion at 0).
  ASSERT_EQ(h.history.lease_ends.size(), 0u) << "no key was attached";
  EXPECT_FALSE(h.member(0).has_lease(g->lease));
  Time revoked{0};
  for (const raft::RaftEvent& e : h.svc->raft_history().events) {
    if (e.kind == raft::EventKind::kCommit && e.member == "etcd-0" && e.command.str().rfind("revoke", 0) == 0)
      revoked = e.at;
  }
  EXPECT_EQ(revoked, 2502ms);
}

TEST(EtcdLessor, AGrantAnswersAnIdAndTheTtlAndOnlyTheLeaderStartsTheCountdown) {
  EtcdHarness h;
  std::optional<Response> g;
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 0, h.grant()); });
  h.run(1s);
  ASSERT_TRUE(g && g->error.empty());
  EXPECT_GT(g->lease, 0);
  EXPECT_EQ(g->ttl, 3s);
  // The leader applied the grant at 3 ms (request 1 ms, replication round
  // trip 2 ms): its deadline is then + TTL on its monotonic clock.
  EXPECT_EQ(h.member(0).lease_expiry(g->lease), 3s + 3ms);
  EXPECT_FALSE(h.member(1).lease_expiry(g->lease));
  EXPECT_FALSE(h.member(2).lease_expiry(g->lease));
}

TEST(EtcdLessor, AKeepaliveResetsTheExpiryOnTheLeadersMonotonicClockAndAnswersTheTtl) {
  EtcdHarness h;
  std::optional<Response> g, k_leader, k_follower;
  h.at(0s, [&](sim::Process& p) {
    g = h.call(p, 0, h.grant());
    p.sleep(1s - 4ms);
    k_leader = h.call(p, 0, h.keepalive(g->lease));  // handled at 1.001 s
  });
  // The wall clock is no part of it; a forward step of the monotonic clock is.
  h.observe(500ms, [&] { h.sim.clock_jump(h.members[0], sim::ClockKind::kWall, 1h); });
  h.observe(600ms, [&] { h.sim.clock_jump(h.members[0], sim::ClockKind::kMonotonic, 250ms); });
  h.run(1500ms);
  ASSERT_TRUE(k_leader && k_leader->error.empty());
  EXPECT_EQ(k_leader->ttl, 3s);
  EXPECT_EQ(h.member(0).lease_expiry(g->lease), 1001ms + 250ms + 3s);

  // Through a follower: relayed to the leader and back (etcd LeaseRenew
  // forwards to the leader over HTTP).
  h.at(2s, [&](sim::Process& p) { k_follower = h.call(p, 2, h.keepalive(g->lease)); });
  h.run(3s);
  ASSERT_TRUE(k_follower && k_follower->error.empty());
  EXPECT_EQ(k_follower->ttl, 3s);
  EXPECT_EQ(h.member(0).lease_expiry(g->lease), 2002ms + 250ms + 3s) << "renewed on the leader at 2.002 s";
}

TEST(EtcdLessor, AKeepaliveForAnUnknownLeaseAnswersTtlZero) {
  EtcdHarness h;
  std::optional<Response> at_leader, at_follower;
  h.at(0s, [&](sim::Process& p) {
    at_leader = h.call(p, 0, h.keepalive(4242));
    at_follower = h.call(p, 1, h.keepalive(4242));
  });
  h.run(1s);
  ASSERT_TRUE(at_leader && at_follower);
  EXPECT_EQ(at_leader->error, "");
  EXPECT_EQ(at_leader->ttl, 0s);
  EXPECT_EQ(at_follower->error, "");
  EXPECT_EQ(at_follower->ttl, 0s);
}

TEST(EtcdLessor, AKeepaliveForAnExpiredLeaseAnswersTtlZeroAndNeverExtendsIt) {
  EtcdHarness h;
  std::optional<Response> g, late, after_revoke;
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 0, h.grant()); });
  // Deadline 3.003 s; the lessor's next check is at 3.5 s. In between, the
  // lease is expired but not yet revoked.
  h.at(3200ms, [&](sim::Process& p) { late = h.call(p, 0, h.keepalive(g->lease)); });
  h.at(4s, [&](sim::Process& p) { after_revoke = h.call(p, 0, h.keepalive(g->lease)); });
  h.run(3300ms);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->ttl, 0s);
  EXPECT_EQ(h.member(0).lease_expiry(g->lease), 3003ms) << "not extended";
  EXPECT_TRUE(h.member(0).has_lease(g->lease)) << "not revoked yet";
  h.run(5s);
  ASSERT_TRUE(after_revoke);
  EXPECT_EQ(after_revoke->ttl, 0s);
  EXPECT_FALSE(h.member(0).has_lease(g->lease));
}

TEST(EtcdLessor, TheLeadersLessorRevokesAnExpiredLeaseThroughRaftAndDeletesItsKeys) {
  EtcdHarness h;
  std::optional<Response> g, l;
  h.at(0s, [&](sim::Process& p) {
    g = h.call(p, 0, h.grant());
    l = h.call(p, 0, h.lock(g->lease));
  });
  h.run(3499ms);
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{2, 2, 2}));
  h.run(4s);
  ASSERT_TRUE(l && l->kv);
  // Expired at 3.003 s; the check every 500 ms proposes the revocation at
  // 3.5 s; one write transaction deletes the attached key: revision 3.
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{3, 3, 3}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(h.member(i).has_lease(g->lease)) << "etcd-" << i;
    EXPECT_EQ(h.key(i, l->kv->key), nullptr) << "etcd-" << i;
  }
  // The hold ends at the service when the leader applies the revocation.
  const auto end = h.history.lease_ends.find(etcd::hold_value(l->kv->key, 2));
  ASSERT_NE(end, h.history.lease_ends.end());
  EXPECT_EQ(end->second.at, 3502ms);
  EXPECT_EQ(end->second.reason, "lease " + std::to_string(g->lease) + " revoked");
  EXPECT_TRUE(h.raft_safety().holds);
}

TEST(EtcdLessor, NonLeadersNeverExpireLeasesAndANewLeaderExtendsThemWhenItTakesOver) {
  EtcdHarness h;
  std::optional<Response> g;
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 0, h.grant()); });
  // Every member alone: the leader steps down by CheckQuorum and nobody can
  // be elected. Followers' clocks even jump a minute ahead.
  h.observe(100ms, [&] {
    for (sim::NodeId m : h.members) h.isolate({m});
  });
  h.observe(5s, [&] {
    h.sim.clock_jump(h.members[1], sim::ClockKind::kMonotonic, 60s);
    h.sim.clock_jump(h.members[2], sim::ClockKind::kMonotonic, 60s);
  });
  h.run(20s);
  EXPECT_EQ(h.leader(), -1);
  ASSERT_TRUE(g);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(h.member(i).has_lease(g->lease)) << "etcd-" << i;
    EXPECT_FALSE(h.member(i).lease_expiry(g->lease)) << "etcd-" << i << " keeps no deadlines";
  }
  EXPECT_FALSE(any_revoke_in_logs(h));
  EXPECT_TRUE(h.history.lease_ends.empty()) << "a lease past its expiry while there is no leader is still held";

  // Healed: the new leader's Promote gives the lease election_timeout + TTL
  // from its promotion; unrenewed, it is revoked exactly then (the lessor's
  // 500 ms checks start at the promotion) and committed a round trip later.
  h.observe(20s, [&] { h.sim.heal(); });
  h.at(20s, [&](sim::Process& p) {
    std::optional<Response> l;
    for (int i = 0; i < 20 && !(l && l->error.empty()); ++i) {
      p.sleep(200ms);
      l = h.call(p, i % 3, h.lock(g->lease));
    }
  });
  h.run(40s);
  const int leader = h.leader();
  ASSERT_GE(leader, 0);
  const auto promoted = promotions(h.history, "etcd-" + std::to_string(leader));
  ASSERT_FALSE(promoted.empty());
  const Time p = promoted.back();
  EXPECT_GT(p, 20s);
  const std::string key = EtcdHarness::mutex_key("lock/", g->lease);
  ASSERT_EQ(h.history.lease_ends.size(), 1u);
  EXPECT_EQ(h.history.lease_ends.begin()->second.at, p + 1s + 3s + 2ms);
  EXPECT_TRUE(h.raft_safety().holds);
}

TEST(EtcdLessor, PromoteOnANewLeaderExtendsEveryLeaseByTheElectionTimeoutPlusItsTtl) {
  EtcdHarness h(3, 3s);
  std::optional<Response> a, b;
  h.at(0s, [&](sim::Process& p) {
    a = h.call(p, 0, h.grant(3s));
    b = h.call(p, 0, h.grant(10s));
  });
  h.observe(1s, [&] { h.sim.crash(h.members[0]); });
  h.run(4500ms);
  const int leader = h.leader();
  ASSERT_GE(leader, 1);
  const auto promoted = promotions(h.history, "etcd-" + std::to_string(leader));
  ASSERT_EQ(promoted.size(), 1u);
  // No clock fault: the monotonic clock reads true time.
  EXPECT_EQ(h.member(leader).lease_expiry(a->lease), promoted[0] + 1s + 3s);
  EXPECT_EQ(h.member(leader).lease_expiry(b->lease), promoted[0] + 1s + 10s);
  EXPECT_TRUE(h.raft_safety().holds);
}

/// A leader cut off from its quorum but not from the tester, which sends it
/// a keepalive every 200 ms; returns (send time, answer) pairs.
struct CutOffRun {
  std::vector<std::pair<Time, std::optional<Response>>> answers;
  std::optional<Time> step_down;
};
CutOffRun cut_off_leader(bool checks_leadership, bool skips_if_active = false) {
  EtcdHarness h(3, 3s, [&](EtcdSpec& e) {
    e.keepalive_checks_leadership = checks_leadership;
    e.keepalive_skips_check_if_active = skips_if_active;
  });
  CutOffRun out;
  std::optional<Response> g;
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 0, h.grant()); });
  h.observe(1s, [&] {
    sim::Partition part;
    part.groups = {{h.members[0], h.tester(0)}, {h.members[1], h.members[2]}};
    h.sim.add_partition(part);
  });
  h.at(500ms, [&](sim::Process& p) {
    for (int i = 0; i < 20; ++i) {
      const Time sent = p.sim().now();
      out.answers.emplace_back(sent, h.call(p, 0, h.keepalive(g->lease), 150ms));
      p.sleep(sent + 200ms - p.sim().now());
    }
  });
  h.run(5s);
  out.step_down = stepped_down(h.svc->raft_history(), "etcd-0");
  EXPECT_TRUE(h.raft_safety().holds);
  return out;
}

void expect_renews_until_step_down(const CutOffRun& r) {
  ASSERT_TRUE(r.step_down);
  // CheckQuorum runs every election timeout (10 ticks of 100 ms): the leader
  // notices within two of them.
  EXPECT_GT(*r.step_down, 1s);
  EXPECT_LE(*r.step_down, 3s);
  int renewed_after_cut = 0;
  for (const auto& [sent, a] : r.answers) {
    if (sent >= 1s && sent < *r.step_down - 5ms) {
      ASSERT_TRUE(a) << "sent at " << sim::format_duration(sent);
      EXPECT_EQ(a->ttl, 3s) << "sent at " << sim::format_duration(sent);
      ++renewed_after_cut;
    }
    if (sent > *r.step_down) {
      ASSERT_TRUE(a);
      EXPECT_EQ(a->error, "no leader") << "sent at " << sim::format_duration(sent);
    }
  }
  EXPECT_GE(renewed_after_cut, 3);
}

TEST(EtcdLessor, A34LeaderCutOffFromItsQuorumKeepsAnsweringKeepalivesUntilCheckQuorumStepsItDown) {
  expect_renews_until_step_down(cut_off_leader(false));
}

TEST(EtcdLessor, ALeaderWhoseRaftKeepsTickingSkipsTheLeadershipCheckAndRenewsAloneWhenCutOff) {
  // etcd ≥ 3.4.34 / 3.5.16 isActive: the cut-off leader's own ticks go on,
  // so ensureLeadership returns true without a ReadIndex, as in 3.4.3.
  expect_renews_until_step_down(cut_off_leader(true, true));
}

TEST(EtcdLessor, ALeaderThatMustConfirmItsLeadershipAnswersNoKeepaliveOnceCutOff) {
  const CutOffRun r = cut_off_leader(true);
  ASSERT_TRUE(r.step_down);
  for (const auto& [sent, a] : r.answers) {
    if (sent < 1s - 10ms) {
      // Before the cut: a quorum confirms at once (one heartbeat round trip).
      ASSERT_TRUE(a);
      EXPECT_EQ(a->ttl, 3s);
    } else if (sent >= 1s) {
      EXPECT_FALSE(a && a->error.empty() && a->ttl > 0s)
          << "renewed a lease while cut off, sent at " << sim::format_duration(sent);
    }
  }
}

TEST(EtcdLessor, AForwardedKeepaliveIsRenewedWithoutTheLeadershipCheckEvenByAStaleLeader) {
  // etcd's leasehttp handler (the leader's end of a follower's forwarded
  // LeaseRenew) calls lessor.Renew directly: no ensureLeadership. etcd-0
  // leads and is paused from 1 s to 2.5 s; a keepalive sent to etcd-1 at
  // 1.1 s is forwarded to etcd-0 and waits there while etcd-1 and etcd-2
  // elect a new leader. Resumed, etcd-0 handles it first (it arrived before
  // any message of the new term), still believes it leads, and renews.
  EtcdHarness h(3, 3s, [](EtcdSpec& e) {
    e.keepalive_checks_leadership = true;
    e.keepalive_skips_check_if_active = false;
  });
  std::optional<Response> g, k;
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 0, h.grant()); });
  h.observe(1s, [&] { h.sim.pause(h.members[0], 1500ms); });
  h.at(1100ms, [&](sim::Process& p) { k = h.call(p, 1, h.keepalive(g->lease), 3s); });
  int leader_at_resume = -1;
  h.observe(2500ms, [&] { leader_at_resume = h.leader(); });
  h.run(4s);
  ASSERT_TRUE(k);
  EXPECT_TRUE(k->error.empty()) << k->error;
  EXPECT_EQ(k->ttl, 3s);
  EXPECT_GE(leader_at_resume, 1) << "a new leader was elected during the pause";
  EXPECT_TRUE(h.raft_safety().holds);
}

/// One keepalive to the leader etcd-0 sent at `sent`, optionally with
/// etcd-0 paused over [pause_at, pause_at + pause); returns when the answer
/// came back (true time) and the answer.
std::pair<Time, std::optional<Response>> keepalive_answered_at(bool skips_if_active, Time sent,
                                                               std::optional<Time> pause_at = {}, Duration pause = 0s) {
  EtcdHarness h(3, 3s, [&](EtcdSpec& e) {
    e.keepalive_checks_leadership = true;
    e.keepalive_skips_check_if_active = skips_if_active;
  });
  std::optional<Response> g, k;
  Time answered{0};
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 0, h.grant()); });
  if (pause_at) h.observe(*pause_at, [&] { h.sim.pause(h.members[0], pause); });
  h.at(sent, [&](sim::Process& p) {
    k = h.call(p, 0, h.keepalive(g->lease), 2s);
    answered = p.sim().now();
  });
  h.run(4s);
  EXPECT_TRUE(h.raft_safety().holds);
  return {answered, k};
}

TEST(EtcdLessor, AnActiveLeaderAnswersAKeepaliveWithoutAHeartbeatRound) {
  // 1 ms each way. The ReadIndex adds a heartbeat round to a follower and
  // back (2 ms); isActive (the latest tick, at 1.2 s, is less than 300 ms
  // old) skips it.
  const auto [checked_at, checked] = keepalive_answered_at(false, 1200500us);
  const auto [active_at, active] = keepalive_answered_at(true, 1200500us);
  ASSERT_TRUE(checked && checked->error.empty());
  ASSERT_TRUE(active && active->error.empty());
  EXPECT_EQ(checked->ttl, 3s);
  EXPECT_EQ(active->ttl, 3s);
  EXPECT_EQ(active_at, 1200500us + 2ms);
  EXPECT_EQ(checked_at, 1200500us + 4ms);
}

TEST(EtcdLessor, ALeaderWhoseLatestTickIsThreeHeartbeatsOldAsksForTheReadIndex) {
  // etcd-0 ticks at 1.2 s, is paused from 1.2005 s for 500 ms, and the
  // keepalive reaches it at 1.2015 s, before its next tick fell due (1.3 s):
  // on resume it is handled first, 500 ms after the latest tick, more than
  // 3 × 100 ms. Not active: the ReadIndex, as without the shortcut.
  const auto [checked_at, checked] = keepalive_answered_at(false, 1200500us, 1200500us, 500ms);
  const auto [active_at, active] = keepalive_answered_at(true, 1200500us, 1200500us, 500ms);
  ASSERT_TRUE(checked && checked->error.empty());
  ASSERT_TRUE(active && active->error.empty());
  EXPECT_EQ(active_at, checked_at);
  EXPECT_EQ(active_at, 1700500us + 3ms);
  // Paused for 250 ms instead: 250 ms after the latest tick, still active.
  const auto [short_at, short_pause] = keepalive_answered_at(true, 1200500us, 1200500us, 250ms);
  ASSERT_TRUE(short_pause && short_pause->error.empty());
  EXPECT_EQ(short_at, 1450500us + 1ms);
}

}  // namespace
}  // namespace fencesim::testing
