// The Hazelcast service (models/hazelcast/): FencedLock's fence, re-entry
// and lock-acquire-limit, idempotent retries, waiters, CP sessions (expiry
// on the leader's wall clock, the shift at a new term, a closed session's
// lock released to the next waiter), and whole runs through the builder.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/hazelcast/hazelcast.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"
#include "sim/simulation.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using hazelcast::Fence;
using hazelcast::LockAnswer;
using hazelcast::Op;
using hazelcast::Request;
using hazelcast::Response;
using hazelcast::SessionId;

/// A tester node's behaviour: keeps the LockAnswers pushed to it.
class AnswerInbox final : public sim::NodeBehaviour {
 public:
  void on_message(const sim::Message& m) override {
    if (const auto* a = m.as<LockAnswer>()) answers.push_back(*a);
  }
  std::vector<LockAnswer> answers;
};

/// hz-0 … hz-2 and two tester nodes that send hazelcast::Requests.
class HzHarness {
 public:
  explicit HzHarness(Duration ttl = 10s, const std::function<void(HazelcastSpec&)>& tweak = {}) : sim(1) {
    sc.name = "hz-harness";
    sc.lock.set_service(ServiceKind::kHazelcast);
    sc.lock.ttl = sc.lock.requested_ttl = ttl;
    sc.lock.key = "orders";
    sc.lock.hazelcast().session_heartbeat_interval = 1s;
    if (tweak) tweak(sc.lock.hazelcast());
    for (int i = 0; i < sc.lock.hazelcast().cp_member_count; ++i) {
      members.push_back(sim.add_node("hz-" + std::to_string(i)).id());
    }
    for (int k = 0; k < 2; ++k) {
      testers.push_back(sim.add_node("tester-" + std::to_string(k)).id());
      inboxes.push_back(std::make_unique<AnswerInbox>());
      sim.node(testers.back()).set_behaviour(inboxes.back().get());
    }
    svc = std::make_unique<hazelcast::HazelcastService>(sim, history, sc, members);
    svc->start();
  }
  void at(Time t, std::function<void(sim::Process&)> body, int k = 0) {
    const sim::NodeId node = testers.at(static_cast<std::size_t>(k));
    sim.at(t, [this, node, body = std::move(body)] { sim.node(node).spawn("tester", body); });
  }
  /// Sends `r` to member `m` and waits 1 s for the answer.
  std::optional<Response> call(sim::Process& p, int m, Request r) {
    auto reply = p.call(members.at(static_cast<std::size_t>(m)), sim::make_payload<Request>(std::move(r)), 1s);
    if (!reply) return std::nullopt;
    return *reply->as<Response>();
  }
  SessionId session(sim::Process& p, int m = 0) {
    Request r;
    r.op = Op::kCreateSession;
    r.endpoint = "tester";
    return call(p, m, r)->session;
  }
  static Request lock(SessionId s, std::string uid, std::int64_t thread = 1) {
    Request r;
    r.op = Op::kLock;
    r.session = s;
    r.lock = "orders";
    r.thread = thread;
    r.uid = std::move(uid);
    return r;
  }
  static Request unlock(SessionId s, std::string uid, std::int64_t thread = 1) {
    Request r = lock(s, std::move(uid), thread);
    r.op = Op::kUnlock;
    return r;
  }
  const hazelcast::CpMember::LockState& state(int m = 0) { return svc->member(m).locks().at("orders"); }

  Scenario sc;
  sim::Simulation sim;
  History history;
  std::vector<sim::NodeId> members, testers;
  std::vector<std::unique_ptr<AnswerInbox>> inboxes;
  std::unique_ptr<hazelcast::HazelcastService> svc;
};

TEST(Hazelcast, TheFenceIsTheCommitIndexOfTheLockOpAndReentryKeepsIt) {
  HzHarness h;
  std::optional<Response> first, again, retry, u1, u2;
  raft::Index index_before = 0;
  h.at(100ms, [&](sim::Process& p) {
    const SessionId s = h.session(p);
    index_before = h.svc->member(0).raft().last_index();
    first = h.call(p, 0, HzHarness::lock(s, "uid-1"));
    again = h.call(p, 0, HzHarness::lock(s, "uid-2"));  // re-entrant: a new call of the same thread
    retry = h.call(p, 0, HzHarness::lock(s, "uid-1"));  // the first call again: answered as before
    u1 = h.call(p, 0, HzHarness::unlock(s, "uid-3"));
    u2 = h.call(p, 0, HzHarness::unlock(s, "uid-4"));
  });
  h.sim.run_until(Time{5s});
  ASSERT_TRUE(first && again && retry && u1 && u2);
  EXPECT_EQ(first->fence, static_cast<Fence>(index_before + 1));  // the LockOp's own entry
  EXPECT_EQ(again->fence, first->fence);
  EXPECT_EQ(retry->fence, first->fence);
  EXPECT_TRUE(u1->still_locked);  // count 2 → 1: the retry did not count
  EXPECT_FALSE(u2->still_locked);
  EXPECT_FALSE(h.state().owner.has_value());
  ASSERT_EQ(h.history.grants.size(), 1u);
  EXPECT_EQ(h.history.grants[0].token, first->fence);
}

