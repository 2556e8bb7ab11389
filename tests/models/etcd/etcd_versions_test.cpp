// `lock.version` (models/etcd/versions.hpp): each release's profile, and the
// Mutex behaviour it selects — under 3.4.3 a waiter whose lease expired
// while it waited is still told it owns the lock (etcd-io/etcd#11456,
// #9921); under 3.5 it re-reads its key and is not.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/etcd/versions.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using P = Property;

TEST(EtcdVersions, EachReleaseSetsItsFiveBehaviours) {
  const auto v343 = etcd::version_profile("3.4.3");
  const auto v34 = etcd::version_profile("3.4");
  const auto v35 = etcd::version_profile("3.5");
  const auto none = etcd::version_profile("");
  ASSERT_TRUE(v343 && v34 && v35 && none);
  // 3.4.3: no PreVote by default, renewals without a leadership check, no
  // own-key re-check, a waiter that keeps waiting.
  EXPECT_FALSE(v343->pre_vote);
  EXPECT_FALSE(v343->keepalive_checks_leadership);
  EXPECT_FALSE(v343->keepalive_skips_check_if_active);
  EXPECT_FALSE(v343->mutex_checks_own_key);
  EXPECT_FALSE(v343->lock_fails_on_session_end);
  // The latest 3.4.x: only the leadership check was backported (3.4.31),
  // then its isActive shortcut (3.4.34).
  EXPECT_FALSE(v34->pre_vote);
  EXPECT_TRUE(v34->keepalive_checks_leadership);
  EXPECT_TRUE(v34->keepalive_skips_check_if_active);
  EXPECT_FALSE(v34->mutex_checks_own_key);
  EXPECT_FALSE(v34->lock_fails_on_session_end);
  // 3.5: PreVote on, leadership check, the re-check; the TODO stays.
  EXPECT_TRUE(v35->pre_vote);
  EXPECT_TRUE(v35->keepalive_checks_leadership);
  EXPECT_TRUE(v35->keepalive_skips_check_if_active);
  EXPECT_TRUE(v35->mutex_checks_own_key);
  EXPECT_FALSE(v35->lock_fails_on_session_end);
  // No version: the model's own combination, the EtcdSpec defaults.
  const EtcdSpec d;
  EXPECT_EQ(none->pre_vote, d.pre_vote);
  EXPECT_EQ(none->keepalive_checks_leadership, d.keepalive_checks_leadership);
  EXPECT_EQ(none->keepalive_skips_check_if_active, d.keepalive_skips_check_if_active);
  EXPECT_EQ(none->mutex_checks_own_key, d.mutex_checks_own_key);
  EXPECT_EQ(none->lock_fails_on_session_end, d.lock_fails_on_session_end);
  EXPECT_FALSE(etcd::version_profile("3.6"));
}

TEST(EtcdVersions, OverridesAreTheKeysThatDifferFromTheProfile) {
  EtcdSpec e;
  e.version = "3.4.3";
  etcd::apply_version(e);
  EXPECT_TRUE(etcd::version_overrides(e).empty());
  e.pre_vote = true;
  e.mutex_checks_own_key = true;
  EXPECT_EQ(etcd::version_overrides(e), (std::vector<std::string>{"pre_vote", "mutex_checks_own_key"}));
  EtcdSpec none;
  none.keepalive_checks_leadership = true;
  EXPECT_EQ(etcd::version_overrides(none), std::vector<std::string>{"keepalive_checks_leadership"});
  // 3.5.15: the "3.5" profile without the isActive shortcut.
  EtcdSpec v3515;
  v3515.version = "3.5";
  etcd::apply_version(v3515);
  v3515.keepalive_skips_check_if_active = false;
  EXPECT_EQ(etcd::version_overrides(v3515), std::vector<std::string>{"keepalive_skips_check_if_active"});
}

/// A holds the lock for 6 s; B queues behind it at 0.5 s and is frozen from
/// 1 s to 6.5 s, longer than its 3 s lease, whose revocation deletes B's
/// key; C queues at 2 s. When A releases, B and C both finish waiting.
RunResult waiter_with_expired_lease(const std::string& version) {
  std::string name = "expired-waiter-" + version;
  std::replace(name.begin(), name.end(), '.', '-');
  return ScenarioBuilder(name)
      .duration(30s)
      .etcd(3s)
      .etcd_spec([&](EtcdSpec& e) {
        e.version = version;
        etcd::apply_version(e);
      })
      .fenced()
      .client("A", counter(6s))
      .client("B", counter(2s), [](ClientSpec& c) { c.start = 500ms; })
      .client("C", counter(2s), [](ClientSpec& c) { c.start = 2s; })
      .pause("B", 1s, 5500ms)
      .run();
}

TEST(EtcdVersions, UnderThreeFourThreeAWaiterWithAnExpiredLeaseIsToldItOwnsTheLock) {
  const RunResult r = waiter_with_expired_lease("3.4.3");
  EXPECT_EQ(status(r, P::kMutualExclusion), Status::kViolated) << verdict_of(r, P::kMutualExclusion).summary;
  // B's grant (its key's create revision, 3) comes after C's (4).
  EXPECT_EQ(status(r, P::kTokenMonotonic), Status::kViolated);
  EXPECT_EQ(status(r, P::kRaftSafety), Status::kHolds);
  bool b_granted_after_its_lease_ended = false;
  for (const GrantRecord& g : r.history.grants) {
    auto end = r.history.lease_ends.find(g.value);
    if (g.client == "B" && end != r.history.lease_ends.end() && end->second.at < g.at) {
      b_granted_after_its_lease_ended = true;
    }
  }
  EXPECT_TRUE(b_granted_after_its_lease_ended);
}

TEST(EtcdVersions, UnderThreeFiveTheWaiterReReadsItsKeyAndQueuesAgain) {
  const RunResult r = waiter_with_expired_lease("3.5");
  EXPECT_EQ(status(r, P::kMutualExclusion), Status::kHolds) << verdict_of(r, P::kMutualExclusion).summary;
  EXPECT_EQ(status(r, P::kTokenMonotonic), Status::kHolds);
  // B gets the lock later, on a new session, after C.
  ASSERT_EQ(r.history.grants.size(), 3u);
  EXPECT_EQ(r.history.grants[2].client, "B");
}

}  // namespace
}  // namespace fencesim::testing
