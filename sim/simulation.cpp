// sim/simulation.cpp — the Simulation: nodes, observer callbacks, timers,
// the run loop and the dispatch of each event. (Sending and partitions are
// in network.cpp, faults on nodes in faults.cpp, processes in process.cpp.)
#include "sim/simulation.hpp"

#include <algorithm>

#include "sim/stack_pool.hpp"

#if defined(FENCESIM_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif

namespace sim {

Simulation::Simulation(std::uint64_t seed, std::size_t stack_bytes)
    : seed_(seed),
      net_rng_(Rng::stream(seed, "network")),
      stacks_(std::make_unique<detail::StackPool>(stack_bytes ? stack_bytes : detail::kDefaultStack)) {}

Simulation::~Simulation() {
  // Unwind every live process cleanly so that its stack returns to the pool
  // and its locals are destroyed, before the pool goes.
  for (std::uint32_t slot = 0; slot < procs_.size(); ++slot) {
    Process* p = procs_[slot].get();
    if (p == nullptr) continue;
    if (!p->finished_) {
      try {
        cancel_process(*p);
      } catch (...) {
      }
    }
    procs_[slot].reset();
  }
}

Node& Simulation::add_node(std::string name) {
  auto n = std::make_unique<Node>();
  n->sim_ = this;
  n->id_ = static_cast<NodeId>(nodes_.size());
  n->name_ = std::move(name);
  nodes_.push_back(std::move(n));
  const std::size_t count = nodes_.size();
  std::vector<Time> grown(count * count, Time{0});
  for (std::size_t f = 0; f + 1 < count; ++f) {
    for (std::size_t t = 0; t + 1 < count; ++t) grown[f * count + t] = channel_last_[f * channel_stride_ + t];
  }
  channel_last_ = std::move(grown);
  channel_stride_ = count;
  // A partition may name a node added after it started: count again.
  cut_count_.assign(count * count, 0);
  for (const auto& [id, p] : partitions_) count_partition(p, +1);
  return *nodes_.back();
}

std::optional<NodeId> Simulation::find_node(std::string_view name) const {
  for (const auto& n : nodes_) {
    if (n->name_ == name) return n->id_;
  }
  return std::nullopt;
}

void Simulation::at(Time t, std::function<void()> fn, EventClass c) {
  if (t < now_) t = now_;
  std::uint32_t slot;
  if (!free_callbacks_.empty()) {
    slot = free_callbacks_.back();
    free_callbacks_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(callbacks_.size());
    callbacks_.emplace_back();
  }
  Callback& cb = callbacks_[slot];
  cb.fn = std::move(fn);
  cb.used = true;
  ++cb.gen;
  queue_.push(t, c, EventType::kCallback, slot, cb.gen);
}

TimerId Simulation::observe_clock(NodeId n, ClockKind k, Time reading, std::function<void()> fn) {
  return add_timer(n, k, reading, true, std::move(fn));
}

TimerId Simulation::add_timer(NodeId n, ClockKind k, Time reading, bool observer, std::function<void()>&& fn,
                              Duration period) {
  std::uint32_t slot;
  if (!free_timers_.empty()) {
    slot = free_timers_.back();
    free_timers_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(timers_.size());
    timers_.emplace_back();
  }
  Timer& t = timers_[slot];
  t.node = n;
  t.clock = k;
  t.deadline = reading;
  t.active = true;
  t.observer = observer;
  t.due = false;
  t.period = period;
  t.fn = std::move(fn);
  ++t.gen;
  t.resched = 0;
  // Link at the head of the node's list.
  Node& node = *nodes_[n];
  t.prev = UINT32_MAX;
  t.next = node.timer_head_;
  if (node.timer_head_ != UINT32_MAX) timers_[node.timer_head_].prev = slot;
  node.timer_head_ = slot;
  schedule_timer(slot);
  return TimerId{slot, t.gen};
}

void Simulation::schedule_timer(std::uint32_t slot) {
  Timer& t = timers_[slot];
  const Node& node = *nodes_[t.node];
  t.when = node.clock_.true_time_when(t.clock, t.deadline, now_);
  // The event's b carries the reschedule count and the generation, so stale
  // events (after a clock step moved the timer) are recognised.
  t.key = queue_.push(t.when, EventClass::kNormal, EventType::kTimer, slot,
                      (static_cast<std::uint64_t>(t.resched) << 32) | t.gen);
}

void Simulation::unlink_timer(std::uint32_t slot) {
  Timer& t = timers_[slot];
  Node& node = *nodes_[t.node];
  if (t.prev != UINT32_MAX) {
    timers_[t.prev].next = t.next;
  } else {
    node.timer_head_ = t.next;
  }
  if (t.next != UINT32_MAX) timers_[t.next].prev = t.prev;
  t.prev = t.next = UINT32_MAX;
}

void Simulation::free_timer(std::uint32_t slot) {
  Timer& t = timers_[slot];
  if (!t.active) return;
  unlink_timer(slot);
  t.active = false;
  ++t.gen;  // invalidates queued events and outstanding TimerIds
  t.fn = nullptr;
  free_timers_.push_back(slot);
}

void Simulation::cancel(TimerId id) {
  if (!id.valid() || id.slot >= timers_.size()) return;
  Timer& t = timers_[id.slot];
  if (!t.active || t.gen != id.gen) return;
  free_timer(id.slot);
}

void Simulation::queue_timeout(Process& p) {
  p.timeout_when_ = p.node_->clock_.true_time_when(p.timeout_clock_, p.timeout_deadline_, now_);
  p.timeout_key_ = queue_.push(p.timeout_when_, EventClass::kNormal, EventType::kTimeout, p.slot_, p.wait_);
}

void Simulation::notify(WaitHandle h) {
  if (!h.valid() || h.slot >= procs_.size()) return;
  Process* p = procs_[h.slot].get();
  if (p == nullptr || !p->waiting_ || p->wait_ != h.wait) return;
  if (p->timeout_key_ != 0 && p->timeout_due_) {
    // The wait timed out while the node was paused and its timeout waits to
    // be replayed at the pause's end: it came first, so it wins.
    return;
  }
  p->waiting_ = false;
  p->notified_ = true;
  p->resume_pending_ = true;
  p->timeout_key_ = 0;  // its queued timeout event goes stale
  queue_.push(now_, EventClass::kNormal, EventType::kResume, h.slot, h.wait);
}

RunStatus Simulation::run_until(Time end, std::uint64_t max_events, std::size_t max_pending) {
  std::uint64_t budget = 0;
  Event e{};
  // The fingerprint stays in a register while the loop runs (a handler may
  // write any memory, so a member would be loaded and stored per event).
  std::uint64_t fingerprint = event_fingerprint_;
  for (bool more = true; more;) {
    if (budget >= max_events || queue_.size() > max_pending) {
      if (queue_.due(end)) {
        event_fingerprint_ = fingerprint;
        return RunStatus::kEventBudgetExceeded;
      }
      break;
    }
    // Up to 256 events between two looks at the budgets: a few hundred
    // handlers cannot schedule enough to matter, and the hot loop stays bare.
    const std::uint64_t stop = std::min(max_events, budget + 256);
    while (budget < stop) {
      if (!queue_.pop_due(end, e)) {
        more = false;
        break;
      }
      now_ = e.time;
      ++budget;
      ++events_processed_;
      fingerprint = fold_event(fingerprint, e);
      // (A few hundred processes stay in the caches; then the prefetch is waste.)
      if (procs_.size() > 256 && !queue_.empty()) prefetch(queue_.top());
      dispatch(e);
    }
    event_fingerprint_ = fingerprint;
  }
  if (end != kTimeMax && now_ < end) now_ = end;
  return RunStatus::kDone;
}

void Simulation::prefetch(const Event& next) const {
  // With thousands of processes, resuming one misses the cache on its
  // Process and on the top of its stack. Asking for both while the current
  // event runs hides most of that latency. Only a hint: no effect on order.
  if ((next.type != EventType::kTimeout && next.type != EventType::kResume) || next.a >= procs_.size()) return;
  const char* p = reinterpret_cast<const char*>(procs_[next.a].get());
  if (p == nullptr) return;
  __builtin_prefetch(p);  // the fields a wake-up touches: the first two lines
  __builtin_prefetch(p + 64);
  if (const char* sp = stack_hints_[next.a]) {
    // The saved context lies just below the hint, the frames it returns
    // through just above. (Integer arithmetic: these addresses may lie
    // outside the local the hint points at.)
    const auto base = reinterpret_cast<std::uintptr_t>(sp);
    for (std::uintptr_t a = base - 128; a < base + 512; a += 64) __builtin_prefetch(reinterpret_cast<const void*>(a));
  }
}

void Simulation::defer_or(Node& n, const Event& e, bool& deferred) {
  deferred = n.paused_;
  if (deferred) n.deferred_.push_back(e);
}

// Forced inline, like resume: see "Fiber switches and return prediction" in
// simulation.hpp. Each event type has its own piece below; a stale event
// (its process, timer or callback has moved on) does nothing.
[[gnu::always_inline]] inline void Simulation::dispatch(const Event& e) {
  switch (e.type) {
    case EventType::kResume: dispatch_resume(e); return;
    case EventType::kTimer: dispatch_timer(e); return;
    case EventType::kTimeout: dispatch_timeout(e); return;
    case EventType::kDeliver: deliver(e.a); return;
    case EventType::kCallback: dispatch_callback(e); return;
    case EventType::kUser: return;
  }
}

[[gnu::always_inline]] inline void Simulation::dispatch_resume(const Event& e) {
  Process* p = e.a < procs_.size() ? procs_[e.a].get() : nullptr;
  if (p == nullptr || !p->resume_pending_ || p->wait_ != e.b) return;
  Node& n = *p->node_;
  if (!n.up_) return;
  bool deferred;
  defer_or(n, e, deferred);
  if (deferred) return;
  p->resume_pending_ = false;
  resume(*p);
}

[[gnu::always_inline]] inline void Simulation::dispatch_timer(const Event& e) {
  if (e.a >= timers_.size()) return;
  Timer& t = timers_[e.a];
  const std::uint64_t expect = (static_cast<std::uint64_t>(t.resched) << 32) | t.gen;
  if (!t.active || e.b != expect) return;
  if (!t.observer) {
    Node& n = *nodes_[t.node];
    if (!n.up_) return;
    bool deferred;
    defer_or(n, e, deferred);
    if (deferred) {
      t.due = true;
      return;
    }
  }
  // Run from a local: the callback may add timers, and so move the
  // timer table (and a function stored in it) while it runs.
  std::function<void()> fn = std::move(t.fn);
  if (t.period > Duration{0}) {
    run_periodic(e.a, fn);
    return;
  }
  free_timer(e.a);
  if (fn) fn();
}

[[gnu::always_inline]] inline void Simulation::run_periodic(std::uint32_t slot, std::function<void()>& fn) {
  // Re-armed after the callback, unless it cancelled the timer (its
  // generation moved on) — as if the callback's last step had been
  // `after(period, ...)`.
  Timer& t = timers_[slot];
  const std::uint32_t gen = t.gen;
  const NodeId node = t.node;
  fn();
  Timer& again = timers_[slot];
  if (!again.active || again.gen != gen) return;
  again.fn = std::move(fn);
  again.clock = ClockKind::kMonotonic;
  again.deadline = nodes_[node]->monotonic() + again.period;
  again.due = false;
  ++again.resched;  // no event queued for an earlier arming can match now
  schedule_timer(slot);
}

[[gnu::always_inline]] inline void Simulation::dispatch_timeout(const Event& e) {
  // The deadline of a process's wait. The key identifies the current
  // deadline: a notify, a clock step or the end of the wait made any
  // other event for it stale.
  Process* p = e.a < procs_.size() ? procs_[e.a].get() : nullptr;
  if (p == nullptr || p->timeout_key_ != e.key || !p->waiting_ || p->wait_ != e.b) return;
  Node& n = *p->node_;
  if (!n.up_) return;
  if (n.paused_) {
    n.deferred_.push_back(e);
    p->timeout_due_ = true;
    return;
  }
  p->waiting_ = false;
  p->notified_ = false;
  p->timeout_key_ = 0;
  resume(*p);
}

[[gnu::always_inline]] inline void Simulation::dispatch_callback(const Event& e) {
  if (e.a >= callbacks_.size()) return;
  Callback& cb = callbacks_[e.a];
  if (!cb.used || cb.gen != e.b) return;
  std::function<void()> fn = std::move(cb.fn);
  cb.fn = nullptr;
  cb.used = false;
  free_callbacks_.push_back(e.a);
  fn();
}

void Simulation::deliver(std::uint32_t slot) {
  InFlight& f = inflight_[slot];
  if (!f.used) return;
  Node& to = *nodes_[f.msg.to];
  if (!f.arrived) {
    // "A message is lost if any active partition blocks it at the moment it
    // is sent or at the moment it would be delivered."
    if (blocked(f.msg.from, f.msg.to) || !to.up_) {
      release_inflight(slot);
      return;
    }
    f.arrived = true;
  }
  if (!to.up_ || to.incarnation_ != f.incarnation) {
    // The receiver is down, or crashed after the send: what was sent to an
    // earlier incarnation never reaches a later one.
    release_inflight(slot);
    return;
  }
  if (to.paused_) {
    to.deferred_.push_back(Event{now_, 0, EventType::kDeliver, slot, f.msg.id});
    return;
  }
  Message msg = std::move(f.msg);
  release_inflight(slot);
  if (msg.reply_to != 0) {
    Node::PendingCall* c = to.calls_.find(msg.reply_to);
    if (c != nullptr && !c->reply) {
      const WaitHandle waiter = c->waiter;
      c->reply = std::move(msg);
      notify(waiter);
    }
    // Otherwise the call timed out and was forgotten: a late reply is
    // dropped — unless the node's behaviour awaits replies itself
    // (node code that sends without a process: a program client).
    if (c == nullptr && to.behaviour_ != nullptr && to.behaviour_->receives_replies()) to.behaviour_->on_message(msg);
    return;
  }
  if (to.behaviour_ != nullptr) to.behaviour_->on_message(msg);
}

[[gnu::always_inline]] inline void Simulation::resume(Process& p) {
  Process* previous = current_;
  current_ = &p;
  p.started_ = true;
#if defined(FENCESIM_ASAN_FIBERS)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, p.stack_bottom_, p.stack_size_);
#endif
  p.fiber_ = std::move(p.fiber_).resume();
#if defined(FENCESIM_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  current_ = previous;
  if (p.finished_) finish_process(p.slot_);
  if (!bug_.empty()) {
    std::string msg = std::move(bug_);
    bug_.clear();
    throw ModelBug(msg);
  }
}

void Simulation::cancel_process(Process& p) {
  p.cancelled_ = true;
  p.waiting_ = false;
  p.resume_pending_ = false;
  resume(p);
}

void Simulation::finish_process(std::uint32_t slot) {
  Process* p = procs_[slot].get();
  if (p == nullptr) return;
  auto& list = p->node_->processes_;
  list.erase(std::remove(list.begin(), list.end(), slot), list.end());
  procs_[slot].reset();
  free_procs_.push_back(slot);
}

}  // namespace sim
