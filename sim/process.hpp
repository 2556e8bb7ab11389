// sim/process.hpp — fiber processes: model code that blocks.
//
// A Process is spawned on a node (Node::spawn) and runs on its own fiber
// (Boost.Context); only the scheduler resumes it, and exactly one runs at a
// time. Its blocking calls (sleep, block, yield, call) are inline and
// defined at the end of simulation.hpp: they switch to the scheduler inside
// the caller's frame (see "Fiber switches and return prediction" there).
// Promise and Mailbox, the two ways to hand a process a value, are in
// promise.hpp. A crash of the node cancels the process: its blocking call
// throws `Cancelled` (basics.hpp), which unwinds the fiber.
#pragma once

#include <boost/context/fiber.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "sim/basics.hpp"
#include "sim/clock.hpp"
#include "sim/message.hpp"
#include "sim/node.hpp"
#include "sim/time.hpp"

namespace sim {

/// A fiber process. Every blocking call returns only when the scheduler
/// resumes it; if the node crashes meanwhile, it throws `Cancelled`.
class Process {
 public:
  Node& node() const { return *node_; }
  Simulation& sim() const { return node_->sim(); }
  const std::string& name() const { return name_; }

  /// Sleeps `d` on the node's monotonic clock (drift applies).
  void sleep(Duration d) { sleep_until(ClockKind::kMonotonic, node_->monotonic() + d); }
  /// Sleeps until the node's clock `k` reads `reading`. A wall-clock step
  /// moves the wake-up (forward: earlier; backward: later).
  void sleep_until(ClockKind k, Time reading) { block(k, reading); }
  /// Lets every other event of this instant run first.
  void yield();

  /// Blocks until `notify(handle)` or, with a deadline, until clock `k`
  /// reads `deadline`. Returns true if notified, false on timeout. Get the
  /// handle to give a notifier from `prepare_wait()` first.
  WaitHandle prepare_wait();
  bool block(ClockKind k, Time deadline);
  bool block_forever();

  /// Request/response. `send_request` registers the call and sends; the
  /// reply is kept until `await_reply` collects it. `await_reply` waits until
  /// the monotonic clock reads `deadline`; it returns nothing on timeout
  /// and forgets the call, so a later reply is dropped ("late replies are
  /// dropped", docs/FORMAT.md).
  std::uint64_t send_request(NodeId to, PayloadPtr body);
  std::optional<Message> await_reply(std::uint64_t call, Time monotonic_deadline);
  std::optional<Message> call(NodeId to, PayloadPtr body, Duration timeout) {
    const Time deadline = node_->monotonic() + timeout;
    return await_reply(send_request(to, std::move(body)), deadline);
  }
  void forget(std::uint64_t call) { node_->calls_.erase(call); }

 private:
  friend class Simulation;
  friend class Node;
  void switch_to_scheduler();

  // What a wake-up touches comes first, within two cache lines; the name
  // and the body, used once, last.
  Node* node_ = nullptr;
  std::uint32_t slot_ = 0;
  boost::context::fiber fiber_;   // the process's own context
  boost::context::fiber caller_;  // the scheduler, while the process runs
  bool started_ = false;
  bool finished_ = false;
  bool cancelled_ = false;
  bool waiting_ = false;         // blocked; a notify or timer may wake it
  bool resume_pending_ = false;  // a kResume event is queued
  bool notified_ = false;
  std::uint64_t wait_ = 0;  // serial of the current wait
  // The deadline of the current wait, if it has one: kept here rather than
  // in a timer slot, so that a sleep allocates nothing and touches no other
  // timer. Its kTimeout event is the one whose queue key is timeout_key_.
  std::uint64_t timeout_key_ = 0;  // 0: no deadline
  bool timeout_due_ = false;       // fell due while the node was paused
  ClockKind timeout_clock_ = ClockKind::kMonotonic;
  Time timeout_deadline_{0};      // reading of timeout_clock_
  Time timeout_when_{0};          // true time of the queued event
  void* stack_bottom_ = nullptr;  // for the sanitizer's fiber annotations
  std::size_t stack_size_ = 0;
  const void* caller_bottom_ = nullptr;
  std::size_t caller_size_ = 0;
  std::string name_;
  std::function<void(Process&)> body_;
};

}  // namespace sim
