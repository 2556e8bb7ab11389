// sim/stack_pool.hpp — the pool of fiber stacks of one Simulation (engine
// internal: made by the Simulation, used by Node::spawn).
//
// Stacks are pooled and reused: a short run costs microseconds to set up and
// tear down, and a process that finishes hands its stack to the next spawn.
#pragma once

#include <boost/context/fixedsize_stack.hpp>
#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <vector>

namespace sim::detail {

/// Stack size of a process when the Simulation is given none, in bytes.
#if defined(FENCESIM_ASAN_FIBERS)
inline constexpr std::size_t kDefaultStack = 512 * 1024;
#else
inline constexpr std::size_t kDefaultStack = 128 * 1024;
#endif

class StackPool {
 public:
  explicit StackPool(std::size_t bytes) : fixed_(bytes) {}
  ~StackPool() {
    for (boost::context::stack_context& sc : free_) fixed_.deallocate(sc);
  }
  boost::context::stack_context allocate() {
    if (!free_.empty()) {
      last_ = free_.back();
      free_.pop_back();
      return last_;
    }
    last_ = fixed_.allocate();
    return last_;
  }
  void deallocate(boost::context::stack_context& sc) noexcept { free_.push_back(sc); }
  /// The stack the last `allocate` returned.
  const boost::context::stack_context& last() const { return last_; }

 private:
  boost::context::fixedsize_stack fixed_;
  std::vector<boost::context::stack_context> free_;
  boost::context::stack_context last_{};
};

/// The allocator a fiber is made with: takes from and returns to a pool.
struct PooledStack {
  StackPool* pool;
  boost::context::stack_context allocate() { return pool->allocate(); }
  void deallocate(boost::context::stack_context& sc) noexcept { pool->deallocate(sc); }
};

}  // namespace sim::detail
