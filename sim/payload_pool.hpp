// sim/payload_pool.hpp — recycled memory for message payloads.
//
// A run sends thousands of small messages, each a shared_ptr to a payload
// that lives from send to delivery (and keeps maps of requests in
// flight, one node per message: `PooledMap`). `make_payload<T>(args...)` builds one
// like std::make_shared, but takes the block (payload and reference counts
// together) from a free list of same-sized blocks and gives it back there,
// instead of going through malloc and free every time.
//
// Blocks are grouped in 16-byte size classes up to kMaxPooledBytes; larger
// payloads use operator new. Free lists are per thread (a simulation runs on
// one thread; runs on different threads never share a list), and the blocks
// a thread collected are freed when it exits. Under AddressSanitizer the
// pool is bypassed, so that a use after free is still reported.
// The pool changes where memory comes from, never what a run does: no
// output depends on an address.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <utility>

namespace sim {

namespace detail {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kPoolPayloads = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kPoolPayloads = false;
#else
inline constexpr bool kPoolPayloads = true;
#endif
#else
inline constexpr bool kPoolPayloads = true;
#endif

class PayloadPool {
 public:
  static constexpr std::size_t kGranule = 16;
  static constexpr std::size_t kMaxPooledBytes = 512;

  static void* allocate(std::size_t bytes) {
    if (!kPoolPayloads || bytes > kMaxPooledBytes) return ::operator new(bytes);
    FreeBlock*& head = lists().heads[class_of(bytes)];
    if (head == nullptr) return ::operator new(rounded(bytes));
    FreeBlock* b = head;
    head = b->next;
    return b;
  }
  static void deallocate(void* p, std::size_t bytes) noexcept {
    if (!kPoolPayloads || bytes > kMaxPooledBytes) {
      ::operator delete(p);
      return;
    }
    FreeBlock*& head = lists().heads[class_of(bytes)];
    head = ::new (p) FreeBlock{head};
  }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  struct Lists {
    std::array<FreeBlock*, kMaxPooledBytes / kGranule + 1> heads{};
    Lists() = default;
    Lists(const Lists&) = delete;
    Lists& operator=(const Lists&) = delete;
    ~Lists() {
      for (FreeBlock*& head : heads) {
        while (head != nullptr) {
          FreeBlock* next = head->next;
          ::operator delete(head);
          head = next;
        }
      }
    }
  };
  static std::size_t class_of(std::size_t bytes) { return (bytes + kGranule - 1) / kGranule; }
  static std::size_t rounded(std::size_t bytes) { return class_of(bytes) * kGranule; }
  static Lists& lists() {
    thread_local Lists l;
    return l;
  }
};

/// The allocator `make_payload` hands to std::allocate_shared: single
/// blocks come from the pool, arrays from operator new.
template <class T>
struct PooledAllocator {
  using value_type = T;
  PooledAllocator() = default;
  template <class U>
  PooledAllocator(const PooledAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(std::size_t n) {
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(PayloadPool::allocate(sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n != 1) {
      ::operator delete(p);
      return;
    }
    PayloadPool::deallocate(p, sizeof(T));
  }
  template <class U>
  bool operator==(const PooledAllocator<U>&) const {
    return true;
  }
};

}  // namespace detail

/// A std::map whose nodes come from the payload pool: for maps that gain
/// and lose an entry per message (pending calls, requests in flight).
template <class K, class V, class Less = std::less<K>>
using PooledMap = std::map<K, V, Less, detail::PooledAllocator<std::pair<const K, V>>>;

/// std::make_shared<T>(args...), with the block recycled through the
/// payload pool. Use it for message payloads (and anything as short-lived).
template <class T, class... Args>
std::shared_ptr<T> make_payload(Args&&... args) {
  return std::allocate_shared<T>(detail::PooledAllocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace sim
