// sim/node.cpp — a node's timers and calls. (Node::spawn, which makes a
// process's fiber, is in process.cpp.)
#include "sim/simulation.hpp"

namespace sim {

TimerId Node::at_clock(ClockKind k, Time reading, std::function<void()> fn) {
  if (!up_) return TimerId{};
  return sim_->add_timer(id_, k, reading, false, std::move(fn));
}

TimerId Node::every(Duration period, std::function<void()> fn) {
  if (!up_) return TimerId{};
  if (period <= Duration{0}) throw ModelBug("every: the period must be positive on " + name_);
  return sim_->add_timer(id_, ClockKind::kMonotonic, monotonic() + period, false, std::move(fn), period);
}

void Node::cancel(TimerId t) { sim_->cancel(t); }

void Node::abandon_call(std::uint64_t call) {
  Node::PendingCall* c = calls_.find(call);
  if (c == nullptr || c->reply) return;
  const WaitHandle waiter = c->waiter;
  calls_.erase(c);
  sim_->notify(waiter);
}

}  // namespace sim
