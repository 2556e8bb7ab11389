#include "sim/simulation.hpp"

#include <algorithm>
#include <boost/context/fixedsize_stack.hpp>
#include <boost/context/stack_context.hpp>

#if defined(FENCESIM_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif

namespace sim {

namespace ctx = boost::context;

// Stacks are pooled and reused: a short run costs microseconds to set up and
// tear down, and a process that finishes hands its stack to the next spawn.
class detail::StackPool {
 public:
  explicit StackPool(std::size_t bytes) : fixed_(bytes) {}
  ~StackPool() {
    for (ctx::stack_context& sc : free_) fixed_.deallocate(sc);
  }
  ctx::stack_context allocate() {
    if (!free_.empty()) {
      last_ = free_.back();
      free_.pop_back();
      return last_;
    }
    last_ = fixed_.allocate();
    return last_;
  }
  void deallocate(ctx::stack_context& sc) noexcept { free_.push_back(sc); }
  const ctx::stack_context& last() const { return last_; }

 private:
  ctx::fixedsize_stack fixed_;
  std::vector<ctx::stack_context> free_;
  ctx::stack_context last_{};
};

namespace {
struct PooledStack {
  detail::StackPool* pool;
  ctx::stack_context allocate() { return pool->allocate(); }
  void deallocate(ctx::stack_context& sc) noexcept { pool->deallocate(sc); }
};

#if defined(FENCESIM_ASAN_FIBERS)
constexpr std::size_t kDefaultStack = 512 * 1024;
#else
constexpr std::size_t kDefaultStack = 128 * 1024;
#endif
}  // namespace

// ---------------------------------------------------------------- Node ----

void Node::spawn(std::string name, std::function<void(Process&)> body) {
  Simulation& s = *sim_;
  if (!up_) throw ModelBug("spawn on a down node " + name_);
  std::uint32_t slot;
  if (!s.free_procs_.empty()) {
    slot = s.free_procs_.back();
    s.free_procs_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(s.procs_.size());
    s.procs_.emplace_back();
    s.stack_hints_.push_back(nullptr);
  }
  auto p = std::make_unique<Process>();
  p->node_ = this;
  p->name_ = std::move(name);
  p->slot_ = slot;
  p->body_ = std::move(body);
  Process* raw = p.get();
  Simulation* sp = &s;
  p->fiber_ = ctx::fiber(std::allocator_arg, PooledStack{s.stacks_.get()}, [sp, raw](ctx::fiber&& caller) {
    raw->caller_ = std::move(caller);
#if defined(FENCESIM_ASAN_FIBERS)
    __sanitizer_finish_switch_fiber(nullptr, &raw->caller_bottom_, &raw->caller_size_);
#endif
    try {
      // A process cancelled before it ever ran is started only to end: its
      // fiber then finishes on the annotated path (see Simulation::crash).
      if (!raw->cancelled_) raw->body_(*raw);
    } catch (const Cancelled&) {
      // The node crashed: the process ends here.
    } catch (const ctx::detail::forced_unwind&) {
      throw;
    } catch (const std::exception& e) {
      sp->bug_ = "process " + raw->name_ + " on " + raw->node_->name() + " threw: " + e.what();
    } catch (...) {
      sp->bug_ = "process " + raw->name_ + " on " + raw->node_->name() + " threw a non-standard exception";
    }
    raw->finished_ = true;
    raw->body_ = nullptr;
#if defined(FENCESIM_ASAN_FIBERS)
    __sanitizer_start_switch_fiber(nullptr, raw->caller_bottom_, raw->caller_size_);
#endif
    return std::move(raw->caller_);
  });
  const ctx::stack_context& sc = s.stacks_->last();
  p->stack_size_ = sc.size;
  p->stack_bottom_ = static_cast<char*>(sc.sp) - sc.size;
  p->wait_ = s.next_wait_++;
  p->resume_pending_ = true;
  s.procs_[slot] = std::move(p);
  s.stack_hints_[slot] = nullptr;
  processes_.push_back(slot);
  s.queue_.push(s.now_, EventClass::kNormal, EventType::kResume, slot, raw->wait_);
}

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

// ------------------------------------------------------------- Process ----

WaitHandle Process::prepare_wait() {
  Simulation& s = sim();
  if (s.current_ != this) throw ModelBug("prepare_wait outside the running process " + name_);
  wait_ = s.next_wait_++;
  waiting_ = true;
  notified_ = false;
  return WaitHandle{slot_, wait_};
}

std::uint64_t Process::send_request(NodeId to, PayloadPtr body) {
  const std::uint64_t id = node_->send(to, std::move(body));
  node_->calls_.add(id);
  return id;
}

std::optional<Message> Process::await_reply(std::uint64_t call, Time monotonic_deadline) {
  Node::PendingCall* c = node_->calls_.find(call);
  if (c == nullptr) return std::nullopt;
  if (!c->reply) {
    c->waiter = prepare_wait();
    block(ClockKind::kMonotonic, monotonic_deadline);
    c = node_->calls_.find(call);  // (the table may have changed meanwhile)
    if (c == nullptr) return std::nullopt;
  }
  if (!c->reply.has_value()) {
    node_->calls_.erase(c);
    return std::nullopt;
  }
  std::optional<Message> out = std::move(c->reply);
  node_->calls_.erase(c);
  return out;
}

// ---------------------------------------------------------- Simulation ----

Simulation::Simulation(std::uint64_t seed, std::size_t stack_bytes)
    : seed_(seed),
      net_rng_(Rng::stream(seed, "network")),
      stacks_(std::make_unique<detail::StackPool>(stack_bytes ? stack_bytes : kDefaultStack)) {}

Simulation::~Simulation() {
  // Unwind every live process cleanly so that its stack returns to the pool
  // and its locals are destroyed, before the pool goes.
  for (std::uint32_t slot = 0; slot < procs_.size(); ++slot) {
    Process* p = procs_[slot].get();
    if (p == nullptr) continue;
    if (!p->finished_) {
      p->cancelled_ = true;
      p->waiting_ = false;
      try {
        resume(*p);
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
  for (bool more = true; more;) {
    if (budget >= max_events || queue_.size() > max_pending) {
      if (queue_.due(end)) return RunStatus::kEventBudgetExceeded;
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
      // (A few hundred processes stay in the caches; then the prefetch is waste.)
      if (procs_.size() > 256 && !queue_.empty()) prefetch(queue_.top());
      dispatch(e);
    }
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
// simulation.hpp.
[[gnu::always_inline]] inline void Simulation::dispatch(const Event& e) {
  switch (e.type) {
    case EventType::kResume: {
      Process* p = e.a < procs_.size() ? procs_[e.a].get() : nullptr;
      if (p == nullptr || !p->resume_pending_ || p->wait_ != e.b) return;
      Node& n = *p->node_;
      if (!n.up_) return;
      bool deferred;
      defer_or(n, e, deferred);
      if (deferred) return;
      p->resume_pending_ = false;
      resume(*p);
      return;
    }
    case EventType::kTimer: {
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
        // Periodic: re-armed after the callback, unless it cancelled the
        // timer (its generation moved on) — as if the callback's last step
        // had been `after(period, ...)`.
        const std::uint32_t gen = t.gen;
        const NodeId node = t.node;
        fn();
        Timer& again = timers_[e.a];
        if (!again.active || again.gen != gen) return;
        again.fn = std::move(fn);
        again.clock = ClockKind::kMonotonic;
        again.deadline = nodes_[node]->monotonic() + again.period;
        again.due = false;
        ++again.resched;  // no event queued for an earlier arming can match now
        schedule_timer(e.a);
        return;
      }
      free_timer(e.a);
      if (fn) fn();
      return;
    }
    case EventType::kTimeout: {
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
      return;
    }
    case EventType::kDeliver: deliver(e.a); return;
    case EventType::kCallback: {
      if (e.a >= callbacks_.size()) return;
      Callback& cb = callbacks_[e.a];
      if (!cb.used || cb.gen != e.b) return;
      std::function<void()> fn = std::move(cb.fn);
      cb.fn = nullptr;
      cb.used = false;
      free_callbacks_.push_back(e.a);
      fn();
      return;
    }
    case EventType::kUser: return;
  }
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
    // Otherwise the call timed out and was forgotten: a late reply is dropped.
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

void Simulation::finish_process(std::uint32_t slot) {
  Process* p = procs_[slot].get();
  if (p == nullptr) return;
  auto& list = p->node_->processes_;
  list.erase(std::remove(list.begin(), list.end(), slot), list.end());
  procs_[slot].reset();
  free_procs_.push_back(slot);
}

std::uint64_t Simulation::send(NodeId from, NodeId to, PayloadPtr body, std::uint64_t reply_to) {
  const std::uint64_t id = next_msg_++;
  Node& src = *nodes_[from];
  if (!src.up_) return id;
  if (blocked(from, to)) return id;
  if (net_.loss_ppb != 0 && net_rng_.chance(net_.loss_ppb, 1'000'000'000ULL)) return id;
  Duration latency =
      net_.latency_min == net_.latency_max ? net_.latency_min : net_rng_.uniform(net_.latency_min, net_.latency_max);
  // The network's own jitter never reorders a channel (FIFO like a TCP
  // connection); `slow` then adds its delay to this message alone, as
  // SCENARIO_FORMAT.md says ("adds its delay to messages sent while it is
  // active"), so a message sent after a slowdown ends is not held behind
  // the slowed ones.
  Time base = now_ + latency;
  Time& last = channel_last_[from * channel_stride_ + to];
  if (base < last) base = last;
  last = base;
  const Time at = base + src.slow_ + nodes_[to]->slow_;
  std::uint32_t slot;
  if (free_inflight_ != UINT32_MAX) {
    slot = free_inflight_;
    free_inflight_ = inflight_[slot].next_free;
  } else {
    slot = static_cast<std::uint32_t>(inflight_.size());
    inflight_.emplace_back();
  }
  InFlight& f = inflight_[slot];
  f.msg.from = from;
  f.msg.to = to;
  f.msg.id = id;
  f.msg.reply_to = reply_to;
  f.msg.sent_at = now_;
  f.msg.body = std::move(body);  // the slot's body is empty: released at delivery
  f.used = true;
  f.arrived = false;
  f.incarnation = nodes_[to]->incarnation_;
  queue_.push(at, EventClass::kNormal, EventType::kDeliver, slot, id);
  return id;
}

namespace {
bool contains(const std::vector<NodeId>& v, NodeId n) { return std::find(v.begin(), v.end(), n) != v.end(); }
int group_of(const Partition& p, NodeId n) {
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    if (contains(p.groups[g], n)) return static_cast<int>(g);
  }
  return -1;
}
}  // namespace

bool Simulation::partitioned(NodeId from, NodeId to) const {
  for (const auto& [id, p] : partitions_) {
    if (!p.isolate.empty()) {
      const bool fi = contains(p.isolate, from);
      const bool ti = contains(p.isolate, to);
      if (p.one_way ? (fi && !ti) : (fi != ti)) return true;
    } else {
      const int gf = group_of(p, from);
      const int gt = group_of(p, to);
      if (gf < 0 || gt < 0 || gf == gt) continue;
      if (!p.one_way || gf == 0) return true;
    }
  }
  return false;
}

std::uint64_t Simulation::add_partition(Partition p) {
  const std::uint64_t id = next_partition_++;
  partitions_.emplace(id, std::move(p));
  return id;
}

void Simulation::remove_partition(std::uint64_t id) { partitions_.erase(id); }

void Simulation::heal() { partitions_.clear(); }

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
  // Cancel processes by unwinding them.
  const std::vector<std::uint32_t> live = node.processes_;
  for (std::uint32_t slot : live) {
    Process* p = procs_[slot].get();
    if (p == nullptr) continue;
    // Also a process that has not started yet is resumed once, to end: a
    // fiber destroyed unstarted would unwind on its own stack without the
    // sanitizer's fiber annotations.
    p->cancelled_ = true;
    p->waiting_ = false;
    p->resume_pending_ = false;
    resume(*p);
  }
  node.calls_.clear();
  if (node.behaviour_ != nullptr) node.behaviour_->on_crash();
}

void Simulation::restart(NodeId n) {
  Node& node = *nodes_[n];
  if (node.up_) return;
  node.up_ = true;
  if (node.behaviour_ != nullptr) node.behaviour_->on_restart();
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
