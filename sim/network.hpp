// sim/network.hpp — the network's settings and partitions.
//
// The Simulation owns the network (Simulation::send, add_partition, heal,
// add_slow; the rules of loss, latency and FIFO channels are documented at
// Simulation::send). This header holds the plain values that configure it
// and the rule that decides whether one partition blocks a message.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/basics.hpp"
#include "sim/time.hpp"

namespace sim {

/// Network settings. Latency is uniform in [latency_min, latency_max] (equal
/// bounds: fixed), loss is an integer ratio in parts per billion.
struct NetworkConfig {
  Duration latency_min{1'000'000};
  Duration latency_max{1'000'000};
  std::uint64_t loss_ppb = 0;
};

/// A partition (docs/FORMAT.md "partition"): either `groups` (nodes in
/// different groups cannot exchange messages; unlisted nodes reach everyone)
/// or `isolate` (cut from all others). With `one_way`, only messages *from*
/// the first group (or the isolated nodes) are blocked.
struct Partition {
  std::vector<std::vector<NodeId>> groups;
  std::vector<NodeId> isolate;
  bool one_way = false;
};

/// Whether partition `p` blocks a message from `from` to `to` (from != to).
bool partition_blocks(const Partition& p, NodeId from, NodeId to);

}  // namespace sim
