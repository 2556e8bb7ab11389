// The ZooKeeper service (models/zookeeper/): negotiated session timeouts,
// zxids, sequential and container znodes, session expiry at the leader, and
// Curator's and kazoo's lock recipe with their connection states.
#include <gtest/gtest.h>

#include <string>

#include "models/lock_service.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"
#include "models/zookeeper/zookeeper.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using zookeeper::negotiated_timeout;

TEST(ZooKeeper, SessionTimeoutsAreNegotiatedIntoTwoToTwentyTicks) {
  ZooKeeperSpec z;  // tickTime 2 s
  EXPECT_EQ(negotiated_timeout(z, 1s), 4s);
  EXPECT_EQ(negotiated_timeout(z, 10s), 10s);
  EXPECT_EQ(negotiated_timeout(z, 60s), 40s);  // Curator's 60 s default is capped
  z.min_session_timeout = 1s;
  z.max_session_timeout = 90s;
  EXPECT_EQ(negotiated_timeout(z, 1s), 1s);
  EXPECT_EQ(negotiated_timeout(z, 60s), 60s);
}

TEST(ZooKeeper, TheLockPathIsTheKeyUnderTheRoot) {
  EXPECT_EQ(zookeeper::lock_path("lock"), "/lock");
  EXPECT_EQ(zookeeper::lock_path("/locks/a"), "/locks/a");
  EXPECT_EQ(zookeeper::token_of(ZkToken::kSequence, "/l/_c_x-lock-0000000042", {}), 42);
  zookeeper::Stat st;
  st.czxid = (std::int64_t{1} << 32) | 7;
  EXPECT_EQ(zookeeper::token_of(ZkToken::kCzxid, "/l/x-0000000000", st), st.czxid);
  EXPECT_FALSE(zookeeper::token_of(ZkToken::kNone, "/l/x-0000000000", st).has_value());
}

/// Two clients taking turns, no faults.
RunResult turns(ClientLibrary lib, ZkToken token) {
  return ScenarioBuilder(std::string("turns-") + word(lib))
      .duration(30s)
      .zookeeper(10s, [token](ZooKeeperSpec& z) { z.token = token; })
      .fenced()
      .client("A", counter(200ms, 3, 100ms), [lib](ClientSpec& c) { c.library = lib; })
      .client("B", counter(200ms, 3, 100ms), [lib](ClientSpec& c) { c.library = lib; })
      .run();
}

TEST(ZooKeeper, CuratorAndKazooTakeTurnsWithGrowingCzxids) {
  for (ClientLibrary lib : {ClientLibrary::kCurator, ClientLibrary::kKazoo}) {
    const RunResult r = turns(lib, ZkToken::kCzxid);
    ASSERT_EQ(r.history.grants.size(), 6u) << word(lib);
    for (std::size_t i = 1; i < r.history.grants.size(); ++i) {
      EXPECT_GT(*r.history.grants[i].token, *r.history.grants[i - 1].token);
      // Epoch 1 (the bootstrap leader's term) in the high 32 bits.
      EXPECT_EQ(*r.history.grants[i].token >> 32, 1);
    }
    for (const Verdict& v : r.verdicts) EXPECT_NE(v.status, Status::kViolated) << word(v.property);
  }
}

TEST(ZooKeeper, NodeNamesFollowEachRecipe) {
  const RunResult curator = turns(ClientLibrary::kCurator, ZkToken::kSequence);
  const RunResult kazoo = turns(ClientLibrary::kKazoo, ZkToken::kSequence);
  ASSERT_FALSE(curator.history.grants.empty());
  ASSERT_FALSE(kazoo.history.grants.empty());
  // Curator: /lock/_c_<uuid>-lock-<seq>; kazoo: /lock/<uuid hex>__lock__<seq>.
  const std::string c = curator.history.grants.front().value;
  const std::string k = kazoo.history.grants.front().value;
  EXPECT_EQ(c.rfind("/lock/_c_", 0), 0u) << c;
  EXPECT_NE(c.find("-lock-0000000000"), std::string::npos) << c;
  EXPECT_EQ(c.size(), std::string("/lock/_c_").size() + 36 + std::string("-lock-0000000000").size()) << c;
  EXPECT_NE(k.find("__lock__0000000000"), std::string::npos) << k;
  // The sequence is the parent's cversion: each create and delete of a
  // child adds one, so the turns' tokens grow by two (a waiter's node
  // counts too).
  for (std::size_t i = 1; i < curator.history.grants.size(); ++i) {
    EXPECT_GT(*curator.history.grants[i].token, *curator.history.grants[i - 1].token);
  }
}

