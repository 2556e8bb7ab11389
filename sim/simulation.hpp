// sim/simulation.hpp — the deterministic discrete-event engine.
//
// One `Simulation` owns simulated true time, the event queue, the nodes, the
// network, the fiber processes and the trace. Nothing is global: two
// simulations in one process are independent (SimCpp20 style).
//
// Shape of a run:
//
//   sim::Simulation s(/*seed=*/42);
//   sim::Node& a = s.add_node("A");
//   sim::Node& b = s.add_node("B");
//   b.set_behaviour(&echo_server);           // handles requests in on_message
//   a.spawn("client", [&](sim::Process& p) {
//     p.sleep(100ms);                         // on A's monotonic clock
//     auto reply = p.call(b.id(), make_request(), 1s);
//     if (!reply) { /* timed out on A's monotonic clock */ }
//   });
//   s.run_until(60s);
//
// Ordering. Events are ordered by (true time, class, sequence); the order is
// total (see event_queue.hpp), so a run is a pure function of its inputs and
// seed. Only the scheduler resumes fibers; exactly one runs at a time.
//
// Node code. A node's processes, its timers and the delivery of messages to
// it are *node code*: a pause freezes all of it (what fell due during the
// pause runs at its end in the order it fell due; clocks keep running), and
// a crash ends it (processes are cancelled by unwinding with `Cancelled`,
// timers dropped, messages sent to the crashed incarnation lost even if the
// node is back when they arrive). Observers — the
// fault script and the models' bookkeeping of what the service holds — use
// `Simulation::at` and observer timers, which no pause or crash affects.
//
// Errors. Model bugs (a broken invariant) throw `ModelBug`, which ends the
// run; callers report it with the seed.
#pragma once

#include <boost/context/fiber.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "sim/clock.hpp"
#include "sim/event_queue.hpp"
#include "sim/payload_pool.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

#if defined(FENCESIM_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif

namespace sim {

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = UINT32_MAX;

class Simulation;
class Node;
class Process;
namespace detail {
class StackPool;  // pooled fiber stacks (simulation.cpp)
}

/// Thrown inside a process when its node crashes; unwinds the fiber. Model
/// code must not swallow it (never `catch (...)` without rethrowing).
struct Cancelled {};

/// A broken invariant in a model or the engine: a bug, not a user error.
struct ModelBug : std::logic_error {
  using std::logic_error::logic_error;
};

/// Base of every message body. `describe()` is for traces and debugging.
class Payload {
 public:
  virtual ~Payload() = default;
  virtual std::string describe() const = 0;
};
using PayloadPtr = std::shared_ptr<const Payload>;

struct Message {
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  std::uint64_t id = 0;        ///< unique per simulation, > 0
  std::uint64_t reply_to = 0;  ///< id of the request this answers, or 0
  Time sent_at{0};             ///< true time of sending
  PayloadPtr body;

  /// The body as a T, or nullptr. For a `final` T one type_info comparison
  /// decides (a T's dynamic type can only be T), cheaper than dynamic_cast,
  /// which walks the class hierarchy on every miss.
  template <class T>
  const T* as() const {
    const Payload* p = body.get();
    if (p == nullptr) return nullptr;
    if constexpr (std::is_final_v<T>) {
      return typeid(*p) == typeid(T) ? static_cast<const T*>(p) : nullptr;
    } else {
      return dynamic_cast<const T*>(p);
    }
  }
};

/// A model's hooks on a node. All run as node code.
class NodeBehaviour {
 public:
  virtual ~NodeBehaviour() = default;
  /// A message that is not a reply to one of this node's pending calls.
  virtual void on_message(const Message& m) { (void)m; }
  /// The node has just crashed: drop volatile state. Processes are already
  /// cancelled and timers dropped.
  virtual void on_crash() {}
  /// The node has just restarted: recover and spawn processes again.
  virtual void on_restart() {}
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

/// Network settings. Latency is uniform in [latency_min, latency_max] (equal
/// bounds: fixed), loss is an integer ratio in parts per billion.
struct NetworkConfig {
  Duration latency_min{1'000'000};
  Duration latency_max{1'000'000};
  std::uint64_t loss_ppb = 0;
};

/// A partition (SCENARIO_FORMAT.md `partition`): either `groups` (nodes in
/// different groups cannot exchange messages; unlisted nodes reach everyone)
/// or `isolate` (cut from all others). With `one_way`, only messages *from*
/// the first group (or the isolated nodes) are blocked.
struct Partition {
  std::vector<std::vector<NodeId>> groups;
  std::vector<NodeId> isolate;
  bool one_way = false;
};

class Node {
 public:
  NodeId id() const { return id_; }
  const std::string& name() const { return name_; }
  Simulation& sim() const { return *sim_; }

