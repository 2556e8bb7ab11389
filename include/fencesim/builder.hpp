// fencesim/builder.hpp — build a Scenario in code, fluently, resolved as the
// loader resolves a file and checked by the same rules (models/validate.hpp).
//
//   #include <fencesim/builder.hpp>
//   using namespace std::chrono_literals;
//   using namespace fencesim::workloads;              // allocator, counter, writer
//
//   fencesim::RunResult r = fencesim::ScenarioBuilder("worked-example")
//       .duration(60s)
//       .redis(10s)                                   // single primary, no replicas
//       .fenced(fencesim::FenceCheck::kStrict, /*fence_reads=*/false, /*initial=*/1000)
//       .client("A", allocator(100, 500ms))
//       .client("B", allocator(100, 500ms), [](fencesim::ClientSpec& c) { c.start = 2s; })
//       .pause("A", 200ms, 12s)                       // target, at, duration
//       .run();
//
// Lock services: redis(), redlock(), etcd(), queue() (the work queue),
// table() (the lock table) and no_lock(); docs/API.md "Scenarios in code".
//
// Defaults are the format's (docs/FORMAT.md) except three, which make the
// smallest design the starting point: lock service "redis" with no replicas
// and no Sentinel, and an "unfenced" resource. Every time is a sim::Duration
// (std::chrono nanoseconds; write 10s, 250ms). Faults get the origin
// "faults[i]" in the order they are added, so reports and errors name them
// as a file would.
//
// Resolution (build()): lock.ttl is the requested TTL — for etcd raised to
// ceil(1.5 × election_timeout) whole seconds with a note, as etcd does — and
// a client's renew_interval left alone is a third of that TTL; the notes of
// docs/FORMAT.md "Notes" are added to Scenario::notes.
//
// Errors: build() does not check; validate() returns the first rule the
// scenario breaks (e.g. path "clients[0].renew_interval", message "must be
// greater than zero, got \"0s\""), and run() — run_scenario — throws
// InvalidScenario with it. A builder is a value: each call changes it and
// returns it; build() can be called any number of times.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/faults.hpp"
#include "models/policy.hpp"
#include "models/scenario.hpp"
#include "models/validate.hpp"
#include "models/world.hpp"