/// A holds with a long job; its host is cut off from the ensemble from 2 s
/// to 22 s.
RunResult cut_off(ConnectionPolicy policy, ClientLibrary lib, Duration job = 20s) {
  return ScenarioBuilder("cut-off")
      .duration(80s)
      .zookeeper(6s)
      .fenced()
      .client("A", counter(job, 2, 1s),
              [&](ClientSpec& c) {
                c.connection_policy = policy;
                c.library = lib;
              })
      .client("B", counter(500ms, 4, 2s),
              [&](ClientSpec& c) {
                c.start = 1s;
                c.connection_policy = policy;
                c.library = lib;
              })
      .partition(2s, {{"A"}, {"zk-0", "zk-1", "zk-2"}}, 20s)
      .run();
}

const BeliefRecord& first_belief(const RunResult& r, const std::string& client) {
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.client == client) return b;
  }
  throw std::runtime_error("no belief of " + client);
}

TEST(ZooKeeper, StandardPolicyEndsTheBeliefAtSuspendedBeforeTheSessionExpires) {
  const RunResult r = cut_off(ConnectionPolicy::kStandard, ClientLibrary::kCurator);
  const BeliefRecord& a = first_belief(r, "A");
  ASSERT_TRUE(a.end.has_value());
  EXPECT_NE(a.end_reason.find("SUSPENDED"), std::string::npos) << a.end_reason;
  // readTimeout = 2/3 × 6 s after the last answer (before 2 s + ping).
  EXPECT_LE(*a.end, sim::Time{7s});
  ASSERT_GE(r.history.grants.size(), 2u);
  EXPECT_EQ(r.history.grants[1].client, "B");
  EXPECT_GT(r.history.grants[1].at, *a.end);
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kHolds);
}

TEST(ZooKeeper, CuratorDeclaresLostOneSessionTimeoutAfterSuspended) {
  const RunResult r = cut_off(ConnectionPolicy::kSession, ClientLibrary::kCurator);
  const BeliefRecord& a = first_belief(r, "A");
  ASSERT_TRUE(a.end.has_value());
  EXPECT_NE(a.end_reason.find("LOST"), std::string::npos) << a.end_reason;
  EXPECT_NE(a.end_reason.find("elapsed while SUSPENDED"), std::string::npos) << a.end_reason;
  // The server expired the session first and B got the lock meanwhile.
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
}

TEST(ZooKeeper, KazooLearnsLostOnlyOnReconnecting) {
  const RunResult r = cut_off(ConnectionPolicy::kSession, ClientLibrary::kKazoo, 30s);
  const BeliefRecord& a = first_belief(r, "A");
  ASSERT_TRUE(a.end.has_value());
  // Not before the partition ends at 22 s (and before A's job ends at 30 s).
  EXPECT_GE(*a.end, sim::Time{22s});
  EXPECT_NE(a.end_reason.find("learned on reconnecting"), std::string::npos) << a.end_reason;
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
}

TEST(ZooKeeper, TheSessionExpiresAtTheLeaderOnATickBoundary) {
  const RunResult r = cut_off(ConnectionPolicy::kNone, ClientLibrary::kCurator);
  ASSERT_FALSE(r.history.grants.empty());
  const std::string held = r.history.grants.front().value;
  const auto end = r.history.lease_ends.find(held);
  ASSERT_NE(end, r.history.lease_ends.end());
  EXPECT_EQ(end->second.cause, LeaseEndCause::kExpired);
  // The last touch reached the leader before 2 s; expiry ≥ that + 6 s, at
  // most a tick (and the commit) later.
  EXPECT_GE(end->second.at, sim::Time{6s});
  EXPECT_LE(end->second.at, sim::Time{11s});
}

TEST(ZooKeeper, LeaderCrashLeavesSessionsAndTheLockAlone) {
  const RunResult r =
      ScenarioBuilder("leader-crash")
          .duration(120s)
          .zookeeper(40s)
          .fenced()
          .client("A", counter(40s, 1), [](ClientSpec& c) { c.connection_policy = ConnectionPolicy::kSession; })
          .client("B", counter(1s, 3, 1s), [](ClientSpec& c) { c.start = 1s; })
          .crash("zk-0", 5s, 30s)
          .run();
  EXPECT_EQ(r.metrics.lease_losses, 0);
  ASSERT_EQ(r.history.grants.size(), 4u);
  // A new epoch after the crash: B's zxids are in a later epoch than A's.
  EXPECT_GT(*r.history.grants.back().token >> 32, *r.history.grants.front().token >> 32);
  for (const Verdict& v : r.verdicts) EXPECT_NE(v.status, Status::kViolated) << word(v.property);
}

