// sim/event_queue.hpp — the engine's priority queue of events.
//
// Events are 32-byte plain values ordered by (time, key). The key packs a
// priority class in its top two bits and a strictly increasing sequence
// number in the rest, so the order is *total*: no two events compare equal,
// and events of one class at the same time run in the order they were
// scheduled (FIFO). Classes, from first to last at one instant:
//   kFault   fault starts and ends ("a fault takes effect before any other
//            event scheduled for the same instant", docs/FORMAT.md)
//   kReplay  events that fell due while their node was paused, replayed at
//            the pause's end in the order they fell due
//   kNormal  everything else
// The queue has two parts, and a pop takes the earlier of their fronts:
//   near  a short array sorted latest-first (the earliest at the back: a
//         pop moves nothing). An event that belongs within kNearWalk slots
//         of its back — most new events: message deliveries, wake-ups —
//         is walked in from the back, as insertion sort does.
//   far   a 4-ary min-heap on a contiguous, cache-line-aligned vector, for
//         the rest (timers and deadlines set well ahead): O(log4 n), no
//         allocation per event once the storage has grown, and each node's
//         four children share two cache lines.
// Which part an event sits in never shows: both keep the (time, key)
// order, which is total.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
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

  friend bool operator<(const Event& x, const Event& y) { return x.time != y.time ? x.time < y.time : x.key < y.key; }
};
static_assert(sizeof(Event) == 32, "events stay 32 bytes");
static_assert(std::is_trivially_copyable_v<Event>, "events are moved as plain bytes");

namespace detail {
/// std::allocator, but 64-byte (cache line) aligned. It over-allocates by a
/// line and keeps the original pointer just below the aligned block, rather
/// than use aligned operator new: glibc's memalign splits and re-merges heap
/// chunks, which made setting up and tearing down a short run 5% slower.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    void* raw = ::operator new(n * sizeof(T) + 64);
    // At least one pointer's room below the aligned address: operator new
    // returns 16-byte-aligned memory, so the step up is 16 to 64 bytes.
    const std::uintptr_t aligned = (reinterpret_cast<std::uintptr_t>(raw) + 64) & ~std::uintptr_t{63};
    reinterpret_cast<void**>(aligned)[-1] = raw;
    return reinterpret_cast<T*>(aligned);
  }
  void deallocate(T* p, std::size_t) { ::operator delete(reinterpret_cast<void**>(p)[-1]); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};
}  // namespace detail

class EventQueue {
 public:
  /// Schedules an event; returns its key. At most kNearWalk moves of 32
  /// bytes, or O(log4 n) in the far heap; no allocation once the storage
  /// has grown to its working size.
  [[gnu::always_inline]] std::uint64_t push(Time t, EventClass c, EventType type, std::uint32_t a, std::uint64_t b) {
    const std::uint64_t key = (static_cast<std::uint64_t>(c) << 62) | seq_++;
    const Event e{t, key, type, a, b};
    const std::size_t n = near_n_;
    // The walk stops within kNearWalk steps if the event kNearWalk + 1 from
    // the back is later than e (or there is none).
    if (n < kNearCap && (n <= kNearWalk || e < near_[n - 1 - kNearWalk])) {
      near_insert(e);
    } else {
      far_push(e);
    }
    return key;
  }

  bool empty() const { return near_n_ == 0 && heap_size() == 0; }
  std::size_t size() const { return near_n_ + heap_size(); }
  /// How many events wait in the far heap (for tests of the queue).
  std::size_t far_size() const { return heap_size(); }
  /// The earliest event. Precondition: !empty().
  const Event& top() const { return from_near() ? near_[near_n_ - 1] : slots_[kPad]; }

  /// Removes the earliest event into `out` if there is one due at or before
  /// `end`; false otherwise. (One look at both parts, for the run loop.)
  bool pop_due(Time end, Event& out) {
    const bool has_heap = slots_.size() > kPad;
    if (near_n_ != 0 && (!has_heap || near_[near_n_ - 1] < slots_[kPad])) {
      if (near_[near_n_ - 1].time > end) return false;
      out = near_[--near_n_];
      return true;
    }
    if (!has_heap || slots_[kPad].time > end) return false;
    out = slots_[kPad];
    const Event last = slots_.back();
    slots_.pop_back();
    if (heap_size() != 0) sift_down(last);
    return true;
  }
  /// Whether an event is due at or before `end`.
  bool due(Time end) const { return !empty() && top().time <= end; }

  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    if (from_near()) return near_[--near_n_];
    Event out = slots_[kPad];
    Event last = slots_.back();
    slots_.pop_back();
    if (heap_size() != 0) sift_down(last);
    return out;
  }

  void reserve(std::size_t n) { slots_.reserve(n + kPad); }
  void clear() {
    near_n_ = 0;
    slots_.resize(kPad);
    seq_ = 0;
  }

 private:
  static constexpr std::size_t kNearWalk = 6;
  static constexpr std::size_t kNearCap = 128;  // a full near part sends new events to the heap

  /// Whether the earliest event is the near part's back.
  bool from_near() const {
    if (heap_size() == 0) return true;
    if (near_n_ == 0) return false;
    return near_[near_n_ - 1] < slots_[kPad];
  }

  [[gnu::noinline]] void far_push(const Event& e) {
    slots_.push_back(e);
    sift_up(heap_size() - 1);
  }

  void near_insert(const Event& e) {
    // Walk from the back, moving each earlier event up by one; push's check
    // bounds the walk to kNearWalk steps.
    Event* a = near_.data();
    std::size_t i = near_n_++;  // the free slot
    while (i > 0 && a[i - 1] < e) {
      a[i] = a[i - 1];
      --i;
    }
    a[i] = e;
  }

  // The heap starts kPad slots into cache-line-aligned storage, so that the
  // four children of every node (heap indices 4i+1 .. 4i+4) fill exactly two
  // cache lines: a level of sift_down touches two lines, never three.
  static constexpr std::size_t kPad = 3;
  static_assert((kPad + 1) * sizeof(Event) % 64 == 0);

  std::size_t heap_size() const { return slots_.size() - kPad; }
  Event* heap() { return slots_.data() + kPad; }

  void sift_up(std::size_t i) {
    Event* h = heap();
    Event e = h[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / 4;
      if (!(e < h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }
  // Places `e` (the old last element) starting from the root.
  void sift_down(const Event& e) {
    Event* h = heap();
    const std::size_t n = heap_size();
    std::size_t i = 0;
    for (;;) {
      std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (h[c] < h[best]) best = c;
      }
      if (!(h[best] < e)) break;
      h[i] = h[best];
      i = best;
    }
    h[i] = e;
  }

  using Storage = std::vector<Event, detail::CacheLineAllocator<Event>>;
  std::array<Event, kNearCap> near_;  ///< [0, near_n_): latest first, the earliest at the back
  std::size_t near_n_ = 0;
  Storage slots_ = Storage(kPad);  ///< the far heap, from index kPad
  std::uint64_t seq_ = 0;
};

}  // namespace sim
