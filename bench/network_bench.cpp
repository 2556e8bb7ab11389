// Message delivery under active partitions (issue #35, defect 4): a message
// is checked against the partitions when it is sent and again when it
// arrives (docs/FORMAT.md "partition"). Before #35 each check scanned every
// active partition, so 1,000 overlapping partitions made every message
// ~1,000 times dearer; the network now keeps a count per ordered node pair
// (sim/network.cpp) and the two figures should be equal. Figures: README
// "Performance".
//
//   build-rel/bench/fencesim_network_bench --benchmark_repetitions=10
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/simulation.hpp"

namespace {

/// Bounces every message back to its sender: two of them keep one message
/// in flight for ever.
struct Bounce final : sim::NodeBehaviour {
  explicit Bounce(sim::Node& n) : node(n) {}
  void on_message(const sim::Message& m) override { node.send(m.from, m.body); }
  sim::Node& node;
};
struct Ball final : sim::Payload {
  std::string describe() const override { return "ball"; }
};

/// Ten nodes; `partitions` partitions are active the whole time, all
/// separating n2 from n3 (so they overlap) and none blocking n0 and n1, who
/// bounce one message between them. One item = one message sent and
/// delivered (one delivery event).
void BM_MessageDelivery(benchmark::State& state) {
  const auto partitions = static_cast<int>(state.range(0));
  sim::Simulation s(1);
  s.trace().set_enabled(false);
  std::vector<sim::Node*> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(&s.add_node("n" + std::to_string(i)));
  Bounce b0(*nodes[0]);
  Bounce b1(*nodes[1]);
  nodes[0]->set_behaviour(&b0);
  nodes[1]->set_behaviour(&b1);
  for (int i = 0; i < partitions; ++i) {
    s.add_partition(sim::Partition{{{nodes[2]->id()}, {nodes[3]->id()}}, {}, false});
  }
  nodes[0]->send(nodes[1]->id(), std::make_shared<Ball>());
  constexpr std::uint64_t kBatch = 10000;
  for (auto _ : state) s.run_until(sim::kTimeMax, kBatch);
  state.SetItemsProcessed(static_cast<std::int64_t>(s.events_processed()));
  state.counters["messages/s"] =
      benchmark::Counter(static_cast<double>(s.events_processed()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MessageDelivery)->ArgName("partitions")->Arg(1)->Arg(1000);

}  // namespace
