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
// The queue is a vector sorted latest-first while it holds at most 64
// events (a simulation's usual few dozen: a pop moves nothing), and a 4-ary
// min-heap on a contiguous, cache-line-aligned vector beyond that: no
// allocation per event once the storage has grown, shallower than a binary
// heap, and each node's four children share two cache lines.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

  friend bool operator<(const Event& x, const Event& y) {
    return x.time != y.time ? x.time < y.time : x.key < y.key;
  }
};
static_assert(sizeof(Event) == 32, "events stay 32 bytes");
static_assert(std::is_trivially_copyable_v<Event>, "the sorted queue moves events with memmove");

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
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
};
}  // namespace detail

class EventQueue {
 public:
  /// Schedules an event; returns its key. O(n) moves of 32 bytes while the
  /// queue is small (sorted mode), amortised O(log4 n) beyond; no allocation
  /// once the storage has grown to its working size.
  std::uint64_t push(Time t, EventClass c, EventType type, std::uint32_t a, std::uint64_t b) {
    const std::uint64_t key = (static_cast<std::uint64_t>(c) << 62) | seq_++;
    const Event e{t, key, type, a, b};
    if (sorted_mode_) {
      if (sorted_.size() < kSortedMax) {
        sorted_insert(e);
        return key;
      }
      to_heap();
    }
    slots_.push_back(e);
    sift_up(heap_size() - 1);
    return key;
  }

  bool empty() const { return size() == 0; }
  std::size_t size() const { return sorted_mode_ ? sorted_.size() : heap_size(); }
  /// The earliest event. Precondition: !empty().
  const Event& top() const { return sorted_mode_ ? sorted_.back() : slots_[kPad]; }

  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    if (sorted_mode_) {
      const Event out = sorted_.back();
      sorted_.pop_back();
      return out;
    }
    Event out = slots_[kPad];
    Event last = slots_.back();
    slots_.pop_back();
    if (heap_size() != 0) sift_down(last);
    if (heap_size() < kSortedMin) to_sorted();
    return out;
  }

  void reserve(std::size_t n) {
    sorted_.reserve(std::min(n, kSortedMax));
    slots_.reserve(n + kPad);
  }
  void clear() {
    sorted_.clear();
    slots_.resize(kPad);
    sorted_mode_ = true;
    seq_ = 0;
  }

 private:
  // Two representations, the same order. A simulation mostly has a few dozen
  // pending events; then a vector sorted latest-first is cheapest: the
  // earliest event is at the back (a pop moves nothing), and a new event,
  // usually due soon, is walked in from the back (see sorted_insert).
  // Beyond kSortedMax events the insertions' moves grow too long, and the
  // queue turns into a 4-ary heap until it shrinks below kSortedMin (the gap
  // keeps it from switching back and forth). Either way events come out in
  // (time, key) order, which is total: the representation never shows.
  static constexpr std::size_t kSortedMax = 64;
  static constexpr std::size_t kSortedMin = 40;

  void sorted_insert(const Event& e) {
    // Most new events are due soon and belong near the back (in the etcd
    // run 70 % land within 3 slots of it): walk from the back a few steps,
    // moving each earlier event up by one, as insertion sort does.
    sorted_.push_back(e);
    Event* a = sorted_.data();
    std::size_t i = sorted_.size() - 1;  // the free slot
    for (int step = 0; step < 8; ++step) {
      if (i == 0 || !(a[i - 1] < e)) {
        a[i] = e;
        return;
      }
      a[i] = a[i - 1];
      --i;
    }
    // Further in: a branch-free lower bound over [0, i) for the first event
    // earlier than e (the partition point stays within [base, base + n]),
    // then one block move.
    const Event* base = a;
    std::size_t n = i;
    while (n > 1) {
      const std::size_t half = n / 2;
      base = e < base[half] ? base + half : base;
      n -= half;
    }
    const std::size_t pos = static_cast<std::size_t>(base - a) + (n == 1 && e < *base ? 1 : 0);
    std::memmove(static_cast<void*>(a + pos + 1), a + pos, (i - pos) * sizeof(Event));
    a[pos] = e;
  }
  void to_heap() {
    // Earliest first is a valid heap already.
    slots_.resize(kPad);
    slots_.insert(slots_.end(), sorted_.rbegin(), sorted_.rend());
    sorted_.clear();
    sorted_mode_ = false;
  }
  void to_sorted() {
    sorted_.assign(slots_.begin() + kPad, slots_.end());
    std::sort(sorted_.begin(), sorted_.end(), [](const Event& x, const Event& y) { return y < x; });
    slots_.resize(kPad);
    sorted_mode_ = true;
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
  Storage slots_ = Storage(kPad);
  std::vector<Event> sorted_;  ///< sorted mode: latest first, the earliest at the back
  bool sorted_mode_ = true;
  std::uint64_t seq_ = 0;
};

}  // namespace sim
