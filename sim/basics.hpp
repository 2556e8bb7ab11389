// sim/basics.hpp — the engine's shared vocabulary: node ids, the handles of
// timers and waits, and the two exceptions every part of the engine uses.
#pragma once

#include <cstdint>
#include <stdexcept>

namespace sim {

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = UINT32_MAX;

class Simulation;
class Node;
class Process;

/// Thrown inside a process when its node crashes; unwinds the fiber. Model
/// code must not swallow it (never `catch (...)` without rethrowing).
struct Cancelled {};

/// A broken invariant in a model or the engine: a bug, not a user error.
struct ModelBug : std::logic_error {
  using std::logic_error::logic_error;
};

/// Handle to a pending timer, for cancellation. Default: no timer.
struct TimerId {
  std::uint32_t slot = UINT32_MAX;
  std::uint32_t gen = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

/// Identifies one blocking wait of one process, for `Simulation::notify`.
struct WaitHandle {
  std::uint32_t slot = UINT32_MAX;
  std::uint64_t wait = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

}  // namespace sim
