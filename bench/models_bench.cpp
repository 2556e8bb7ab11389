// Whole runs of the seed article's worked example (2 clients, 60 s
// simulated, a 12 s GC pause): runs per second on one core, setup and
// teardown included. Target: >= 5,000 runs/s.
#include <benchmark/benchmark.h>

#include "tests/models/scenario_builder.hpp"

namespace {

using namespace fencesim;
using namespace fencesim::testing;

Scenario worked_example(bool fenced) {
  ScenarioBuilder b("worked-example");
  b.duration(60s).redis(10s);
  if (fenced) {
    b.fenced(FenceCheck::kStrict, false, 1000);
  } else {
    b.unfenced(1000);
  }
  return b.client("A", allocator(100, 500ms))
      .client("B", allocator(100, 500ms), [](ClientSpec& c) { c.start = 2s; })
      .pause("A", 200ms, 12s)
      .build();
}

void BM_WorkedExampleRun(benchmark::State& state) {
  const Scenario s = worked_example(state.range(0) != 0);
  RunOptions opt;
  opt.trace = state.range(1) != 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    RunResult r = run_scenario(s, opt);
    events += r.events;
    benchmark::DoNotOptimize(r.all_met);
  }
  state.counters["runs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["events/run"] = static_cast<double>(events) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_WorkedExampleRun)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"fenced", "trace"})
    ->Unit(benchmark::kMicrosecond);

void BM_SentinelFailoverRun(benchmark::State& state) {
  // c04: 3 sentinels, 2 replicas, a primary crash and a failover, 40 s.
  const Scenario s = ScenarioBuilder("c04")
                         .duration(40s)
                         .redis(30s, 2, 3)
                         .redis_spec([](RedisSpec& r) {
                           r.replication_delay = 1s;
                           r.down_after = 2s;
                         })
                         .fenced(FenceCheck::kStrict)
                         .client("A", allocator(10, 8s))
                         .client("B", allocator(10, 100ms), [](ClientSpec& c) { c.start = 100ms; })
                         .crash("redis-primary", 300ms)
                         .build();
  for (auto _ : state) {
    RunResult r = run_scenario(s, {});
    benchmark::DoNotOptimize(r.all_met);
  }
  state.counters["runs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SentinelFailoverRun)->Unit(benchmark::kMicrosecond);

}  // namespace

// main() is in bench_main.cpp.
