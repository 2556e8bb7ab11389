/* real/clockshim/fencesim_clock.c — fencesim-clock.so, an LD_PRELOAD library
 * that moves a server's wall and monotonic clocks as fencesim-real's clock
 * faults say (layout and formulas: fencesim_clock.h).
 *
 * Interposed: clock_gettime (CLOCK_REALTIME and _COARSE as the wall clock;
 * CLOCK_MONOTONIC, _COARSE, _RAW and CLOCK_BOOTTIME as the monotonic clock;
 * other clocks unchanged), gettimeofday and time (wall). That is every clock
 * redis-server 7.0 reads: ustime()/mstime() (key expiry, the PX deadline of
 * SET, the Lua script's time snapshot, server.unixtime) call gettimeofday,
 * and its event loop's timers (ae.c, monotonic.c without USE_PROCESSOR_CLOCK)
 * read clock_gettime(CLOCK_MONOTONIC). Sleeps and poll/epoll timeouts are not
 * rescaled under a drift: Redis recomputes its next timer from the clock after
 * every wake-up, so a timer on a drifting clock fires at most one wait late.
 *
 * It does not reach Go programs (etcd, the etcd client helper): the Go
 * runtime reads time through the vDSO itself, not through libc.
 *
 * Without FENCESIM_CLOCK_FILE, or with a file it cannot map, every clock is
 * the real one. No allocation, no stdio, no dlsym: safe under jemalloc. */
#define _GNU_SOURCE
#include "fencesim_clock.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const volatile struct fencesim_clock_shared* shared;

__attribute__((constructor)) static void fencesim_clock_init(void) {
  const char* path = getenv("FENCESIM_CLOCK_FILE");
  if (path == NULL || *path == '\0') return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  void* m = mmap(NULL, sizeof(struct fencesim_clock_shared), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return;
  if (((const struct fencesim_clock_shared*)m)->magic != FENCESIM_CLOCK_MAGIC) {
    munmap(m, sizeof(struct fencesim_clock_shared));
    return;
  }
  shared = (const volatile struct fencesim_clock_shared*)m;
}

static int real_clock_gettime(clockid_t id, struct timespec* ts) {
  return (int)syscall(SYS_clock_gettime, id, ts);
}

struct params {
  int64_t wall, mono, anchor, rate;
};

static void read_params(struct params* p) {
  for (;;) {
    const uint64_t s1 = __atomic_load_n(&shared->seq, __ATOMIC_ACQUIRE);
    if (s1 & 1u) continue;
    p->wall = __atomic_load_n(&shared->wall_offset_ns, __ATOMIC_RELAXED);
    p->mono = __atomic_load_n(&shared->mono_offset_ns, __ATOMIC_RELAXED);
    p->anchor = __atomic_load_n(&shared->anchor_ns, __ATOMIC_RELAXED);
    p->rate = __atomic_load_n(&shared->rate_ppm, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&shared->seq, __ATOMIC_RELAXED) == s1) return;
  }
}

static int64_t ns_of(const struct timespec* ts) { return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec; }

static void set_ns(struct timespec* ts, int64_t ns) {
  int64_t s = ns / 1000000000, r = ns % 1000000000;
  if (r < 0) {
    r += 1000000000;
    s -= 1;
  }
  ts->tv_sec = (time_t)s;
  ts->tv_nsec = (long)r;
}

static int64_t drift(const struct params* p, int64_t mono_now) {
  if (p->rate == 1000000) return 0;
  return (int64_t)((__int128)(mono_now - p->anchor) * (p->rate - 1000000) / 1000000);
}

/* The fake reading of `id` over the real reading `ts` (0 when unchanged). */
static void fake(clockid_t id, struct timespec* ts) {
  struct params p;
  read_params(&p);
  switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE: {
      int64_t d = 0;
      if (p.rate != 1000000) {
        struct timespec m;
        if (real_clock_gettime(CLOCK_MONOTONIC, &m) == 0) d = drift(&p, ns_of(&m));
      }
      set_ns(ts, ns_of(ts) + p.wall + d);
      break;
    }
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_BOOTTIME: {
      const int64_t m = ns_of(ts);
      set_ns(ts, m + p.mono + drift(&p, m));
      break;
    }
    default: break;
  }
}

int clock_gettime(clockid_t id, struct timespec* ts) {
  const int r = real_clock_gettime(id, ts);
  if (r == 0 && shared != NULL) fake(id, ts);
  return r;
}

int gettimeofday(struct timeval* __restrict tv, void* __restrict tz) {
  if (tz != NULL) {
    if (syscall(SYS_gettimeofday, NULL, tz) != 0) return -1;
  }
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t time(time_t* t) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (t != NULL) *t = ts.tv_sec;
  return ts.tv_sec;
}
