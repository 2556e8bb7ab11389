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
//
// Where things are:
//   basics.hpp    NodeId, TimerId, WaitHandle, Cancelled, ModelBug
//   message.hpp   Payload, Message
//   network.hpp   NetworkConfig, Partition (the network itself is here:
//                 Simulation::send, partitions, slow; network.cpp)
//   node.hpp      Node, NodeBehaviour (node.cpp)
//   process.hpp   Process (process.cpp; its blocking calls are inline below)
//   promise.hpp   Promise, Mailbox
//   this header   the Simulation: time, queue, scheduling, faults on nodes
//                 (simulation.cpp: the scheduler; faults.cpp: pause, crash,
//                 restart, clock steps and drift)
// Including this header includes all of them.
#pragma once

#include <bit>
#include <boost/context/fiber.hpp>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/basics.hpp"
#include "sim/clock.hpp"
#include "sim/event_queue.hpp"
#include "sim/message.hpp"
#include "sim/network.hpp"
#include "sim/node.hpp"
#include "sim/payload_pool.hpp"
#include "sim/process.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

#if defined(FENCESIM_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif

namespace sim {

namespace detail {
class StackPool;  // pooled fiber stacks (stack_pool.hpp)
}

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
  /// A running hash of every event the run loop has taken from the queue,
  /// in order: its true time, its queue key (class and sequence number), its
  /// type and its a and b (slot and serial, see EventType) — stale events
  /// included. Two runs with equal fingerprints processed the same events in
  /// the same order. Depends on no address and not on the trace, so it is
  /// the same with the trace off. Not a cryptographic hash. Up to date when
  /// run_until has returned (a handler reading it sees an earlier value).
  std::uint64_t event_fingerprint() const { return event_fingerprint_; }
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
  /// Whether an active partition blocks `from` → `to` now: O(1), whatever
  /// the number of partitions (a count per ordered pair, kept by
  /// add_partition / remove_partition / heal / add_node).
  bool blocked(NodeId from, NodeId to) const { return from != to && partitioned(from, to); }
  /// How many active partitions block `from` → `to` is non-zero.
  bool partitioned(NodeId from, NodeId to) const { return cut_count_[from * channel_stride_ + to] != 0; }
  /// Adds a partition; returns its id for `remove_partition`. Costs
  /// O(nodes + pairs it blocks), once, instead of a scan per message.
  std::uint64_t add_partition(Partition p);
  void remove_partition(std::uint64_t id);  ///< an id already removed (or healed) is a no-op
  void heal();                              ///< removes every partition
  /// Extra delay on every message to or from `n` sent from now on (adds up).
  void add_slow(NodeId n, Duration extra) { nodes_[n]->slow_ += extra; }

  // --- faults on nodes ----------------------------------------------------
  /// Freezes node `n` until now + d (a pause of a paused node extends it to
  /// the later end). No effect on a down node.
  void pause(NodeId n, Duration d);
  void crash(NodeId n);
  /// A machine crash: NodeBehaviour::on_power_loss, then crash(n). No effect
  /// on a down node.
  void power_loss(NodeId n);
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
  // The scheduler (simulation.cpp): dispatch hands each event to the piece
  // for its type; all of them inline into run_until.
  /// Folds one event into the fingerprint: two multiplications, one of them
  /// independent of the running hash, so the loop hardly waits on it.
  [[gnu::always_inline]] static std::uint64_t fold_event(std::uint64_t h, const Event& e) {
    const std::uint64_t x = static_cast<std::uint64_t>(e.time.count()) ^ (e.key * 0x9E3779B97F4A7C15ULL);
    const std::uint64_t y = ((static_cast<std::uint64_t>(e.type) << 32) | e.a) ^ std::rotl(e.b, 29);
    return (std::rotl(h, 23) ^ x ^ y) * 0xFF51AFD7ED558CCDULL;
  }
  void dispatch(const Event& e);
  void dispatch_resume(const Event& e);
  void dispatch_timer(const Event& e);
  void run_periodic(std::uint32_t slot, std::function<void()>& fn);
  void dispatch_timeout(const Event& e);
  void dispatch_callback(const Event& e);
  void prefetch(const Event& next) const;
  void defer_or(Node& n, const Event& e, bool& deferred);
  void resume(Process& p);
  /// Ends process `p` by resuming it cancelled: it unwinds with `Cancelled`.
  void cancel_process(Process& p);
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
  std::uint64_t event_fingerprint_ = 0xcbf29ce484222325ULL;  // (the FNV-1a offset basis: any start would do)
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
  // [from * channel_stride_ + to]: how many of partitions_ block from → to
  // (issue #35: a scan of every partition per message made 1,000
  // overlapping partitions cost a minute).
  std::vector<std::uint32_t> cut_count_;
  std::vector<Time> channel_last_;  // [from * channel_stride_ + to]
  std::size_t channel_stride_ = 0;
  /// Adds `delta` (+1 or -1) to cut_count_ for every ordered pair of
  /// existing nodes that `p` blocks.
  void count_partition(const Partition& p, int delta);

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

}  // namespace sim

#include "sim/promise.hpp"  // Promise and Mailbox, which need the Simulation above