TEST(Hazelcast, TheLockAcquireLimitRefusesReentryWithFenceZero) {
  HzHarness h(10s, [](HazelcastSpec& s) { s.lock_acquire_limit = 1; });
  std::optional<Response> first, again;
  h.at(100ms, [&](sim::Process& p) {
    const SessionId s = h.session(p);
    first = h.call(p, 0, HzHarness::lock(s, "uid-1"));
    again = h.call(p, 0, HzHarness::lock(s, "uid-2"));
  });
  h.sim.run_until(Time{5s});
  ASSERT_TRUE(first && again);
  EXPECT_GT(first->fence, hazelcast::kInvalidFence);
  EXPECT_EQ(again->fence, hazelcast::kInvalidFence);  // LockAcquireLimitReachedException at the proxy
  EXPECT_EQ(h.state().count, 1);
}

TEST(Hazelcast, AWaiterGetsTheCommitIndexOfItsOwnLockOpWhenTheOwnerUnlocks) {
  HzHarness h;
  std::optional<Response> owner, waiting, retried, unlocked;
  SessionId waiter_session = 0;
  h.at(100ms, [&](sim::Process& p) {
    const SessionId s = h.session(p);
    owner = h.call(p, 0, HzHarness::lock(s, "owner"));
    p.sleep(1s);
    unlocked = h.call(p, 0, HzHarness::unlock(s, "owner-unlock"));
  });
  h.at(
      500ms,
      [&](sim::Process& p) {
        waiter_session = h.session(p, 1);
        waiting = h.call(p, 1, HzHarness::lock(waiter_session, "waiter"));
        retried = h.call(p, 2, HzHarness::lock(waiter_session, "waiter"));  // a retry through another member
      },
      1);
  h.sim.run_until(Time{5s});
  ASSERT_TRUE(owner && waiting && retried && unlocked);
  EXPECT_TRUE(waiting->waiting);
  EXPECT_TRUE(retried->waiting);
  // One wait key: the retry attached to it; answered once the owner left.
  ASSERT_FALSE(h.inboxes[1]->answers.empty());
  const LockAnswer& a = h.inboxes[1]->answers.front();
  EXPECT_TRUE(a.error.empty());
  EXPECT_GT(a.fence, owner->fence);
  ASSERT_TRUE(h.state().owner.has_value());
  EXPECT_EQ(h.state().owner->endpoint.session, waiter_session);
  EXPECT_EQ(static_cast<Fence>(h.state().owner->commit_index), a.fence);
  EXPECT_TRUE(h.state().waiters.empty());
}

TEST(Hazelcast, AnExpiredSessionsLockGoesToTheNextWaiterAndItsCallsFail) {
  HzHarness h(5s);
  std::optional<Response> owner, late_unlock;
  h.at(100ms, [&](sim::Process& p) {
    const SessionId s = h.session(p);
    owner = h.call(p, 0, HzHarness::lock(s, "owner"));
    p.sleep(10s);  // no heartbeat: the session's expiration passes
    late_unlock = h.call(p, 0, HzHarness::unlock(s, "late"));
  });
  h.at(
      500ms,
      [&](sim::Process& p) {
        const SessionId s = h.session(p, 1);
        ASSERT_TRUE(h.call(p, 1, HzHarness::lock(s, "waiter"))->waiting);
        for (int i = 0; i < 12; ++i) {  // the waiter's session manager heartbeats
          p.sleep(1s);
          Request hb;
          hb.op = Op::kHeartbeat;
          hb.session = s;
          h.call(p, 1, hb);
        }
      },
      1);
  h.sim.run_until(Time{15s});
  ASSERT_TRUE(owner && late_unlock);
  EXPECT_EQ(late_unlock->error, hazelcast::errors::kSessionExpired);
  ASSERT_EQ(h.inboxes[1]->answers.size(), 1u);
  const auto end = h.history.lease_ends.find(hazelcast::hold_value("orders", owner->fence));
  ASSERT_NE(end, h.history.lease_ends.end());
  EXPECT_EQ(end->second.cause, LeaseEndCause::kExpired);
  // Expiration 5 s after the LockOp's heartbeat, found by the next
  // once-a-second check.
  EXPECT_GE(end->second.at, Time{5100ms});
  EXPECT_LE(end->second.at, Time{6200ms});
  EXPECT_EQ(h.history.grants.size(), 2u);
}