  /// Readings of this node's clocks now, in ns (see clock.hpp).
  Time clock(ClockKind k) const;
  Time wall() const { return clock(ClockKind::kWall); }
  Time monotonic() const { return clock(ClockKind::kMonotonic); }
  const NodeClock& clocks() const { return clock_; }

  bool up() const { return up_; }
  bool paused() const { return paused_; }
  std::uint64_t incarnation() const { return incarnation_; }

  void set_behaviour(NodeBehaviour* b) { behaviour_ = b; }

  /// Starts a process on this node; it first runs at the current instant,
  /// after events already scheduled for it.
  void spawn(std::string name, std::function<void(Process&)> body);

  /// Node-code timer: runs `fn` when this node's clock `k` reads `reading`
  /// (a clock step moves it). Frozen by a pause, dropped by a crash.
  TimerId at_clock(ClockKind k, Time reading, std::function<void()> fn);
  /// Node-code timer `d` from now on the monotonic clock.
  TimerId after(Duration d, std::function<void()> fn) {
    return at_clock(ClockKind::kMonotonic, monotonic() + d, std::move(fn));
  }
  /// Periodic node-code timer on the monotonic clock: `fn` runs `period`
  /// from now, and each time it has run, again `period` after that moment.
  /// Exactly `after(period, ...)` re-armed by `fn` as its last step (the
  /// next firing is measured from when this one ran, so a pause delays
  /// the beat rather than bunching it), without a new timer per beat. The
  /// TimerId stays valid until `cancel` or a crash ends the timer.
  TimerId every(Duration period, std::function<void()> fn);
  void cancel(TimerId t);

  /// Sends a message from this node; returns its id. See Simulation::send.
  std::uint64_t send(NodeId to, PayloadPtr body, std::uint64_t reply_to = 0);
  /// Gives up on a pending call of one of this node's processes: its
  /// `await_reply` returns nothing at once (before its deadline), and a
  /// reply that arrives later is dropped. Used when a client learns that the
  /// server it asked is no longer the one to ask (a failover announcement).
  void abandon_call(std::uint64_t call);
  /// Answers `request` (a message this node received).
  void reply(const Message& request, PayloadPtr body) { send(request.from, std::move(body), request.id); }

 private:
  friend class Simulation;
  friend class Process;
  struct PendingCall {
    std::uint64_t id = 0;  ///< the request's message id
    WaitHandle waiter;
    std::optional<Message> reply;
  };
  /// The node's calls awaiting replies: one per waiting process, so a few.
  /// A vector searched linearly; nothing iterates it, so its order (an
  /// erase moves the last call into the gap) never shows.
  struct PendingCalls {
    std::vector<PendingCall> items;
    PendingCall* find(std::uint64_t id) {
      for (PendingCall& c : items) {
        if (c.id == id) return &c;
      }
      return nullptr;
    }
    void add(std::uint64_t id) { items.push_back(PendingCall{id, {}, std::nullopt}); }
    void erase(PendingCall* c) {
      if (c != &items.back()) *c = std::move(items.back());
      items.pop_back();
    }
    void erase(std::uint64_t id) {
      if (PendingCall* c = find(id)) erase(c);
    }
    void clear() { items.clear(); }
  };

  Simulation* sim_ = nullptr;
  NodeId id_ = kNoNode;
  std::string name_;
  NodeClock clock_;
  bool up_ = true;
  bool paused_ = false;
  Time pause_until{0};
  std::uint64_t incarnation_ = 0;
  NodeBehaviour* behaviour_ = nullptr;
  std::vector<Event> deferred_;            // fell due while paused, in due order
  std::vector<std::uint32_t> processes_;   // live process slots
  std::uint32_t timer_head_ = UINT32_MAX;  // intrusive list of pending timers
  PendingCalls calls_;
  Duration slow_{0};
};

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
  /// dropped", SCENARIO_FORMAT.md).
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

enum class RunStatus { kDone, kEventBudgetExceeded };

class Simulation {
 public:
  /// `stack_bytes`: fiber stack size (pooled and reused).
  explicit Simulation(std::uint64_t seed, std::size_t stack_bytes = 0);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  std::uint64_t seed() const { return seed_; }
  /// Current true time. Models decide on node clocks; true time is for the
  /// history and observers only.
  Time now() const { return now_; }

