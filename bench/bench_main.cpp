// The main() of every benchmark program: BENCHMARK_MAIN, with the heap kept
// between runs as `fencesim` keeps it (sim/heap.hpp): many runs in one
// process, like a seed sweep.
#include <benchmark/benchmark.h>

#include "sim/heap.hpp"

int main(int argc, char** argv) {
  sim::keep_heap_between_runs();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
