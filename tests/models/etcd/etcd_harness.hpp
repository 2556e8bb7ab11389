// tests/models/etcd/etcd_harness.hpp — a small world around the etcd-like
// service alone: a sim::Simulation with etcd-0 … etcd-{n-1} and a few
// `tester-k` nodes that send etcd::Request payloads and look at the replies,
// at the watch events pushed to them and at the members' state (revision,
// keys, leases, the leader's lessor deadlines). For the stories a whole world
// tells better (sessions, the Mutex, the resource, properties), use the
// ScenarioBuilder instead.
//
//   EtcdHarness h;                                   // 3 members, TTL 3 s
//   std::optional<Response> grant;
//   h.at(0s, [&](sim::Process& p) { grant = h.call(p, 0, h.grant()); });
//   h.run(1s);
//   EXPECT_EQ(grant->ttl, 3s);
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "models/etcd/etcd.hpp"
#include "models/etcd/raft/safety.hpp"
#include "models/history.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace sim {
// Readable times in gtest messages ("3.001s" rather than bytes).
inline void PrintTo(Duration d, std::ostream* os) { *os << format_duration(d); }
}  // namespace sim

namespace fencesim::testing {

using etcd::KeyValue;
using etcd::LeaseId;
using etcd::ReqKind;
using etcd::Request;
using etcd::Response;
using namespace std::chrono_literals;

/// A tester node's behaviour: keeps the watch events pushed to it, with the
/// true time each arrived.
class WatchInbox final : public sim::NodeBehaviour {
 public:
  explicit WatchInbox(sim::Simulation& s) : sim_(s) {}
  void on_message(const sim::Message& m) override {
    if (const auto* ev = m.as<etcd::WatchEvent>()) events.push_back({sim_.now(), *ev});
  }
  struct Received {
    Time at{0};
    etcd::WatchEvent event;
  };
  std::vector<Received> events;

 private:
  sim::Simulation& sim_;
};

class EtcdHarness {
 public:
  explicit EtcdHarness(int nodes = 3, Duration ttl = 3s, const std::function<void(EtcdSpec&)>& tweak = {},
                       int testers = 2, std::uint64_t seed = 1)
      : sim(seed) {
    sc.name = "etcd-harness";
    sc.seed = seed;
    sc.lock.set_service(ServiceKind::kEtcd);
    sc.lock.ttl = sc.lock.requested_ttl = ttl;
    sc.lock.etcd().nodes = nodes;
    if (tweak) tweak(sc.lock.etcd());
    for (int i = 0; i < nodes; ++i) members.push_back(sim.add_node("etcd-" + std::to_string(i)).id());
    for (int k = 0; k < testers; ++k) {
      testers_.push_back(sim.add_node("tester-" + std::to_string(k)).id());
      inboxes.push_back(std::make_unique<WatchInbox>(sim));
      sim.node(testers_.back()).set_behaviour(inboxes.back().get());
    }
    svc = std::make_unique<etcd::EtcdService>(sim, history, sc, members);
    svc->start();
  }

  /// Runs `body` as a process on tester `k` from true time `t`.
  void at(Time t, std::function<void(sim::Process&)> body, int k = 0) {
    const sim::NodeId node = testers_.at(static_cast<std::size_t>(k));
    sim.at(t, [this, node, body = std::move(body)] { sim.node(node).spawn("tester", body); });
  }
  /// An observer step at true time `t`, before the other events of that
  /// instant (faults, inspections of state).
  void observe(Time t, std::function<void()> fn) { sim.at(t, std::move(fn), sim::EventClass::kFault); }
  void run(Time end) { sim.run_until(end); }

  etcd::EtcdMember& member(int i) { return svc->member(static_cast<std::size_t>(i)); }
  sim::NodeId tester(int k) const { return testers_.at(static_cast<std::size_t>(k)); }
  /// Index of the member that leads the highest term now, or -1.
  int leader() const {
    const auto id = svc->leader();
    if (!id) return -1;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (members[i] == *id) return static_cast<int>(i);
    }
    return -1;
  }
  /// Cuts member `i` (and any extra nodes) off from everybody else.
  std::uint64_t isolate(std::vector<sim::NodeId> nodes) {
    sim::Partition p;
    p.isolate = std::move(nodes);
    return sim.add_partition(std::move(p));
  }