namespace fencesim {

/// Workloads for ScenarioBuilder::client (docs/FORMAT.md "Workloads").
namespace detail {
/// A WorkloadSpec with every other field at its default (retries, ranges).
inline WorkloadSpec workload(WorkloadKind kind, std::int64_t block, Duration work, int iterations, Duration think) {
  WorkloadSpec w;
  w.kind = kind;
  w.block = block;
  w.work = work;
  w.iterations = iterations;
  w.think = think;
  return w;
}
}  // namespace detail

namespace workloads {
/// sequence_allocator: acquire, read the counter, `work`, write counter + block, release; `think` between iterations.
inline WorkloadSpec allocator(std::int64_t block, Duration work, int iterations = 1, Duration think = 1s) {
  return detail::workload(WorkloadKind::kSequenceAllocator, block, work, iterations, think);
}
/// counter: each iteration increments the counter by one (read, `work`, write).
inline WorkloadSpec counter(Duration work, int iterations = 1, Duration think = 1s) {
  return detail::workload(WorkloadKind::kCounter, 100, work, iterations, think);
}
/// writer: each iteration reads the version v and writes v + 1 tagged with the client name.
inline WorkloadSpec writer(Duration work, int iterations = 1, Duration think = 1s) {
  return detail::workload(WorkloadKind::kWriter, 100, work, iterations, think);
}
/// queue_worker (the queue design): receive a message, `work`, apply its
/// effect at the resource's ledger, delete it; `think` between iterations.
inline WorkloadSpec queue_worker(Duration work, int iterations = 1, Duration think = 1s) {
  return detail::workload(WorkloadKind::kQueueWorker, 100, work, iterations, think);
}
/// leader: acquire once, then read and write the counter every `work` while
/// the client believes it holds the lock, re-acquiring after a loss;
/// `iterations` writes in all.
inline WorkloadSpec leader(Duration work, int iterations = 1, Duration think = 1s) {
  return detail::workload(WorkloadKind::kLeader, 100, work, iterations, think);
}
}  // namespace workloads

class ScenarioBuilder {
 public:
  explicit ScenarioBuilder(std::string name) {
    s_.name = std::move(name);
    s_.lock.use<RedisSpec>();
    s_.lock.redis().replicas = 0;
    s_.lock.redis().sentinels = 0;
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
      s_.lock.use<RedisSpec>();
      s_.lock.requested_ttl = ttl;
      s_.lock.redis().replicas = replicas;
      s_.lock.redis().sentinels = sentinels;
    });
  }
  /// Changes the Redis settings; after a verb of another service (etcd(),
  /// queue(), …) it throws std::logic_error: call redis() first.
  ScenarioBuilder& redis_spec(const std::function<void(RedisSpec&)>& f) {
    return set([&] { f(s_.lock.redis()); });
  }
  ScenarioBuilder& redlock(int primaries, Duration ttl) {
    return set([&] {
      s_.lock.use<RedisSpec>();
      s_.lock.requested_ttl = ttl;
      s_.lock.redis() = RedisSpec{};
      s_.lock.redis().redlock = primaries;
      s_.lock.redis().replicas = 0;
      s_.lock.redis().sentinels = 0;
      s_.lock.redis().token = RedisToken::kNone;
    });
  }
  /// etcd with `nodes` members (odd) and a lease TTL of whole seconds.
  ScenarioBuilder& etcd(Duration ttl, int nodes = 3) {
    return set([&] {
      s_.lock.use<EtcdSpec>();
      s_.lock.requested_ttl = ttl;
      s_.lock.etcd().nodes = nodes;
    });
  }
  /// Changes the etcd settings; throws std::logic_error unless etcd() was
  /// called first.
  ScenarioBuilder& etcd_spec(const std::function<void(EtcdSpec&)>& f) {
    return set([&] { f(s_.lock.etcd()); });
  }
  /// A work queue with visibility timeouts (`lock.service: "queue"`,
  /// docs/FORMAT.md "Work queue"; models/queue/queue.hpp): `messages`
  /// (1 … 100,000, the rule in models/queue/queue.cpp) enqueued at time 0, each received message invisible
  /// for `visibility_timeout` on the queue's wall clock. The design's lease
  /// TTL is the visibility timeout, as the loader makes it. `tweak` may set
  /// `fifo` and `max_receives` (0: no dead-letter queue). Its workers run
  /// workloads::queue_worker and its resource is a ledger: unfenced(),
  /// fenced() (by receive count), idempotent(), or fenced() with
  /// idempotent(true) on top.
  ScenarioBuilder& queue(Duration visibility_timeout, int messages, const std::function<void(QueueSpec&)>& tweak = {}) {
    return set([&] {
      s_.lock.use<QueueSpec>();
      s_.lock.queue() = QueueSpec{};
      s_.lock.queue().visibility_timeout = visibility_timeout;
      s_.lock.queue().messages = messages;
      if (tweak) tweak(s_.lock.queue());
      s_.lock.ttl = s_.lock.requested_ttl = s_.lock.queue().visibility_timeout;
    });
  }
  /// A lock table in one durable database node `db` (`lock.service:
  /// "table"`, docs/FORMAT.md "Lock table"; models/table/table.hpp):
  /// `expiry` kHolderClock (ShedLock's default), kDbClock (ShedLock's
  /// usingDbTime()) or kObserved (client-go leader election, the DynamoDB
  /// lock client: `ttl` is the LeaseDuration, each client's renew_interval
  /// the RetryPeriod and its lease_loss_after — required — the
  /// RenewDeadline). `tweak` may set `token` (TableToken::kVersion: the
  /// record's version is the fencing token) and `lock_delay` (not with
  /// kObserved).
  ScenarioBuilder& table(TableExpiry expiry, Duration ttl, const std::function<void(TableSpec&)>& tweak = {}) {
    return set([&] {
      s_.lock.use<TableSpec>();
      s_.lock.requested_ttl = ttl;
      s_.lock.table() = TableSpec{};
      s_.lock.table().expiry = expiry;
      if (tweak) tweak(s_.lock.table());
    });
  }
  /// ZooKeeper (`lock.service: "zookeeper"`, docs/FORMAT.md "ZooKeeper";
  /// models/zookeeper/zookeeper.hpp): clients ask `session_timeout`, which
  /// the servers negotiate into [min, max]_session_timeout (resolve_scenario
  /// gives lock.ttl that); `tweak` sets the ensemble (nodes, tick_time,
  /// token, …). Clients choose Curator (the default) or kazoo with
  /// ClientSpec::library, and a connection_policy.
  ScenarioBuilder& zookeeper(Duration session_timeout, const std::function<void(ZooKeeperSpec&)>& tweak = {}) {
    return set([&] {
      s_.lock.use<ZooKeeperSpec>();
      s_.lock.requested_ttl = session_timeout;
      s_.lock.zookeeper() = ZooKeeperSpec{};
      if (tweak) tweak(s_.lock.zookeeper());
    });
  }
  /// Hazelcast (`lock.service: "hazelcast"`, docs/FORMAT.md "Hazelcast";
  /// models/hazelcast/hazelcast.hpp): a CP group running FencedLock whose
  /// CP sessions live `session_ttl` (whole seconds; Hazelcast's default is
  /// 300 s); `tweak` sets the rest (cp_member_count, the heartbeat
  /// interval, the lock-acquire-limit, the token, Raft's timing).
  ScenarioBuilder& hazelcast(Duration session_ttl, const std::function<void(HazelcastSpec&)>& tweak = {}) {
    return set([&] {
      s_.lock.use<HazelcastSpec>();
      s_.lock.requested_ttl = session_ttl;
      s_.lock.hazelcast() = HazelcastSpec{};
      if (tweak) tweak(s_.lock.hazelcast());
    });
  }
  /// More than one lock (docs/FORMAT.md "More than one lock"): `key` is
  /// lock.key, the lock of every client whose ClientSpec::lock names none,
  /// and `further` is lock.keys. A client takes another lock by its tweak:
  ///   .locks("row-1", {"row-2"})
  ///   .client("C", writer(500ms), [](fencesim::ClientSpec& c) { c.lock = "row-2"; })
  /// Each lock has its own lock record (Redis: its own key, and its own
  /// token counter "<key>:token" — lock.key's stays redis.counter_key when
  /// set; etcd: its own mutex prefix "<key>/", with revisions shared by all)
  /// and its own row of the register. Redis without cluster or Redlock, and
  /// etcd, only: validate() refuses the others at "lock.keys", and a
  /// client's lock that is not one of these at "clients[i].lock".
  ScenarioBuilder& locks(std::string key, std::vector<std::string> further) {
    return set([&] {
      s_.lock.key = std::move(key);
      s_.lock.keys = std::move(further);
    });
  }
  ScenarioBuilder& no_lock() {
    return set([&] { s_.lock.use<std::monostate>(); });
  }

  ScenarioBuilder& unfenced(std::int64_t initial = 0) {
    return set([&] {
      s_.resource.kind = ResourceKind::kUnfenced, s_.resource.initial = initial;
      s_.resource.custom_check = nullptr;
    });
  }
  ScenarioBuilder& fenced(FenceCheck check = FenceCheck::kStrict, bool fence_reads = false, std::int64_t initial = 0) {
    return set([&] {
      s_.resource.kind = ResourceKind::kFenced;
      s_.resource.check = check;
      s_.resource.fence_reads = fence_reads;
      s_.resource.initial = initial;
      s_.resource.custom_check = nullptr;
    });
  }
  ScenarioBuilder& cas(std::int64_t initial = 0) {
    return set([&] {
      s_.resource.kind = ResourceKind::kCas, s_.resource.initial = initial;
      s_.resource.custom_check = nullptr;
    });
  }
  /// The queue design's idempotent ledger (`"kind": "idempotent"`): it
  /// applies the first effect of each message id. With `on_fenced` true it
  /// is instead added to the fenced() ledger chosen before
  /// (`"kind": "fenced", "idempotent": true`).
  ScenarioBuilder& idempotent(bool on_fenced = false) {
    return set([&] {
      s_.resource.custom_check = nullptr;
      if (on_fenced) {
        s_.resource.idempotent = true;
      } else {
        s_.resource.kind = ResourceKind::kIdempotent;
        s_.resource.idempotent = false;
      }
    });
  }
  /// A storage rule of your own (fencesim/policy.hpp): every copy of the
  /// resource decides reads and writes with `check`; reports name it by
  /// check->name(). Replaces unfenced/fenced/cas (a later one of those
  /// clears it). Not nullptr.
  ScenarioBuilder& resource_check(std::shared_ptr<const ResourceCheck> check) {
    return set([&] { s_.resource.custom_check = std::move(check); });
  }
  ScenarioBuilder& resource_copies(int replicas, Duration delay) {
    return set([&] { s_.resource.replicas = replicas, s_.resource.replication_delay = delay; });
  }

  /// A client; `tweak` may change any setting. renew_interval left alone
  /// resolves to a third of the TTL in effect.
  ScenarioBuilder& client(std::string name, WorkloadSpec w, const std::function<void(ClientSpec&)>& tweak = {}) {
    ClientSpec c;
    c.name = std::move(name);
    c.workload = w;
    c.renew_interval = kResolveRenewInterval;
    if (tweak) tweak(c);
    clients_.push_back(c);
    return *this;
  }

  /// A client whose lock library decides by `policy` (fencesim/policy.hpp)
  /// when to renew, what to do before a write and on a failed renewal;
  /// reports name it by policy->name(). The knobs it replaces (renew_clock,
  /// check_lease_before_write, on_lease_loss, lease_loss_after) stay unset.
  ScenarioBuilder& client(std::string name, WorkloadSpec w, std::shared_ptr<const ClientPolicy> policy,
                          const std::function<void(ClientSpec&)>& tweak = {}) {
    return client(std::move(name), w, [&](ClientSpec& c) {
      c.policy = policy;
      if (tweak) tweak(c);
    });
  }

  ScenarioBuilder& fault(FaultSpec f) {
    f.origin = "faults[" + std::to_string(s_.faults.size()) + "]";
    s_.faults.push_back(std::move(f));
    return *this;
  }
  // One fault each, built by models/faults.hpp's factories (namespace
  // faults), as a faults[] entry of that kind reads.
  ScenarioBuilder& pause(std::string target, Duration at, Duration d) {
    return fault(faults::pause(std::move(target), at, d));
  }
  ScenarioBuilder& clock_jump(std::string target, Duration at, Duration by, ClockSelect c = ClockSelect::kWall) {
    return fault(faults::clock_jump(std::move(target), at, by, c));
  }
  ScenarioBuilder& drift(std::string target, Duration at, std::int64_t ppm) {
    return fault(faults::clock_drift(std::move(target), at, ppm));
  }
  ScenarioBuilder& crash(std::string target, Duration at, std::optional<Duration> restart_after = std::nullopt) {
    return fault(faults::crash(std::move(target), at, restart_after));
  }
  ScenarioBuilder& failover(Duration at) { return fault(faults::failover(at)); }
  ScenarioBuilder& counter_reset(std::string target, Duration at, std::int64_t value) {
    return fault(faults::counter_reset(std::move(target), at, value));
  }
  ScenarioBuilder& slow(std::string target, Duration at, Duration delay, Duration d) {
    return fault(faults::slow(std::move(target), at, delay, d));
  }
  ScenarioBuilder& partition(Duration at, std::vector<std::vector<std::string>> groups,
                             std::optional<Duration> d = std::nullopt, bool one_way = false) {
    return fault(faults::partition(at, std::move(groups), d, one_way));
  }
  ScenarioBuilder& isolate(Duration at, std::vector<std::string> nodes, std::optional<Duration> d = std::nullopt,
                           bool one_way = false) {
    return fault(faults::isolate(at, std::move(nodes), d, one_way));
  }
  ScenarioBuilder& heal(Duration at) { return fault(faults::heal(at)); }
  ScenarioBuilder& nemesis(NemesisSpec n) {
    return set([&] { s_.nemesis = std::move(n); });
  }
  ScenarioBuilder& expect(Property p, Expectation e) {
    return set([&] { s_.expect[p] = e; });
  }

  /// The scenario, resolved (resolve_scenario: the TTL in effect, renew
  /// intervals, notes) but not checked: see validate().
  Scenario build() const {
    Scenario s = s_;
    s.clients = clients_;
    resolve_scenario(s);
    return s;
  }
  /// The first rule the built scenario breaks, with the path and message a
  /// file would get; nullopt when it holds.
  std::optional<ScenarioProblem> validate() const { return validate_scenario(build()); }
  /// Builds and runs it. Throws InvalidScenario when validate() finds a problem.
  RunResult run(const RunOptions& opt = {}) const { return run_scenario(build(), opt); }

 private:
  template <class F>
  ScenarioBuilder& set(F f) {
    f();
    return *this;
  }
  Scenario s_;
  std::vector<ClientSpec> clients_;
};

}  // namespace fencesim
