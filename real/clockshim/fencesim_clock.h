/* real/clockshim/fencesim_clock.h — the page fencesim-real shares with the
 * clock shim (fencesim-clock.so) preloaded into a server whose clocks a
 * scenario's clock_jump / clock_drift moves.
 *
 * The runner creates the file (FENCESIM_CLOCK_FILE), maps it read-write and
 * changes it at the fault's time; the shim maps it read-only and applies it
 * on every clock reading, so a change takes effect at the server's next
 * clock read (no cache). Readings, in nanoseconds:
 *
 *   wall = real CLOCK_REALTIME  + wall_offset_ns + drift
 *   mono = real CLOCK_MONOTONIC + mono_offset_ns + drift
 *   drift = (real CLOCK_MONOTONIC - anchor_ns) * (rate_ppm - 1000000) / 1000000
 *
 * so both clocks share one rate (as the model's clock_drift), and the
 * writer folds the drift accumulated so far into the offsets (and moves
 * anchor_ns to now) before it changes rate_ppm. Updates use a sequence lock:
 * `seq` is odd while the writer changes the fields.
 *
 * Why not libfaketime: Debian 12's libfaketime 0.9.10 hangs Debian's
 * redis-server 7.0.15 at start-up (redis-server links libjemalloc.so.2,
 * whose initialisation calls clock_gettime() while libfaketime is still
 * resolving its own symbols: "Unexpected recursive calls to clock_gettime()
 * without proper initialization", wolfcw/libfaketime#130, #327, #478; not
 * fixed upstream). This shim allocates nothing and reads the real clocks
 * with the clock_gettime system call, so it has no such recursion.
 */
#ifndef FENCESIM_CLOCK_H
#define FENCESIM_CLOCK_H

#include <stdint.h>

#define FENCESIM_CLOCK_MAGIC 0x314b434f4c435346ull /* "FSCLOCK1" */

struct fencesim_clock_shared {
  uint64_t magic;
  uint64_t seq;           /* even: stable; odd: being written */
  int64_t wall_offset_ns; /* added to CLOCK_REALTIME (gettimeofday, time) */
  int64_t mono_offset_ns; /* added to CLOCK_MONOTONIC (and _COARSE, _RAW, BOOTTIME) */
  int64_t anchor_ns;      /* real CLOCK_MONOTONIC from which rate_ppm applies */
  int64_t rate_ppm;       /* 1000000: the real rate; 880000: 12 % slow */
};

#endif
