// real/clocks.hpp — clock faults (clock_jump, clock_drift) in fencesim-real.
//
// Servers: a Redis process (redis-N or sentinel-N) that a clock fault of
// the scenario can reach (by name, or any redis-N for the role
// redis-primary) is started with fencesim-clock.so preloaded
// (real/clockshim/fencesim_clock.c) and its own control file; a fault
// rewrites that file at its scaled time, and the server's next clock read
// sees the change. Which clocks move follows the model (docs/FORMAT.md
// "clock_jump", "clock_drift"): `"clock": "wall"` moves CLOCK_REALTIME
// (gettimeofday, time) only, `"monotonic"` CLOCK_MONOTONIC only, `"both"`
// both; a drift sets the rate of both. A jump of `by` moves the real clock
// by `by` × scale (the file's durations run scale times as long); a rate is
// not scaled. Processes without a clock fault start exactly as before.
//
// Why a shim of our own and not libfaketime: Debian 12's libfaketime 0.9.10
// (FAKETIME_TIMESTAMP_FILE + FAKETIME_NO_CACHE=1 would do this, with
// DONT_FAKE_MONOTONIC=1 for a wall-only jump) hangs Debian's redis-server
// 7.0.15 at start-up: redis-server links libjemalloc.so.2, whose
// initialisation calls clock_gettime() while libfaketime resolves its
// symbols (wolfcw/libfaketime#130, open; #327, #478). libfaketime also
// applies one offset to the wall and the monotonic clock (src/libfaketime.c
// 0.9.10, fake_clock_gettime: FT_START_AT adds the same user offset to
// both), so it cannot jump the monotonic clock alone.
//
// Not reachable: etcd and the etcd client helper are Go programs, and the
// Go runtime reads time through the vDSO, not libc (checked: etcd 3.4.23
// under LD_PRELOAD=libfaketime.so.1 FAKETIME=+1h logs the real time), so
// clock faults on etcd members, etcd-leader or etcd clients are refused;
// so is one on the resource (PostgreSQL runs without the shim).
//
// Clients: a Redis client is a thread of the runner, so its clocks are
// ours: a ClientClock (sim::NodeClock, the model's own clock arithmetic,
// read at real elapsed time / scale) that the client's sleeps (`work`,
// `think`, `retry_interval`: its monotonic clock) and its renewal schedule
// (`renew_clock`) are deadlines on, so a jump moves them and a drift
// changes their pace, as in the model. Command timeouts stay hiredis's
// real-time socket timeouts (not moved by a client clock fault).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "models/world.hpp"
#include "sim/clock.hpp"

namespace fencesim::real {

/// Why the runner cannot apply the clock faults of `s` (or the setting
/// `lock.expiry_clock: monotonic`, which redis-server 7.0 does not have:
/// its expiry compares an absolute wall-clock deadline with mstime(), i.e.
/// gettimeofday, db.c keyIsExpired), or "" when it can.
/// Whether `name` is one of the scenario's clients (a clock fault on it
/// moves the runner's ClientClock, not a server's).
bool is_client(const Scenario& s, const std::string& name);

std::string clock_unsupported_reason(const Scenario& s);

/// Whether the Redis process `name` (redis-N, sentinel-N) must start under
/// the clock shim: some clock fault of `s` names it, or names the role
/// redis-primary and `name` is a data node.
bool needs_clock_shim(const Scenario& s, const std::string& name);

/// The control file of one server's clock shim (fencesim_clock.h), written
/// by the runner. Durations are real nanoseconds.
class ServerClock {
 public:
  /// Creates `file` (the real clocks: no offset, rate 1).
  explicit ServerClock(std::filesystem::path file);
  ~ServerClock();
  ServerClock(const ServerClock&) = delete;
  ServerClock& operator=(const ServerClock&) = delete;

  void jump(ClockSelect which, std::chrono::nanoseconds by);
  /// Both clocks run at (1e6 + ppm) / 1e6 of the real rate from now on;
  /// the offsets accumulated so far are kept.
  void set_drift(std::int64_t ppm);
  /// LD_PRELOAD and FENCESIM_CLOCK_FILE for the server's environment.
  std::vector<std::string> env(const std::string& shim) const;
  const std::filesystem::path& file() const { return file_; }

 private:
  template <class F>
  void write(F&& change);
  std::filesystem::path file_;
  void* map_ = nullptr;
};

/// A client thread's wall and monotonic clocks, in scenario time: both read
/// 0 at time 0 and follow sim::NodeClock (jumps, drift in ppm). `now` gives
/// the current scenario time (real elapsed time / scale); it is read under
/// the clock's lock, so a change and a reading are never out of order.
class ClientClock {
 public:
  explicit ClientClock(std::function<Time()> now) : now_(std::move(now)) {}
  Time read(sim::ClockKind k) const;
  /// The scenario time at or after now at which clock `k` reads `reading`.
  Time when(sim::ClockKind k, Time reading) const;
  void jump(ClockSelect which, Duration by);
  void set_drift(std::int64_t ppm);

 private:
  std::function<Time()> now_;
  mutable std::mutex m_;
  sim::NodeClock clock_;
};

}  // namespace fencesim::real
