// Sweep throughput: `fencesim sweep --keep none` over a block of seeds, with
// 1 and with 2 worker threads (issue: hunt counterexamples; target: 2 jobs
// ≥ 1.8 × the 1-job rate on the 2-core machine). Real time, not CPU time:
// the sweep's work happens on its worker threads.
//
// worked:1 — the seed article's worked example (scenarios/worked-example-fenced.json):
//            2 clients, Redis, 60 s simulated, one scripted 12 s pause.
// worked:0 — a 3-member etcd cluster, 5 fenced counter workers, 60 s
//            simulated, a nemesis pausing a worker every 1–2 s for up to 6 s.
//
// BM_SweepRun measures one run exactly as a sweep runs it (run_scenario with
// the trace off, its seed overridden), single-threaded: compare with
// BM_WorkedExampleRun/trace:0 (fencesim_models_bench) and
// BM_EtcdFiveClientsRun/trace:0 (fencesim_etcd_bench).
//
//   build/bench/fencesim_sweep_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <stdexcept>
#include <string>

#include "fencesim/sweep.hpp"
#include "loader/loader.hpp"

namespace {

using namespace fencesim;

const char* kEtcdNemesis = R"({
  "version": 1, "scenario": "etcd-nemesis-bench", "seed": 1, "duration": "60s", "settle": "10s",
  "lock": {"service": "etcd", "ttl": "3s", "nodes": 3},
  "resource": {"kind": "fenced", "check": "strict", "fence_reads": true, "initial": 0},
  "clients": [{"name": "worker", "count": 5,
               "workload": {"kind": "counter", "work": "1s", "iterations": 10000, "think": "5s"}}],
  "nemesis": {"kinds": ["pause"], "targets": ["clients"],
              "interval": {"min": "1s", "max": "2s"}, "max_duration": "6s"}
})";

Scenario load(bool worked) {
  LoadResult r = worked ? load_scenario_file(FENCESIM_SOURCE_DIR "/scenarios/worked-example-fenced.json")
                        : load_scenario_text(kEtcdNemesis, "etcd-nemesis-bench");
  if (!r.scenario) throw std::runtime_error("sweep_bench: cannot load its scenario");
  return *r.scenario;
}

void BM_Sweep(benchmark::State& state) {
  const bool worked = state.range(0) != 0;
  const Scenario s = load(worked);
  SweepOptions opt;
  opt.jobs = static_cast<unsigned>(state.range(1));
  opt.keep = Keep::kNone;
  const std::uint64_t block = worked ? 2000 : 400;
  std::uint64_t first = 1, runs = 0;
  for (auto _ : state) {
    opt.seeds = {first, first + block - 1};
    first += block;
    SweepResult r = run_sweep(s, opt);
    if (r.error) state.SkipWithError(r.error->message.c_str());
    runs += r.runs.size();
    benchmark::DoNotOptimize(r.all_met);
  }
  state.counters["runs/s"] = benchmark::Counter(static_cast<double>(runs), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Sweep)
    ->ArgsProduct({{1, 0}, {1, 2}})
    ->ArgNames({"worked", "jobs"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_SweepRun(benchmark::State& state) {
  Scenario s = load(state.range(0) != 0);
  RunOptions opt;
  opt.trace = false;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    s.seed = seed++;
    RunResult r = run_scenario(s, opt);
    benchmark::DoNotOptimize(r.all_met);
  }
  state.counters["runs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SweepRun)->Arg(1)->Arg(0)->ArgName("worked")->Unit(benchmark::kMicrosecond);

}  // namespace

// main() is in bench_main.cpp.