  /// The named PRNG sub-stream (Rng::stream(seed, name)).
  Rng rng(std::string_view name) const { return Rng::stream(seed_, name); }

  Node& add_node(std::string name);
  Node& node(NodeId id) { return *nodes_[id]; }
  const Node& node(NodeId id) const { return *nodes_[id]; }
  std::size_t node_count() const { return nodes_.size(); }
  std::optional<NodeId> find_node(std::string_view name) const;

  // --- scheduling -------------------------------------------------------
  /// Observer callback at true time `t` (>= now), unaffected by pauses and
  /// crashes. Faults use EventClass::kFault.
  void at(Time t, std::function<void()> fn, EventClass c = EventClass::kNormal);
  /// Observer timer on a node's clock: fires when node `n`'s clock `k`
  /// reads `reading`, moving with its steps, but ignoring pauses/crashes.
  TimerId observe_clock(NodeId n, ClockKind k, Time reading, std::function<void()> fn);
  void cancel(TimerId t);
  /// Wakes a blocked process (no-op if that wait already ended).
  void notify(WaitHandle h);

  /// Runs events until true time `end` (inclusive) or the queue is empty.
  /// Stops with kEventBudgetExceeded after `max_events` events, or as soon
  /// as more than `max_pending` events wait in the queue at once (a run
  /// that schedules faster than it runs would otherwise grow without bound:
  /// each waiting message holds its payload).
  RunStatus run_until(Time end, std::uint64_t max_events = UINT64_MAX, std::size_t max_pending = SIZE_MAX);
  std::uint64_t events_processed() const { return events_processed_; }
  bool has_pending_events() const { return !queue_.empty(); }

  // --- network ----------------------------------------------------------
  void set_network(const NetworkConfig& c) { net_ = c; }
  const NetworkConfig& network() const { return net_; }
  /// Sends a message. It is lost when the sender is down, a partition blocks
  /// it now or at delivery, the loss draw says so, or the receiver is down
  /// at delivery or has crashed since the send (like a TCP connection, it
  /// does not reach the receiver's next incarnation). Latency jitter never
  /// reorders a (from, to) channel (FIFO like a TCP connection); a `slow`
  /// delay is then added to each message on its own, so a message sent
  /// after a slowdown ends is not held behind the slowed ones.
  std::uint64_t send(NodeId from, NodeId to, PayloadPtr body, std::uint64_t reply_to = 0);
  bool blocked(NodeId from, NodeId to) const { return from != to && !partitions_.empty() && partitioned(from, to); }
  bool partitioned(NodeId from, NodeId to) const;
  /// Adds a partition; returns its id for `remove_partition`.
  std::uint64_t add_partition(Partition p);
  void remove_partition(std::uint64_t id);
  void heal();  ///< removes every partition
  /// Extra delay on every message to or from `n` sent from now on (adds up).
  void add_slow(NodeId n, Duration extra) { nodes_[n]->slow_ += extra; }

  // --- faults on nodes ----------------------------------------------------
  /// Freezes node `n` until now + d (a pause of a paused node extends it to
  /// the later end). No effect on a down node.
  void pause(NodeId n, Duration d);
  void crash(NodeId n);
  void restart(NodeId n);
  void clock_jump(NodeId n, ClockKind k, Duration by);
  void set_drift(NodeId n, std::int64_t ppm);

  Trace& trace() { return trace_; }
  /// Adds a trace event at the current time.
  void record(std::string_view node, std::string_view kind, std::initializer_list<TraceField> fields = {}) {
    trace_.add(now_, node, kind, fields);
  }

  /// For engine benchmarks: direct access to the queue.
  EventQueue& queue() { return queue_; }

