// tests/models/scenario_builder.hpp — a fluent helper that builds a
// Scenario in a few lines, so a test reads like the story it checks:
//
//   auto r = ScenarioBuilder("worked-example")
//                .duration(60s)
//                .redis(10s)                       // single primary, no replicas
//                .fenced(FenceCheck::kStrict, /*fence_reads=*/false, /*initial=*/1000)
//                .client("A", allocator(100, 500ms))
//                .client("B", allocator(100, 500ms), [](ClientSpec& c) { c.start = 2s; })
//                .pause("A", 200ms, 12s)
//                .run();
//   EXPECT_EQ(status(r, Property::kNoStaleWrite), Status::kHolds);
//
// Defaults are the format's (the loader's); renew_interval defaults to ttl/3.
//
// etcd, as the loader resolves it (SCENARIO_FORMAT.md "etcd semantics"):
//
//   ScenarioBuilder("leader-crash").duration(40s)
//       .etcd(3s)                                   // 3 members, TTL 3 s
//       .etcd_spec([](EtcdSpec& e) { e.keepalive_checks_leadership = true; })
//       .fenced()
//       .client("A", counter(5s))
//       .crash("etcd-leader", 2s, 3s)
//       .run();
//
// The TTL must be a whole number of seconds (std::invalid_argument
// otherwise, where the loader exits 2); build() raises it to
// ceil(1.5 × election_timeout) seconds with a note, as etcd does, and sets
// lock.ttl to the TTL in effect and each client's default renew_interval to
// a third of it.
#pragma once

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/checkers/checkers.hpp"
#include "models/scenario.hpp"
#include "models/world.hpp"

namespace fencesim::testing {

inline WorkloadSpec allocator(std::int64_t block, Duration work, int iterations = 1, Duration think = 1s) {
  return WorkloadSpec{WorkloadKind::kSequenceAllocator, block, work, iterations, think};
}
inline WorkloadSpec counter(Duration work, int iterations = 1, Duration think = 1s) {
  return WorkloadSpec{WorkloadKind::kCounter, 100, work, iterations, think};
}
inline WorkloadSpec writer(Duration work, int iterations = 1, Duration think = 1s) {
  return WorkloadSpec{WorkloadKind::kWriter, 100, work, iterations, think};
}

class ScenarioBuilder {
 public:
  explicit ScenarioBuilder(std::string name) {
    s_.name = std::move(name);
    s_.lock.service = ServiceKind::kRedis;
    s_.lock.redis.replicas = 0;
    s_.lock.redis.sentinels = 0;
    s_.resource.kind = ResourceKind::kUnfenced;
  }

  ScenarioBuilder& seed(std::uint64_t v) {
    return set([&] { s_.seed = v; });
  }
  ScenarioBuilder& duration(Duration d) {
    return set([&] { s_.duration = d; });
  }
  ScenarioBuilder& settle(Duration d) {
    return set([&] { s_.settle = d; });
  }
  ScenarioBuilder& latency(Duration lo, Duration hi) {
    return set([&] { s_.network.latency_min = lo, s_.network.latency_max = hi; });
  }

  /// Redis with a single primary (and optionally replicas and sentinels).
  ScenarioBuilder& redis(Duration ttl, int replicas = 0, int sentinels = 0) {
    return set([&] {
      s_.lock.service = ServiceKind::kRedis;
      s_.lock.ttl = s_.lock.requested_ttl = ttl;
      s_.lock.redis.replicas = replicas;
      s_.lock.redis.sentinels = sentinels;
    });
  }
  ScenarioBuilder& redis_spec(const std::function<void(RedisSpec&)>& f) {
    return set([&] { f(s_.lock.redis); });
  }
  ScenarioBuilder& redlock(int primaries, Duration ttl) {
    return set([&] {
      s_.lock.service = ServiceKind::kRedis;
      s_.lock.ttl = s_.lock.requested_ttl = ttl;
      s_.lock.redis = RedisSpec{};
      s_.lock.redis.redlock = primaries;
      s_.lock.redis.replicas = 0;
      s_.lock.redis.sentinels = 0;
      s_.lock.redis.token = RedisToken::kNone;
    });
  }
  /// etcd with `nodes` members (odd) and a lease TTL of whole seconds.
  ScenarioBuilder& etcd(Duration ttl, int nodes = 3) {
    return set([&] {
      s_.lock.service = ServiceKind::kEtcd;
      s_.lock.ttl = s_.lock.requested_ttl = ttl;
      s_.lock.etcd.nodes = nodes;
    });
  }
  ScenarioBuilder& etcd_spec(const std::function<void(EtcdSpec&)>& f) {
    return set([&] { f(s_.lock.etcd); });
  }
  ScenarioBuilder& no_lock() {
    return set([&] { s_.lock.service = ServiceKind::kNone; });
  }

  ScenarioBuilder& unfenced(std::int64_t initial = 0) {
    return set([&] { s_.resource.kind = ResourceKind::kUnfenced, s_.resource.initial = initial; });
  }
  ScenarioBuilder& fenced(FenceCheck check = FenceCheck::kStrict, bool fence_reads = false, std::int64_t initial = 0) {
    return set([&] {
      s_.resource.kind = ResourceKind::kFenced;
      s_.resource.check = check;
      s_.resource.fence_reads = fence_reads;
      s_.resource.initial = initial;
    });
  }
  ScenarioBuilder& cas(std::int64_t initial = 0) {
    return set([&] { s_.resource.kind = ResourceKind::kCas, s_.resource.initial = initial; });
  }
  ScenarioBuilder& resource_copies(int replicas, Duration delay) {
    return set([&] { s_.resource.replicas = replicas, s_.resource.replication_delay = delay; });
  }