TEST(Hazelcast, ANewTermShiftsEverySessionsExpirationByTheHeartbeatInterval) {
  HzHarness h(30s, [](HazelcastSpec& s) {
    s.leader_heartbeat_period = 500ms;
    s.max_missed_leader_heartbeat_count = 4;
  });
  SessionId s = 0;
  h.at(
      100ms, [&](sim::Process& p) { s = h.session(p, 1); }, 1);
  Time before{0};
  h.sim.at(Time{1s}, [&] {
    before = h.svc->member(1).sessions().at(s).expiration;
    h.sim.crash(h.members[0]);  // the bootstrap leader
  });
  h.sim.run_until(Time{10s});
  const int leader = h.svc->leader() == h.members[1] ? 1 : 2;
  ASSERT_NE(h.svc->leader(), std::nullopt);
  // One new term's NotifyTermChangeOp: + heartbeat interval (1 s), not a full TTL.
  EXPECT_EQ(h.svc->member(leader).sessions().at(s).expiration - before, Duration{1s});
}

TEST(Hazelcast, AJumpOfTheLeadersWallClockExpiresSessionsAtOnce) {
  const RunResult r = ScenarioBuilder("hz-wall-jump")
                          .duration(60s)
                          .hazelcast(30s, [](HazelcastSpec& s) { s.session_heartbeat_interval = 5s; })
                          .fenced()
                          .client("A", counter(20s, 1, 1s))
                          .client("B", counter(500ms, 2, 1s), [](ClientSpec& c) { c.start = 1s; })
                          .clock_jump("hz-0", 5s, 60s)
                          .run();
  ASSERT_GE(r.history.grants.size(), 2u);
  EXPECT_EQ(r.history.grants[1].client, "B");
  EXPECT_LT(r.history.grants[1].at, Time{7s});  // well before A's 30 s TTL
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
  // Every session expired in the one ExpireSessionsOp, B's too: B was made
  // owner by A's release and lost it in the same entry, so B's write (the
  // newest fence) comes after its lease ended; A's older fence is refused.
  EXPECT_EQ(status(r, Property::kNoStaleWrite), Status::kViolated);
  EXPECT_EQ(status(r, Property::kNoLostUpdate), Status::kHolds);
}

TEST(Hazelcast, APausedHolderIsFencedOffAfterItsSessionExpires) {
  const auto run = [] {
    return ScenarioBuilder("hz-pause")
        .duration(40s)
        .hazelcast(10s, [](HazelcastSpec& s) { s.session_heartbeat_interval = 2s; })
        .fenced()
        .client("A", counter(2s, 1, 1s))
        .client("B", counter(500ms, 3, 1s), [](ClientSpec& c) { c.start = 1s; })
        .pause("A", 500ms, 20s)
        .run();
  };
  const RunResult r = run();
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
  EXPECT_EQ(status(r, Property::kNoStaleWrite), Status::kHolds);
  EXPECT_EQ(status(r, Property::kTokenMonotonic), Status::kHolds);
  EXPECT_EQ(status(r, Property::kRaftSafety), Status::kHolds);
  EXPECT_EQ(r.fingerprint, run().fingerprint);
}

/// A short partition drops the member's answer to a waiter whose turn came
/// (TCP would have retransmitted it): the waiter asks again and takes the
/// lock, instead of holding it unknowingly, heartbeating, forever.
TEST(Hazelcast, AWaiterWhoseAnswerWasLostAsksAgain) {
  const RunResult r = ScenarioBuilder("hz-lost-answer")
                          .duration(30s)
                          .hazelcast(10s, [](HazelcastSpec& s) { s.session_heartbeat_interval = 2s; })
                          .fenced()
                          .client("A", counter(2s, 1, 1s))
                          .client("B", counter(200ms, 3, 200ms), [](ClientSpec& c) { c.start = 500ms; })
                          .isolate(1950ms, {"B"}, 500ms)
                          .run();
  int beliefs = 0;
  for (const BeliefRecord& b : r.history.beliefs) beliefs += b.client == "B" ? 1 : 0;
  EXPECT_EQ(beliefs, 3);
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kHolds);
}

TEST(Hazelcast, LockTtlLeftOutIsTheDefaultSessionTtl) {
  Scenario s;
  s.lock.set_service(ServiceKind::kHazelcast);
  s.lock.requested_ttl = s.lock.ttl = Duration{0};
  ClientSpec a;
  a.name = "A";
  s.clients = {a};
  resolve_scenario(s);
  EXPECT_EQ(s.lock.ttl, 300s);  // CPSubsystemConfig.DEFAULT_SESSION_TTL_SECONDS
  EXPECT_EQ(s.lock.hazelcast().session_heartbeat_interval, 5s);
}

/// The lease_loss_after note names what a Hazelcast client renews by: its
/// session heartbeats, not renew_interval (which it does not use).
TEST(Hazelcast, TheLeaseLossNoteNamesTheHeartbeatInterval) {
  Scenario s = ScenarioBuilder("hz-note").hazelcast(30s).fenced().client("A", counter(1s, 1, 1s)).build();
  s.clients[0].lease_loss_after = 4s;
  resolve_scenario(s);
  bool found = false;
  for (const std::string& n : s.notes) {
    EXPECT_EQ(n.find("renew_interval 10s"), std::string::npos) << n;
    found = found ||
            n.find("lease_loss_after 4s is not longer than the session heartbeat interval 5s") != std::string::npos;
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace fencesim::testing
