// sim/faults.cpp — faults on nodes: pause, crash, restart, clock steps and
// drift (which move the timers and deadlines set on the node's clocks).
#include <algorithm>
#include <vector>

#include "sim/simulation.hpp"

namespace sim {

void Simulation::pause(NodeId n, Duration d) {
  Node& node = *nodes_[n];
  if (!node.up_) return;
  const Time until = now_ + d;
  if (node.paused_) {
    node.pause_until = std::max(node.pause_until, until);
  } else {
    node.paused_ = true;
    node.pause_until = until;
  }
  at(
      until, [this, n] { end_pause(n); }, EventClass::kFault);
}

void Simulation::end_pause(NodeId n) {
  Node& node = *nodes_[n];
  if (!node.paused_ || now_ < node.pause_until) return;
  node.paused_ = false;
  // What fell due during the pause runs now, in the order it fell due, before
  // anything else scheduled for this instant.
  std::vector<Event> due = std::move(node.deferred_);
  node.deferred_.clear();
  for (const Event& e : due) {
    const std::uint64_t key = queue_.push(now_, EventClass::kReplay, e.type, e.a, e.b);
    if (e.type == EventType::kTimeout && procs_[e.a] != nullptr && procs_[e.a]->timeout_key_ == e.key) {
      procs_[e.a]->timeout_key_ = key;  // the replayed event is now the deadline's event
    }
  }
}

void Simulation::crash(NodeId n) {
  if (current_ != nullptr) throw ModelBug("crash called from inside a process");
  Node& node = *nodes_[n];
  if (!node.up_) return;
  node.up_ = false;
  node.paused_ = false;
  // Messages waiting in the inbox of a paused node are lost with it.
  for (const Event& e : node.deferred_) {
    if (e.type == EventType::kDeliver && inflight_[e.a].used && inflight_[e.a].msg.id == e.b) release_inflight(e.a);
  }
  node.deferred_.clear();
  ++node.incarnation_;
  // Drop node-code timers; observer timers survive. (A process's deadline
  // goes with the process, below.)
  for (std::uint32_t s = node.timer_head_; s != UINT32_MAX;) {
    const std::uint32_t next = timers_[s].next;
    if (!timers_[s].observer) free_timer(s);
    s = next;
  }
  // Cancel processes by unwinding them. Also a process that has not started
  // yet is resumed once, to end: a fiber destroyed unstarted would unwind on
  // its own stack without the sanitizer's fiber annotations.
  const std::vector<std::uint32_t> live = node.processes_;
  for (std::uint32_t slot : live) {
    if (Process* p = procs_[slot].get()) cancel_process(*p);
  }
  node.calls_.clear();
  if (node.behaviour_ != nullptr) node.behaviour_->on_crash();
}

void Simulation::power_loss(NodeId n) {
  if (current_ != nullptr) throw ModelBug("power_loss called from inside a process");
  Node& node = *nodes_[n];
  if (!node.up_) return;
  if (node.behaviour_ != nullptr) node.behaviour_->on_power_loss();
  crash(n);
}

void Simulation::restart(NodeId n) {
  Node& node = *nodes_[n];
  if (node.up_) return;
  node.up_ = true;
  if (node.behaviour_ != nullptr) node.behaviour_->on_restart();
}

void Simulation::reschedule_clock_timers(NodeId n) {
  // A clock step or drift change moves the timers set on that node's clocks
  // whose true fire time changes: a new event is queued at the new true time
  // and the old one goes stale. The TimerId a model holds stays valid
  // (identity is the slot and the generation at creation; rescheduling bumps
  // a separate counter). Timers that do not move keep their event, so a wall
  // step leaves monotonic timers exactly where they were in the order; moved
  // timers are queued again in their previous order, so timers with one
  // deadline still fire in the order they were set. A timer that already
  // fell due during a pause stays due: a step cannot re-arm it. The same
  // holds for the deadlines of the node's waiting processes.
  struct Moved {
    std::uint64_t key;  // of the event it had: the order to keep
    std::uint32_t slot;
    bool process;
  };
  std::vector<Moved> moved;
  const Node& node = *nodes_[n];
  for (std::uint32_t s = node.timer_head_; s != UINT32_MAX; s = timers_[s].next) {
    const Timer& t = timers_[s];
    if (!t.due && node.clock_.true_time_when(t.clock, t.deadline, now_) != t.when) moved.push_back({t.key, s, false});
  }
  for (std::uint32_t s : node.processes_) {
    const Process* p = procs_[s].get();
    if (p == nullptr || p->timeout_key_ == 0 || p->timeout_due_) continue;
    if (node.clock_.true_time_when(p->timeout_clock_, p->timeout_deadline_, now_) != p->timeout_when_) {
      moved.push_back({p->timeout_key_, s, true});
    }
  }
  std::sort(moved.begin(), moved.end(), [](const Moved& x, const Moved& y) { return x.key < y.key; });
  for (const Moved& m : moved) {
    if (m.process) {
      queue_timeout(*procs_[m.slot]);
    } else {
      timers_[m.slot].resched = timers_[m.slot].resched + 1;
      schedule_timer(m.slot);
    }
  }
}

void Simulation::clock_jump(NodeId n, ClockKind k, Duration by) {
  nodes_[n]->clock_.jump(k, by, now_);
  reschedule_clock_timers(n);
}

void Simulation::set_drift(NodeId n, std::int64_t ppm) {
  nodes_[n]->clock_.set_drift(ppm, now_);
  reschedule_clock_timers(n);
}

}  // namespace sim