  ScenarioBuilder& client(std::string name, WorkloadSpec w, const std::function<void(ClientSpec&)>& tweak = {}) {
    ClientSpec c;
    c.name = std::move(name);
    c.workload = w;
    if (tweak) tweak(c);
    clients_.push_back(c);
    return *this;
  }

  ScenarioBuilder& fault(FaultSpec f) {
    f.origin = "faults[" + std::to_string(s_.faults.size()) + "]";
    s_.faults.push_back(std::move(f));
    return *this;
  }
  ScenarioBuilder& pause(std::string target, Duration at, Duration d) {
    FaultSpec f;
    f.kind = FaultKind::kPause, f.target = std::move(target), f.at = at, f.duration = d;
    return fault(f);
  }
  ScenarioBuilder& clock_jump(std::string target, Duration at, Duration by, ClockSelect c = ClockSelect::kWall) {
    FaultSpec f;
    f.kind = FaultKind::kClockJump, f.target = std::move(target), f.at = at, f.by = by, f.clock = c;
    return fault(f);
  }
  ScenarioBuilder& drift(std::string target, Duration at, std::int64_t ppm) {
    FaultSpec f;
    f.kind = FaultKind::kClockDrift, f.target = std::move(target), f.at = at, f.ppm = ppm;
    return fault(f);
  }
  ScenarioBuilder& crash(std::string target, Duration at, std::optional<Duration> restart_after = std::nullopt) {
    FaultSpec f;
    f.kind = FaultKind::kCrash, f.target = std::move(target), f.at = at, f.restart_after = restart_after;
    return fault(f);
  }
  ScenarioBuilder& failover(Duration at) {
    FaultSpec f;
    f.kind = FaultKind::kFailover, f.target = "redis", f.at = at;
    return fault(f);
  }
  ScenarioBuilder& counter_reset(std::string target, Duration at, std::int64_t value) {
    FaultSpec f;
    f.kind = FaultKind::kCounterReset, f.target = std::move(target), f.at = at, f.value = value;
    return fault(f);
  }
  ScenarioBuilder& slow(std::string target, Duration at, Duration delay, Duration d) {
    FaultSpec f;
    f.kind = FaultKind::kSlow, f.target = std::move(target), f.at = at, f.delay = delay, f.duration = d;
    return fault(f);
  }
  ScenarioBuilder& partition(Duration at, std::vector<std::vector<std::string>> groups,
                             std::optional<Duration> d = std::nullopt, bool one_way = false) {
    FaultSpec f;
    f.kind = FaultKind::kPartition, f.at = at, f.groups = std::move(groups), f.duration = d, f.one_way = one_way;
    return fault(f);
  }
  ScenarioBuilder& isolate(Duration at, std::vector<std::string> nodes, std::optional<Duration> d = std::nullopt,
                           bool one_way = false) {
    FaultSpec f;
    f.kind = FaultKind::kPartition, f.at = at, f.isolate = std::move(nodes), f.duration = d, f.one_way = one_way;
    return fault(f);
  }
  ScenarioBuilder& heal(Duration at) {
    FaultSpec f;
    f.kind = FaultKind::kHeal, f.at = at;
    return fault(f);
  }
  ScenarioBuilder& nemesis(NemesisSpec n) {
    return set([&] { s_.nemesis = std::move(n); });
  }
  ScenarioBuilder& expect(Property p, Expectation e) {
    return set([&] { s_.expect[p] = e; });
  }

  Scenario build() const {
    Scenario s = s_;
    s.clients = clients_;
    if (s.lock.service == ServiceKind::kEtcd) resolve_etcd_ttl(s);
    for (ClientSpec& c : s.clients) {
      if (c.renew_interval == Duration{0}) c.renew_interval = s.lock.ttl / 3;
    }
    return s;
  }
  RunResult run(const RunOptions& opt = {}) const { return run_scenario(build(), opt); }

 private:
  // The loader's rule (loader/loader.cpp load_etcd; etcd lessor.go minLeaseTTL):
  // whole seconds, raised to ceil(1.5 × election_timeout) seconds.
  static void resolve_etcd_ttl(Scenario& s) {
    const Duration asked = s.lock.requested_ttl;
    if (asked % std::chrono::seconds(1) != Duration::zero()) {
      throw std::invalid_argument("an etcd lease TTL must be a whole number of seconds, got " +
                                  sim::format_duration(asked));
    }
    const std::int64_t et_ns = s.lock.etcd.election_timeout.count();
    const Duration min_ttl = std::chrono::seconds((3 * et_ns + 2'000'000'000 - 1) / 2'000'000'000);
    s.lock.ttl = std::max(asked, min_ttl);
    if (s.lock.ttl != asked) {
      s.notes.push_back("lock.ttl raised from " + sim::format_duration(asked) + " to " +
                        sim::format_duration(s.lock.ttl) +
                        ": etcd grants a lease at least ceil(1.5 × election_timeout)");
    }
  }
  template <class F>
  ScenarioBuilder& set(F f) {
    f();
    return *this;
  }
  Scenario s_;
  std::vector<ClientSpec> clients_;
};

inline const Verdict& verdict_of(const RunResult& r, Property p) {
  for (const Verdict& v : r.verdicts) {
    if (v.property == p) return v;
  }
  throw std::out_of_range("no verdict");
}
inline Status status(const RunResult& r, Property p) { return verdict_of(r, p).status; }

}  // namespace fencesim::testing