 private:
  friend class Node;
  friend class Process;
  struct Timer {
    NodeId node = kNoNode;
    ClockKind clock = ClockKind::kMonotonic;
    Time deadline{0};
    std::uint32_t gen = 0;      // identity: bumped on allocation and free
    std::uint32_t resched = 0;  // bumped when a clock step moves the timer
    bool active = false;
    bool observer = false;
    // Fell due while its node was paused: its event waits in the node's
    // deferred list, and no later clock step moves it again.
    bool due = false;
    Time when{0};           // true time of its queued event
    std::uint64_t key = 0;  // queue key of that event: clock steps keep timer order
    Duration period{0};     // > 0: re-armed on the monotonic clock after each firing
    std::function<void()> fn;
    std::uint32_t prev = UINT32_MAX, next = UINT32_MAX;
  };
  struct InFlight {
    Message msg;
    bool used = false;
    bool arrived = false;                  // passed the partition check at arrival
    std::uint64_t incarnation = 0;         // of the receiver when sent
    std::uint32_t next_free = UINT32_MAX;  // free slots form a list through here
  };
  struct Callback {
    std::function<void()> fn;
    std::uint32_t gen = 0;
    bool used = false;
  };
  TimerId add_timer(NodeId n, ClockKind k, Time reading, bool observer, std::function<void()>&& fn,
                    Duration period = Duration{0});
  void queue_timeout(Process& p);
  void schedule_timer(std::uint32_t slot);
  void unlink_timer(std::uint32_t slot);
  void free_timer(std::uint32_t slot);
  void reschedule_clock_timers(NodeId n);
  void dispatch(const Event& e);
  void prefetch(const Event& next) const;
  void defer_or(Node& n, const Event& e, bool& deferred);
  void resume(Process& p);
  void finish_process(std::uint32_t slot);
  void end_pause(NodeId n);
  void deliver(std::uint32_t slot);
  void release_inflight(std::uint32_t slot) {
    InFlight& f = inflight_[slot];
    f.used = false;
    f.msg.body.reset();  // (a delivered message's body has been moved out already)
    f.next_free = free_inflight_;
    free_inflight_ = slot;
  }

  std::uint64_t seed_;
  Time now_{0};
  EventQueue queue_;
  std::uint64_t events_processed_ = 0;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Process>> procs_;
  std::vector<const char*> stack_hints_;  // per process slot: where its stack was last live
  std::vector<std::uint32_t> free_procs_;
  std::vector<Timer> timers_;
  std::vector<std::uint32_t> free_timers_;
  std::vector<InFlight> inflight_;
  std::uint32_t free_inflight_ = UINT32_MAX;  // head of the free slots' list
  std::vector<Callback> callbacks_;
  std::vector<std::uint32_t> free_callbacks_;
  std::uint64_t next_wait_ = 1;
  std::uint64_t next_msg_ = 1;
  std::uint64_t next_partition_ = 1;
  std::map<std::uint64_t, Partition> partitions_;
  std::vector<Time> channel_last_;  // [from * channel_stride_ + to]
  std::size_t channel_stride_ = 0;
  NetworkConfig net_;
  Rng net_rng_;
  Trace trace_;
  std::unique_ptr<detail::StackPool> stacks_;
  Process* current_ = nullptr;
  std::string bug_;  // set when a process threw something other than Cancelled
};

inline Time Node::clock(ClockKind k) const { return clock_.read(k, sim_->now()); }

inline std::uint64_t Node::send(NodeId to, PayloadPtr body, std::uint64_t reply_to) {
  return sim_->send(id_, to, std::move(body), reply_to);
}

// Fiber switches and return prediction. Boost.Context's jump_fcontext is
// entered by a call and left by an indirect jump, so after every switch the
// CPU's return stack buffer holds the other side's return addresses, and each
// `ret` into a frame made before the switch is mispredicted. So the code on
// the path of a switch is inline: a process's blocking calls here (they
// switch inside the caller's own frame), the scheduler's run_until ->
// dispatch -> resume in simulation.cpp. A process wake-up got about twice as
// fast (bench/engine_bench.cpp, docs/ENGINE.md).

inline void Process::switch_to_scheduler() {
  // Where this fiber's stack is live, for the scheduler to prefetch before
  // resuming it (see Simulation::prefetch).
  char here;
  sim().stack_hints_[slot_] = &here;
#if defined(FENCESIM_ASAN_FIBERS)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, caller_bottom_, caller_size_);
#endif
  caller_ = std::move(caller_).resume();
#if defined(FENCESIM_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(fake, &caller_bottom_, &caller_size_);
#endif
}

inline bool Process::block(ClockKind k, Time deadline) {
  if (cancelled_) throw Cancelled{};
  Simulation& s = sim();
  if (!waiting_ && !resume_pending_) prepare_wait();
  if (waiting_) {
    timeout_clock_ = k;
    timeout_deadline_ = deadline;
    timeout_due_ = false;
    s.queue_timeout(*this);
  }
  switch_to_scheduler();
  if (cancelled_) throw Cancelled{};
  timeout_key_ = 0;  // a queued timeout event is stale from now on
  return notified_;
}

inline bool Process::block_forever() {
  if (cancelled_) throw Cancelled{};
  if (!waiting_ && !resume_pending_) prepare_wait();
  switch_to_scheduler();
  if (cancelled_) throw Cancelled{};
  return notified_;
}

inline void Process::yield() {
  sim().notify(prepare_wait());
  block_forever();
}

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
