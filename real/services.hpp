// real/services.hpp — what fencesim-real does differently per lock service
// (Redis, etcd): one RealService each, found by real_service(). The rest of
// real/ asks it instead of branching on the ServiceKind, as the simulation
// asks a ServiceDescriptor (models/lock_service.hpp).
#pragma once

#include <memory>
#include <string>

#include "real/real.hpp"
#include "real/run.hpp"

namespace fencesim::real {

struct RealService {
  /// Why this service's own settings in `s` cannot run against real
  /// servers ("" when they can).
  std::string (*unsupported)(const Scenario& s);
  /// Why program client `c` cannot run ("" when it can).
  std::string (*program_unsupported)(const Scenario& s, const ClientSpec& c);
  /// Why the clock fault described as `what`, on a server, cannot be
  /// applied; "" to go on with the common rules (real/clocks.cpp).
  std::string (*clock_fault_unsupported)(const std::string& what);
  /// Finds the helper programs its clients need before anything starts;
  /// throws MissingProgram (real/process.hpp).
  void (*find_helpers)(Run& r, const RealOptions& opt);
  /// Starts its servers; their versions and remarks go into `out`.
  void (*start)(Run& r, const RealOptions& opt, RealResult& out);
  /// A built-in client's lock (real/locks.hpp).
  std::unique_ptr<RealLock> (*make_lock)(ClientState& c);
  /// Its lease observer, run on a thread of its own from time 0 until the
  /// run stops; nullptr when `start` began one.
  void (*observe)(Run& r);
};

/// A file the runner needs beside the running program (or in
/// RealOptions::helper_dir).
fs::path beside_program(const RealOptions& opt, const std::string& name);

/// The real stack of `kind`; nullptr for a service that has none.
const RealService* real_service(ServiceKind kind);

}  // namespace fencesim::real
