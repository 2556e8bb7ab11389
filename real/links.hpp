// real/links.hpp — which link faults fencesim-real can apply: the links its
// proxies (real/proxy.hpp) sit on are
//   * every client -> every server node (redis-*, sentinel-*, etcd-*) and
//     client -> resource;
//   * every Redis replica -> redis-0, the initial primary (the replication
//     link: the replica is started with `replicaof` the proxy's port).
// Not on a proxy: Sentinel <-> Redis and Sentinel <-> Sentinel (Sentinel
// learns addresses by INFO and hello messages, one address per node for
// every peer), etcd member <-> member (a member advertises one peer URL to
// every other member, and the member IDs are hashed from those URLs), and a
// replica's link to a primary promoted by a failover (Sentinel's
// REPLICAOF names the new primary's own port). A partition or `slow` fault
// that would have to cut or slow one of those is refused with the reason.
#pragma once

#include <string>

#include "models/scenario.hpp"

namespace fencesim::real {

/// Why fault `f` (kind partition, heal or slow) of `s` cannot be applied
/// to real processes, or "" when it can.
std::string link_fault_reason(const Scenario& s, const FaultSpec& f);

}  // namespace fencesim::real
