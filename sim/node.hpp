// sim/node.hpp — a simulated node: its clocks, state (up, paused,
// incarnation), node-code timers, pending calls and the model's hooks.
//
// Node code (see simulation.hpp): a node's processes, its timers and the
// delivery of messages to it. A pause freezes it, a crash ends it. A node's
// clocks are a NodeClock (clock.hpp): wall and monotonic, with drift and
// steps, read against the simulation's true time.
//
// Nodes are made by Simulation::add_node and live as long as it does. Two
// small members that need the whole Simulation (`clock`, `send`) are
// defined inline at the end of simulation.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/basics.hpp"
#include "sim/clock.hpp"
#include "sim/event_queue.hpp"
#include "sim/message.hpp"
#include "sim/time.hpp"

namespace sim {

/// A model's hooks on a node. All run as node code.
class NodeBehaviour {
 public:
  virtual ~NodeBehaviour() = default;
  /// A message that is not a reply to one of this node's pending calls.
  virtual void on_message(const Message& m) { (void)m; }
  /// True: a reply that matches no pending call of a process goes to
  /// on_message too (a behaviour that sends from node code and matches
  /// replies itself, models/program/). False (the default): it is dropped,
  /// as a late reply to a call that timed out.
  virtual bool receives_replies() const { return false; }
  /// The node has just crashed: drop volatile state. Processes are already
  /// cancelled and timers dropped.
  virtual void on_crash() {}
  /// The machine is about to lose power (Simulation::power_loss calls this,
  /// then crashes the node): drop what the node had written but not yet
  /// made durable (fsync). The default keeps everything: a node that makes
  /// every write durable before acknowledging it loses nothing.
  virtual void on_power_loss() {}
  /// The node has just restarted: recover and spawn processes again.
  virtual void on_restart() {}
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

}  // namespace sim
