// tests/models/redis/redis_harness.hpp — a small world around the Redis
// lease service alone: a sim::Simulation with redis-0 …, sentinel-0 … and
// one `tester` node that sends redis::Command payloads and looks at the
// replies and at the servers' state. For the stories a whole world tells
// better (clients, resource, properties), use the ScenarioBuilder instead.
//
//   RedisHarness h(spec_with(/*replicas=*/1, /*sentinels=*/0), 10s);
//   std::optional<Reply> got;
//   h.at(0s, [&](sim::Process& p) { got = h.send(p, 0, h.acquire("v1")); });
//   h.observe(5s, [&] { h.sim.clock_jump(h.servers[0], sim::ClockKind::kWall, 10s); });
//   h.run(20s);
//   EXPECT_EQ(got->integer, 1);  // the first token
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/history.hpp"
#include "models/redis/protocol.hpp"
#include "models/redis/redis.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace sim {
// Readable times in gtest messages ("3.001s" rather than bytes).
inline void PrintTo(Duration d, std::ostream* os) { *os << format_duration(d); }
}  // namespace sim

namespace fencesim::testing {

using redis::Command;
using redis::Op;
using redis::Reply;
using namespace std::chrono_literals;

/// The lock key and the token counter of the scenarios these tests build.
inline const std::string kKey = "lock";
inline const std::string kCounter = "lock:token";

inline RedisSpec spec_with(int replicas, int sentinels) {
  RedisSpec s;
  s.replicas = replicas;
  s.sentinels = sentinels;
  return s;
}

/// The tester node's behaviour: keeps every message that is not a reply
/// (Sentinel's +switch-master announcements).
class Inbox final : public sim::NodeBehaviour {
 public:
  void on_message(const sim::Message& m) override {
    if (const auto* sw = m.as<redis::SwitchPrimary>()) switches.push_back(*sw);
  }
  std::vector<redis::SwitchPrimary> switches;
};

class RedisHarness {
 public:
  explicit RedisHarness(const RedisSpec& spec, Duration ttl = 10s, std::uint64_t seed = 1) : sim(seed) {
    sc.name = "redis-harness";
    sc.seed = seed;
    sc.lock.set_service(ServiceKind::kRedis);
    sc.lock.ttl = sc.lock.requested_ttl = ttl;
    sc.lock.redis() = spec;
    const int n = spec.redlock > 0 ? spec.redlock : 1 + spec.replicas;
    for (int i = 0; i < n; ++i) servers.push_back(sim.add_node("redis-" + std::to_string(i)).id());
    for (int i = 0; i < spec.sentinels; ++i) sentinels.push_back(sim.add_node("sentinel-" + std::to_string(i)).id());
    tester = sim.add_node("tester").id();
    sim.node(tester).set_behaviour(&inbox);
    svc = std::make_unique<redis::RedisService>(sim, history, sc, servers, sentinels, std::vector<sim::NodeId>{tester});
    svc->start();
  }

  /// Runs `body` as a process on the tester node from true time `t`.
  void at(Time t, std::function<void(sim::Process&)> body) {
    sim.at(t, [this, body = std::move(body)] { sim.node(tester).spawn("tester", body); });
  }
  /// An observer step at true time `t`, before the other events of that
  /// instant (faults, inspections of state).
  void observe(Time t, std::function<void()> fn) { sim.at(t, std::move(fn), sim::EventClass::kFault); }
  void run(Time end) { sim.run_until(end); }

  redis::RedisServer& server(int i) { return svc->server(servers.at(static_cast<std::size_t>(i))); }
  const redis::Entry* entry(int i, const std::string& key) {
    const auto& d = server(i).data();
    auto it = d.find(key);
    return it == d.end() ? nullptr : &it->second;
  }
  std::string name(sim::NodeId n) const { return sim.node(n).name(); }
  /// The integer a server stores under `key` (the token counter), if any.
  std::optional<std::int64_t> integer_at(int i, const std::string& key) {
    const redis::Entry* e = entry(i, key);
    if (e == nullptr) return std::nullopt;
    return integer_of(*e);
  }
  /// Works whether an Entry keeps integers apart (is_int/integer) or, as
  /// Redis does, as decimal strings.
  template <class E>
  static std::optional<std::int64_t> integer_of(const E& e) {
    if constexpr (requires(const E& x) {
                    x.is_int;
                    x.integer;
                  }) {
      return e.is_int ? std::optional<std::int64_t>(e.integer) : std::nullopt;
    } else {
      try {
        std::size_t used = 0;
        const long long v = std::stoll(e.value, &used);
        return used == e.value.size() ? std::optional<std::int64_t>(v) : std::nullopt;
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }

  // --- commands ------------------------------------------------------------
  std::shared_ptr<Command> acquire(const std::string& value, bool with_token = true) const {
    return command(Op::kAcquire, value, with_token);
  }
  std::shared_ptr<Command> renew(const std::string& value) const { return command(Op::kRenew, value); }
  std::shared_ptr<Command> release(const std::string& value) const { return command(Op::kRelease, value); }
  std::shared_ptr<Command> get(const std::string& key) const {
    auto c = command(Op::kGet, "");
    c->key = key;
    return c;
  }
  std::shared_ptr<Command> command(Op op, const std::string& value, bool with_token = false) const {
    auto c = std::make_shared<Command>();
    c->op = op;
    c->key = sc.lock.key;
    c->value = value;
    c->ttl = sc.lock.ttl;
    c->with_token = with_token;
    c->counter_key = svc->counter_key();
    return c;
  }

  /// Sends `cmd` to server `i` and waits up to `timeout` for its reply.
  std::optional<Reply> send(sim::Process& p, int i, std::shared_ptr<Command> cmd, Duration timeout = 1s) {
    auto m = p.call(servers.at(static_cast<std::size_t>(i)), std::move(cmd), timeout);
    const Reply* r = m ? m->as<Reply>() : nullptr;
    return r ? std::optional<Reply>(*r) : std::nullopt;
  }

  /// The grant the service recorded for `value`, if any.
  const GrantRecord* grant_of(const std::string& value) const {
    for (const GrantRecord& g : history.grants) {
      if (g.value == value) return &g;
    }
    return nullptr;
  }
  std::optional<LeaseEndRecord> lease_end_of(const std::string& value) const {
    auto it = history.lease_ends.find(value);
    return it == history.lease_ends.end() ? std::nullopt : std::optional<LeaseEndRecord>(it->second);
  }
  bool noted(const std::string& node, const std::string& kind) const {
    for (const NoteRecord& n : history.notes) {
      if (n.node == node && n.kind == kind) return true;
    }
    return false;
  }

  // Members in destruction order as in models/world.cpp: the service goes
  // before the simulation and its fibers.
  sim::Simulation sim;
  Inbox inbox;
  History history;
  Scenario sc;
  std::vector<sim::NodeId> servers;
  std::vector<sim::NodeId> sentinels;
  sim::NodeId tester = sim::kNoNode;
  std::unique_ptr<redis::RedisService> svc;
};

}  // namespace fencesim::testing
