// sim/heap.hpp — process-wide allocator setting for programs that run many
// simulations one after another.
//
// A run allocates a few megabytes (its history, Raft events, resource
// operations) and frees them all at its end. By default glibc gives the top
// of the heap back to the OS once more than a threshold is free, and serves
// large blocks with mmap; the next run then faults every page in again. In a
// seed sweep, `fencesim matrix` or a benchmark that costs ≈ 10 % of the time
// (measured on the etcd benchmark: kernel page faults and first touches of
// fresh pages). `keep_heap_between_runs()` keeps freed memory in the heap
// instead, at the price of the process holding its peak heap until it exits.
//
// A program linked with mimalloc (FENCESIM_MIMALLOC, see CMakeLists.txt)
// gets the same from mimalloc: freed memory is not decommitted.
//
// Call it once, early in main(). It changes where memory comes from, never
// what a run does. glibc or mimalloc only; elsewhere it does nothing.
#pragma once

#if defined(FENCESIM_MIMALLOC)
#include <mimalloc.h>

#include <cerrno>
#include <new>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sim {

inline void keep_heap_between_runs() {
#if defined(FENCESIM_MIMALLOC)
  // Also what ties the program to mimalloc: linked and called, it serves
  // malloc and operator new for the whole process.
  mi_option_disable(mi_option_allow_decommit);
  // Debian's mimalloc is built as C: out of memory in `operator new`, it
  // aborts (exit 134, no message) where the C++ library throws
  // std::bad_alloc, and it never sees a C++ new-handler. Its error callback
  // runs first: throwing std::bad_alloc from there makes fencesim report an
  // internal error (exit 3) as it does with glibc's malloc.
  mi_register_error(
      [](int err, void*) {
        if (err == ENOMEM) throw std::bad_alloc();
      },
      nullptr);
#endif
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);   // blocks up to 32 MiB from the heap, not mmap
  mallopt(M_TRIM_THRESHOLD, 256 << 20);  // give memory back only beyond 256 MiB free
#endif
}

}  // namespace sim
