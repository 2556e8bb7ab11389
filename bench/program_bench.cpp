// Program clients (issue 31): the protocol's round trip and whole runs of
// scenarios/programs/seed-worked-example.json (two Python clients on
// redis-py), beside the built-in worked-example-fenced.json as the baseline
// measured in the same binary. Processes stay warm between iterations, as
// in a sweep (docs/PROTOCOL.md "Speed").
//
//   fencesim_program_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "loader/loader.hpp"
#include "models/world.hpp"

namespace {

fencesim::Scenario load(const std::string& path) {
  fencesim::LoadResult r = fencesim::load_scenario_file(std::string(FENCESIM_SOURCE_DIR) + "/" + path);
  if (!r.ok()) throw std::runtime_error(r.error->to_string());
  return *r.scenario;
}

/// Debian's python3 (with python3-redis) ahead of any other in PATH.
void debian_python_first() {
  static const bool done = [] {
    const char* p = std::getenv("PATH");
    ::setenv("PATH", (std::string("/usr/bin:") + (p ? p : "")).c_str(), 1);
    return true;
  }();
  (void)done;
}

void run_all(benchmark::State& state, const fencesim::Scenario& s) {
  fencesim::RunOptions o;
  o.trace = false;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    o.seed = seed++;
    benchmark::DoNotOptimize(fencesim::run_scenario(s, o).fingerprint);
  }
  state.SetItemsProcessed(state.iterations());
}

/// One program client that sends 1,000 timers of 1 ns, one per delivery:
/// items are round trips (request, yield, the timer's delivery).
void BM_ProgramRoundTrip(benchmark::State& state) {
  debian_python_first();
  fencesim::Scenario s = load("scenarios/programs/seed-worked-example.json");
  s.clients.resize(1);
  s.faults.clear();
  s.expect.clear();
  s.clients[0].program->command = {"python3", std::string(FENCESIM_SOURCE_DIR) + "/bench/program_roundtrip.py", "1000"};
  fencesim::RunOptions o;
  o.trace = false;
  for (auto _ : state) benchmark::DoNotOptimize(fencesim::run_scenario(s, o).events);
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_ProgramRoundTrip)->Unit(benchmark::kMillisecond)->UseRealTime();

/// Example 1: two Python clients (redis-py, the article's Lua script).
void BM_ProgramSeedWorkedExample(benchmark::State& state) {
  debian_python_first();
  run_all(state, load("scenarios/programs/seed-worked-example.json"));
}
BENCHMARK(BM_ProgramSeedWorkedExample)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The baseline: the built-in clients' worked example.
void BM_BuiltinWorkedExample(benchmark::State& state) { run_all(state, load("scenarios/worked-example-fenced.json")); }
BENCHMARK(BM_BuiltinWorkedExample)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
