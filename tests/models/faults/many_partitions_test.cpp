// tests/models/faults/many_partitions_test.cpp — issue #35, defect 4: a file
// with 10,000 overlapping partitions runs to its verdicts. Before the fix
// every message scanned every active partition, twice (at send and at
// arrival): 1,000 partitions took 59 s to reach the event budget, and this
// run (≈ 1 M messages under 10,000 partitions) took longer than the test's
// CTest timeout (600 s). The network now keeps a count per ordered node pair
// (sim/network.cpp), so the run costs what it costs with one partition;
// bench/network_bench.cpp measures that.
#include <gtest/gtest.h>

#include <string>

#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using namespace std::chrono_literals;

/// An hour of etcd with ten counter clients; `partitions` overlapping
/// partitions between w1 and w2 (who never talk to each other) start 1 ms
/// apart and each lasts the hour: they change nothing a message does.
RunResult run_with(int partitions) {
  ScenarioBuilder b("many-partitions");
  b.duration(1h).etcd(6s, 5).fenced(FenceCheck::kStrict, /*fence_reads=*/true);
  for (int i = 1; i <= 10; ++i) b.client("w" + std::to_string(i), counter(300ms, 100'000, 300ms));
  for (int i = 0; i < partitions; ++i) b.partition(Duration{i * 1ms}, {{"w1"}, {"w2"}}, 1h);
  return b.run();
}

TEST(ManyPartitions, TenThousandOverlappingPartitionsRunToTheSameVerdictsAsOne) {
  const RunResult one = run_with(1);
  const RunResult many = run_with(10'000);
  EXPECT_FALSE(many.budget_exceeded);
  EXPECT_EQ(many.faults.size(), 10'000U);
  // The 9,999 extra partitions block nothing more: the same writes happen.
  EXPECT_EQ(many.history.resource_ops.size(), one.history.resource_ops.size());
  EXPECT_GT(many.history.resource_ops.size(), 1000U);
  ASSERT_EQ(many.verdicts.size(), one.verdicts.size());
  for (std::size_t i = 0; i < one.verdicts.size(); ++i) {
    EXPECT_EQ(many.verdicts[i].property, one.verdicts[i].property);
    EXPECT_EQ(many.verdicts[i].status, one.verdicts[i].status) << many.verdicts[i].summary;
  }
}

}  // namespace
}  // namespace fencesim::testing
