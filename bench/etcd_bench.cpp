// Whole runs of the etcd-like lock service: 3 members (Raft, MVCC store,
// lessor) and 5 clients (session + concurrency.Mutex) incrementing a fenced
// counter for 60 s of simulated time, as many iterations as fit. Runs per
// second on one core, setup and teardown included (building the world,
// checking every property, building the trace when it is on).
// Target: >= 500 runs/s.
//
// busy:0 — the format's counter defaults (work 100 ms, think 1 s): about
//          250 grants per run;
// busy:1 — think 100 ms: four workers always wait, about 500 grants per run.
//
// BM_ZooKeeperFiveClientsRun is the same run on a 3-server ZooKeeper
// ensemble (models/zookeeper/: the same Raft core, sessions, znodes,
// Curator's lock recipe, a 4 s session — the smallest the default tickTime
// allows — and the czxid as token), measured in the same run so that the
// README gives it as a ratio to the etcd run (issue 33: at least as fast).
//
// BM_HazelcastFiveClientsRun: the same on a Hazelcast CP group of 3 CP
// members (models/hazelcast/: FencedLock, CP sessions of 4 s heartbeated
// every second, the fence as token).
//
//   build-etcd-bench/bench/fencesim_etcd_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include "tests/models/scenario_builder.hpp"

namespace {

using namespace fencesim;
using namespace fencesim::testing;

enum class Service { kEtcd, kZooKeeper, kHazelcast };

Scenario five_clients(bool busy, Service service) {
  ScenarioBuilder b(service == Service::kZooKeeper   ? "zookeeper-bench"
                    : service == Service::kHazelcast ? "hazelcast-bench"
                                                     : "etcd-bench");
  b.duration(60s).fenced(FenceCheck::kStrict, /*fence_reads=*/true);
  if (service == Service::kZooKeeper) {
    b.zookeeper(4s);
  } else if (service == Service::kHazelcast) {
    b.hazelcast(4s, [](HazelcastSpec& h) { h.session_heartbeat_interval = 1s; });
  } else {
    b.etcd(3s, 3);
  }
  // More iterations than fit in 60 s: the workers never run out.
  for (int k = 0; k < 5; ++k) b.client("worker-" + std::to_string(k), counter(100ms, 10'000, busy ? 100ms : 1s));
  return b.build();
}

void five_clients_run(benchmark::State& state, Service service) {
  const Scenario s = five_clients(state.range(0) != 0, service);
  RunOptions opt;
  opt.trace = state.range(1) != 0;
  std::uint64_t events = 0, grants = 0;
  for (auto _ : state) {
    RunResult r = run_scenario(s, opt);
    events += r.events;
    grants += r.history.grants.size();
    benchmark::DoNotOptimize(r.all_met);
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["runs/s"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.counters["events/run"] = static_cast<double>(events) / n;
  state.counters["grants/run"] = static_cast<double>(grants) / n;
}
void BM_EtcdFiveClientsRun(benchmark::State& state) { five_clients_run(state, Service::kEtcd); }
void BM_ZooKeeperFiveClientsRun(benchmark::State& state) { five_clients_run(state, Service::kZooKeeper); }
void BM_HazelcastFiveClientsRun(benchmark::State& state) { five_clients_run(state, Service::kHazelcast); }
BENCHMARK(BM_EtcdFiveClientsRun)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"busy", "trace"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ZooKeeperFiveClientsRun)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"busy", "trace"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HazelcastFiveClientsRun)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"busy", "trace"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

// main() is in bench_main.cpp.
