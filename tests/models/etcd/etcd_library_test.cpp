// clients[].library ("go", "jetcd") and clients[].ttl for etcd clients
// (models/client/etcd_client.cpp, docs/FORMAT.md "etcd client libraries").
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

/// A's member, etcd-0 (the leader at time 0), is frozen from 500 ms to
/// 15.5 s; A starts at 1 s. The others elect a new leader meanwhile.
RunResult member_frozen(ClientLibrary lib) {
  return ScenarioBuilder(lib == ClientLibrary::kGo ? "frozen-member-go" : "frozen-member-jetcd")
      .duration(30s)
      .etcd(3s)
      .fenced()
      .client("A", counter(100ms),
              [lib](ClientSpec& c) {
                c.start = 1s;
                c.library = lib;
              })
      .pause("etcd-0", 500ms, 15s)
      .run();
}

TEST(EtcdLibrary, TheGoClientMovesToAnotherMemberWhenItsOwnDoesNotAnswer) {
  const RunResult r = member_frozen(ClientLibrary::kGo);
  ASSERT_FALSE(r.history.grants.empty());
  EXPECT_LT(r.history.grants.front().at, sim::Time{15500ms});
  EXPECT_NE(r.history.grants.front().server, "etcd-0");
}

TEST(EtcdLibrary, JetcdStaysOnItsMember) {
  const RunResult r = member_frozen(ClientLibrary::kJetcd);
  ASSERT_FALSE(r.history.grants.empty());  // once etcd-0 is back
  EXPECT_GE(r.history.grants.front().at, sim::Time{15500ms});
  for (const GrantRecord& g : r.history.grants) EXPECT_EQ(g.server, "etcd-0");
}

/// The lease of each grant: the key's lease id part, "lock/<id>@<rev>".
std::set<std::string> lease_keys(const RunResult& r) {
  std::set<std::string> keys;
  for (const GrantRecord& g : r.history.grants) keys.insert(g.value.substr(0, g.value.find('@')));
  return keys;
}

TEST(EtcdLibrary, JetcdGrantsALeasePerAcquireWhereGoReusesItsSession) {
  for (ClientLibrary lib : {ClientLibrary::kGo, ClientLibrary::kJetcd}) {
    const RunResult r = ScenarioBuilder(lib == ClientLibrary::kGo ? "three-go" : "three-jetcd")
                            .duration(20s)
                            .etcd(3s)
                            .fenced()
                            .client("A", counter(100ms, 3, 500ms), [lib](ClientSpec& c) { c.library = lib; })
                            .run();
    ASSERT_EQ(r.history.grants.size(), 3u);
    EXPECT_EQ(lease_keys(r).size(), lib == ClientLibrary::kGo ? 1u : 3u);
  }
}

/// B waits behind A (20 s leases) and is frozen for 7 s from 1 s.
RunResult frozen_waiter(std::optional<Duration> b_ttl) {
  return ScenarioBuilder(b_ttl ? "waiter-own-ttl" : "waiter-lock-ttl")
      .duration(40s)
      .etcd(20s)
      .fenced()
      .client("A", counter(10s))
      .client("B", counter(2s),
              [b_ttl](ClientSpec& c) {
                c.start = 500ms;
                c.ttl = b_ttl;
              })
      .pause("B", 1s, 7s)
      .run();
}

TEST(EtcdClientTtl, AClientsOwnTtlIsTheLeaseItIsGranted) {
  // With its own 5 s lease, B's lease (and key) ends at the service during
  // its 7 s freeze; with the lock's 20 s, it survives it.
  for (std::optional<Duration> ttl : {std::optional<Duration>{5s}, std::optional<Duration>{}}) {
    const RunResult r = frozen_waiter(ttl);
    bool b_lease_ended_while_frozen = false;
    for (const auto& [value, end] : r.history.lease_ends) {
      if (end.at > sim::Time{1s} && end.at < sim::Time{8s} && value.rfind("lock/", 0) == 0) {
        b_lease_ended_while_frozen = true;
      }
    }
    EXPECT_EQ(b_lease_ended_while_frozen, ttl.has_value());
  }
}

}  // namespace
}  // namespace fencesim::testing
