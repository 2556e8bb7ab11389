// sim/event_queue.hpp — the engine's priority queue of events.
//
// Events are 32-byte plain values ordered by (time, key). The key packs a
// priority class in its top two bits and a strictly increasing sequence
// number in the rest, so the order is *total*: no two events compare equal,
// and events of one class at the same time run in the order they were
// scheduled (FIFO). Classes, from first to last at one instant:
//   kFault   fault starts and ends ("a fault takes effect before any other
//            event scheduled for the same instant", SCENARIO_FORMAT.md)
//   kReplay  events that fell due while their node was paused, replayed at
//            the pause's end in the order they fell due
//   kNormal  everything else
// The queue is a 4-ary min-heap on a contiguous vector: no allocation per
// event once the vector has grown, and shallower than a binary heap.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.hpp"

namespace sim {

enum class EventClass : std::uint8_t { kFault = 0, kReplay = 1, kNormal = 2 };

/// What an event does; interpreted by Simulation::dispatch (no virtual call,
/// no std::function on the hot path).
enum class EventType : std::uint32_t {
  kResume,    ///< a = process slot, b = wait serial: wake a blocked process
  kTimer,     ///< a = timer slot, b = timer generation: a node clock timer
  kDeliver,   ///< a = message slot, b = message serial: network delivery
  kCallback,  ///< a = callback slot, b = generation: a scheduled function
  kUser,      ///< a, b free: for benchmarks and tests of the queue itself
  kTimeout,   ///< a = process slot, b = wait serial: the deadline of a wait
};

struct Event {
  Time time;
  std::uint64_t key;  ///< class << 62 | sequence
  EventType type;
  std::uint32_t a;
  std::uint64_t b;

  friend bool operator<(const Event& x, const Event& y) {
    return x.time != y.time ? x.time < y.time : x.key < y.key;
  }
};
static_assert(sizeof(Event) == 32, "events stay 32 bytes");

class EventQueue {
 public:
  /// Schedules an event; returns its key. Amortised O(log4 n), no allocation
  /// once the heap has grown to its working size.
  std::uint64_t push(Time t, EventClass c, EventType type, std::uint32_t a, std::uint64_t b) {
    const std::uint64_t key = (static_cast<std::uint64_t>(c) << 62) | seq_++;
    heap_.push_back(Event{t, key, type, a, b});
    sift_up(heap_.size() - 1);
    return key;
  }

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    Event out = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return out;
  }

  void reserve(std::size_t n) { heap_.reserve(n); }
  void clear() {
    heap_.clear();
    seq_ = 0;
  }

 private:
  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / 4;
      if (!(e < heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  // Places `e` (the old last element) starting from the root.
  void sift_down(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (heap_[c] < heap_[best]) best = c;
      }
      if (!(heap_[best] < e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace sim
