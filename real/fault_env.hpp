// real/fault_env.hpp — faults on the real processes of a run.
#pragma once

#include <string>

#include "real/run.hpp"

namespace fencesim::real {

/// The server process named `name` (redis-N, sentinel-N, etcd-N) or nullptr.
RedisProc* find_proc(Run& run, const std::string& name);
/// The node a role alias ("redis-primary", "etcd-leader") stands for now;
/// any other name is returned as it is. Throws std::runtime_error when the
/// etcd leader cannot be found.
std::string resolve_target(Run& run, const std::string& target);
/// A clock_jump, or a clock_drift's start (or its end: `end`), on a Redis
/// client's clocks (`c`) or a shimmed server's (real/clocks.hpp).
void apply_clock_fault(Run& r, const FaultSpec& f, const std::string& node, ClientState* c, bool end);

}  // namespace fencesim::real
