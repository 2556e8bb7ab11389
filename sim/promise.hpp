// sim/promise.hpp — handing values to waiting processes: Promise (one
// value, set once) and Mailbox (a FIFO). Both wake their waiter through
// Simulation::notify, so they need the whole Simulation; simulation.hpp
// includes this header at its end, and this one includes simulation.hpp.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "sim/simulation.hpp"

namespace sim {

/// A one-shot value a process can wait for (Promise/Future in one object,
/// shared by pointer). `set` from anywhere; `wait` from a process.
template <class T>
class Promise {
 public:
  explicit Promise(Simulation& s) : sim_(&s) {}
  void set(T v) {
    if (value_) return;
    value_ = std::move(v);
    if (waiter_.valid()) sim_->notify(waiter_);
  }
  bool ready() const { return value_.has_value(); }
  const std::optional<T>& value() const { return value_; }
  /// Waits until set or until the node's monotonic clock reads `deadline`.
  const std::optional<T>& wait_until(Process& p, Time monotonic_deadline) {
    if (!value_) {
      waiter_ = p.prepare_wait();
      p.block(ClockKind::kMonotonic, monotonic_deadline);
      waiter_ = WaitHandle{};
    }
    return value_;
  }
  const std::optional<T>& wait(Process& p) {
    if (!value_) {
      waiter_ = p.prepare_wait();
      p.block_forever();
      waiter_ = WaitHandle{};
    }
    return value_;
  }

 private:
  Simulation* sim_;
  std::optional<T> value_;
  WaitHandle waiter_;
};

/// A FIFO of values with at most one waiting process.
template <class T>
class Mailbox {
 public:
  explicit Mailbox(Simulation& s) : sim_(&s) {}
  void push(T v) {
    items_.push_back(std::move(v));
    if (waiter_.valid()) sim_->notify(waiter_);
  }
  bool empty() const { return items_.empty(); }
  /// Takes the oldest value, waiting until the monotonic clock reads
  /// `deadline` at most; nothing on timeout.
  std::optional<T> receive_until(Process& p, Time monotonic_deadline) {
    if (items_.empty()) {
      waiter_ = p.prepare_wait();
      p.block(ClockKind::kMonotonic, monotonic_deadline);
      waiter_ = WaitHandle{};
    }
    if (items_.empty()) return std::nullopt;
    T v = std::move(items_.front());
    items_.erase(items_.begin());
    return v;
  }
  std::optional<T> receive(Process& p, Duration timeout) { return receive_until(p, p.node().monotonic() + timeout); }

 private:
  Simulation* sim_;
  std::vector<T> items_;
  WaitHandle waiter_;
};

}  // namespace sim