TEST(ZooKeeper, AContainerReapedAndRecreatedRestartsTheSequence) {
  auto run = [](ZkToken token) {
    return ScenarioBuilder("reap")
        .duration(60s)
        .zookeeper(10s,
                   [token](ZooKeeperSpec& z) {
                     z.token = token;
                     z.container_check_interval = 10s;
                   })
        .fenced()
        .client("A", counter(200ms, 3, 200ms))
        .client("B", counter(200ms, 3, 200ms), [](ClientSpec& c) { c.start = 25s; })
        .run();
  };
  const RunResult seq = run(ZkToken::kSequence);
  ASSERT_GE(seq.history.grants.size(), 4u);
  EXPECT_EQ(seq.history.grants[3].client, "B");
  EXPECT_LT(*seq.history.grants[3].token, *seq.history.grants[2].token);
  EXPECT_EQ(status(seq, Property::kTokenMonotonic), Status::kViolated);
  const RunResult czxid = run(ZkToken::kCzxid);
  EXPECT_EQ(status(czxid, Property::kTokenMonotonic), Status::kHolds);
  EXPECT_EQ(czxid.history.grants.size(), 6u);
}

TEST(ZooKeeper, RunsAreDeterministic) {
  const RunResult a = cut_off(ConnectionPolicy::kSession, ClientLibrary::kKazoo);
  const RunResult b = cut_off(ConnectionPolicy::kSession, ClientLibrary::kKazoo);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
}

TEST(ZooKeeper, LockTtlLeftOutIsEachLibrarysDefault) {
  Scenario s;
  s.lock.set_service(ServiceKind::kZooKeeper);
  s.lock.requested_ttl = s.lock.ttl = Duration{0};
  ClientSpec curator;
  curator.name = "A";
  ClientSpec kazoo;
  kazoo.name = "B";
  kazoo.library = ClientLibrary::kKazoo;
  s.clients = {curator, kazoo};
  resolve_scenario(s);
  EXPECT_EQ(s.lock.requested_ttl, 60s);  // Curator's DEFAULT_SESSION_TIMEOUT_MS
  EXPECT_EQ(s.lock.ttl, 40s);            // negotiated: 20 × tickTime
  ASSERT_TRUE(s.clients[1].ttl.has_value());
  EXPECT_EQ(*s.clients[1].ttl, 10s);  // kazoo's KazooClient(timeout=10.0)
  EXPECT_EQ(client_ttl(s.lock, s.clients[1]), 10s);
}

/// apache/curator#1121: the leader crashes while A waits behind B; A's
/// client declares LOST and starts a new session, the new leader gives A's
/// old session a full timeout, and A's lock loop takes the old session's
/// node, first after B's release, for its own.
TEST(ZooKeeper, TheRecipeTakesANodeOfALostSessionForItsOwn) {
  const RunResult r = ScenarioBuilder("curator-1121")
                          .duration(60s)
                          .zookeeper(4s)
                          .fenced()
                          .client("A", counter(6s, 5, 300ms))
                          .client("B", counter(6s, 5, 300ms), [](ClientSpec& c) { c.start = 500ms; })
                          .crash("zk-0", 6900ms, 1s)
                          .run();
  // A's grant on its lost session's node (czxid of epoch 1, after the new
  // leader of epoch 2 took over), ended at the service by that session's
  // expiry while A still believes.
  const GrantRecord* stale = nullptr;
  for (const GrantRecord& g : r.history.grants) {
    if (g.client == "A" && g.at > sim::Time{13s} && *g.token >> 32 == 1) stale = &g;
  }
  ASSERT_NE(stale, nullptr);
  const auto end = r.history.lease_ends.find(stale->value);
  ASSERT_NE(end, r.history.lease_ends.end());
  EXPECT_EQ(end->second.cause, LeaseEndCause::kExpired);
  EXPECT_EQ(status(r, Property::kMutualExclusion), Status::kViolated);
}

/// A watch event a short loss dropped: TCP would retransmit it to a real
/// client; the model's waiter looks again after readTimeout instead of
/// waiting for ever (before, with 1 % loss, seed 21 stopped granting at 5 s:
/// 6 acquisitions in 120 s).
TEST(ZooKeeper, AWaiterWhoseWatchEventWasLostLooksAgain) {
  Scenario s = ScenarioBuilder("zk-loss")
                   .duration(120s)
                   .settle(30s)
                   .latency(1ms, 5ms)
                   .zookeeper(10s)
                   .fenced()
                   .client("w-0", counter(1s, 30, 200ms))
                   .client("w-1", counter(1s, 30, 200ms))
                   .client("w-2", counter(1s, 30, 200ms))
                   .build();
  s.network.loss_ppb = 10'000'000;  // 1 %
  s.seed = 21;
  const RunResult r = run_scenario(s);
  EXPECT_GE(r.history.grants.size(), 60u);
}

}  // namespace
}  // namespace fencesim::testing
