// sim/clock.hpp — a node's wall clock and monotonic clock.
//
// Each clock reads `true_time + offset(t)`: a piecewise-linear function of
// true time that a fault can step (`jump`) or tilt (`set_drift`, in parts per
// million, shared by both clocks of a node as on a real machine whose
// oscillator runs fast or slow). The monotonic clock never goes backwards:
// jumps of it must be forward. All arithmetic is integer (128-bit where it
// multiplies), so readings are exact and identical on every machine.
//
// Readings are nanoseconds; both clocks read 0 at true time 0 unless a
// scenario says otherwise.
#pragma once

#include <cstdint>

#include "sim/time.hpp"

namespace sim {

enum class ClockKind : std::uint8_t { kWall = 0, kMonotonic = 1 };

inline const char* clock_name(ClockKind k) { return k == ClockKind::kWall ? "wall" : "monotonic"; }

class NodeClock {
 public:
  /// Reading of clock `k` at true time `t` (t must not precede the last
  /// change of the clock, which the simulation guarantees: it only asks
  /// about the present or the future).
  Time read(ClockKind k, Time t) const {
    const Line& l = lines_[static_cast<int>(k)];
    const std::int64_t elapsed = (t - l.base_true).count();
    if (ppm_ == 0) return l.base_reading + Duration{elapsed};  // the common case: no drift
    return l.base_reading + Duration{scale(elapsed, kMillion + ppm_, kMillion)};
  }

  /// Earliest true time >= `now` at which clock `k` reads at least `reading`.
  Time true_time_when(ClockKind k, Time reading, Time now) const {
    if (read(k, now) >= reading) return now;
    const Line& l = lines_[static_cast<int>(k)];
    if (ppm_ == 0) {
      // reading > read(now) >= base_reading here, so the difference is positive.
      const std::int64_t e = (reading - l.base_reading).count();
      return e > INT64_MAX - l.base_true.count() ? kTimeMax : l.base_true + Duration{e};
    }
    const __int128 target = (reading - l.base_reading).count();
    const __int128 rate = kMillion + ppm_;
    const __int128 e = (target * kMillion + rate - 1) / rate;  // ceil
    const __int128 t = l.base_true.count() + e;
    return t > INT64_MAX ? kTimeMax : Time{static_cast<std::int64_t>(t)};
  }

  /// Steps clock `k` by `by` at true time `now`. Monotonic steps must be
  /// forward (the loader refuses negative ones; here it is an invariant).
  void jump(ClockKind k, Duration by, Time now) {
    rebase(now);
    lines_[static_cast<int>(k)].base_reading += by;
  }

  /// Sets the drift of both clocks to `ppm` parts per million from `now` on.
  /// Requires ppm > -1'000'000 (a clock must move forward).
  void set_drift(std::int64_t ppm, Time now) {
    rebase(now);
    ppm_ = ppm;
  }

  std::int64_t drift_ppm() const { return ppm_; }

 private:
  static constexpr std::int64_t kMillion = 1'000'000;
  /// x * num / den, truncated toward zero, for x >= 0 and num, den > 0: in 64
  /// bits while the product fits (the division by a constant is then a
  /// multiplication), else in 128 bits.
  static std::int64_t scale(std::int64_t x, std::int64_t num, std::int64_t den) {
    std::int64_t product;
    if (!__builtin_mul_overflow(x, num, &product)) return product / den;
    return static_cast<std::int64_t>(static_cast<__int128>(x) * num / den);
  }
  struct Line {
    Time base_true{0};
    Time base_reading{0};
  };
  void rebase(Time now) {
    for (int k = 0; k < 2; ++k) {
      const Time r = read(static_cast<ClockKind>(k), now);
      lines_[k].base_true = now;
      lines_[k].base_reading = r;
    }
  }

  Line lines_[2];
  std::int64_t ppm_ = 0;
};

}  // namespace sim