  // --- requests --------------------------------------------------------------
  static std::shared_ptr<Request> req(ReqKind k) {
    auto r = std::make_shared<Request>();
    r->kind = k;
    return r;
  }
  std::shared_ptr<Request> grant() const { return grant(sc.lock.ttl); }
  static std::shared_ptr<Request> grant(Duration ttl) {
    auto r = req(ReqKind::kLeaseGrant);
    r->ttl = ttl;
    return r;
  }
  static std::shared_ptr<Request> keepalive(LeaseId lease) {
    auto r = req(ReqKind::kKeepAlive);
    r->lease = lease;
    return r;
  }
  static std::shared_ptr<Request> revoke(LeaseId lease) {
    auto r = req(ReqKind::kLeaseRevoke);
    r->lease = lease;
    return r;
  }
  /// concurrency.Mutex tryAcquire for `prefix/<lease id in hex>` (the key
  /// etcd's client makes; `key` overrides it).
  static std::shared_ptr<Request> lock(LeaseId lease, const std::string& prefix = "lock/", std::string key = {}) {
    auto r = req(ReqKind::kLockTxn);
    r->lease = lease;
    r->prefix = prefix;
    r->key = key.empty() ? mutex_key(prefix, lease) : std::move(key);
    return r;
  }
  static std::string mutex_key(const std::string& prefix, LeaseId lease) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(lease));
    return prefix + buf;
  }
  static std::shared_ptr<Request> last_created(const std::string& prefix, std::int64_t max_create_revision) {
    auto r = req(ReqKind::kLastCreated);
    r->prefix = prefix;
    r->revision = max_create_revision;
    return r;
  }
  static std::shared_ptr<Request> get(const std::string& key) {
    auto r = req(ReqKind::kGet);
    r->key = key;
    return r;
  }
  static std::shared_ptr<Request> del(const std::string& key) {
    auto r = req(ReqKind::kDelete);
    r->key = key;
    return r;
  }
  static std::shared_ptr<Request> watch(const std::string& key, std::int64_t from, std::uint64_t id) {
    auto r = req(ReqKind::kWatch);
    r->key = key;
    r->revision = from;
    r->watch_id = id;
    return r;
  }

  /// Sends `r` to member `i` and waits up to `timeout` for the answer.
  std::optional<Response> call(sim::Process& p, int i, std::shared_ptr<Request> r, Duration timeout = 1s) {
    auto m = p.call(members.at(static_cast<std::size_t>(i)), std::move(r), timeout);
    const Response* resp = m ? m->as<Response>() : nullptr;
    return resp ? std::optional<Response>(*resp) : std::nullopt;
  }
  /// Sends without waiting (watches are not answered).
  void send(sim::Process& p, int i, std::shared_ptr<Request> r) {
    p.node().send(members.at(static_cast<std::size_t>(i)), std::move(r));
  }

  /// Every member's revision, in member order.
  std::vector<std::int64_t> revisions() {
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < members.size(); ++i) out.push_back(svc->member(i).revision());
    return out;
  }
  const KeyValue* key(int i, const std::string& k) {
    const auto& keys = member(i).keys();
    auto it = keys.find(k);
    return it == keys.end() ? nullptr : &it->second;
  }
  raft::SafetyVerdict raft_safety() const { return raft::check_raft_safety(svc->raft_history()); }

  // Members in destruction order as in models/world.cpp: the service goes
  // before the simulation and its fibers.
  sim::Simulation sim;
  History history;
  Scenario sc;
  std::vector<sim::NodeId> members;
  std::vector<std::unique_ptr<WatchInbox>> inboxes;
  std::unique_ptr<etcd::EtcdService> svc;

 private:
  std::vector<sim::NodeId> testers_;
};

}  // namespace fencesim::testing
