// sim/time.hpp — simulated time and durations.
//
// Every time and duration in fencesim is a signed 64-bit count of
// nanoseconds. `sim::Time` is *true time* since the start of the run (what a
// perfect observer outside the simulation would read); a node's clocks are
// different readings of it (see clock.hpp). There is no floating point in any
// decision the engine makes.
//
//   using namespace std::chrono_literals;
//   sim::Duration d = 1500ms;
//   sim::format_duration(d)                       == "1.5s"
//   sim::parse_duration("250ms")                  -> 250'000'000 ns
//   sim::parse_duration("-5s", /*allow_negative=*/true) -> -5 s
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sim {

/// A span of simulated time in integer nanoseconds.
using Duration = std::chrono::duration<std::int64_t, std::nano>;
/// A point in true simulated time: nanoseconds since the start of the run.
using Time = Duration;

inline constexpr Time kTimeZero{0};
inline constexpr Time kTimeMax{INT64_MAX};

/// Result of parsing a duration string: either `value` or `error` is set.
struct DurationParse {
  std::optional<Duration> value;
  std::string error;  ///< what is wrong, in words a user can act on
  /// The text is a valid duration too large for int64 nanoseconds: a
  /// caller with a tighter limit (the scenario format's 24 h) names its own.
  bool too_large = false;
};

/// Parses the scenario format's duration strings: a decimal number and a unit
/// out of `ns us ms s m h` ("10s", "250ms", "1.5s", "-5s"). A sign is accepted
/// only when `allow_negative`. The value must be a whole number of
/// nanoseconds and fit in int64 (about ±292 years); anything else is an error.
DurationParse parse_duration(std::string_view text, bool allow_negative = false);

/// Prints a duration in the shortest exact form with one unit: seconds for
/// |d| >= 1 s ("12.2s", "60s"), else ms, us or ns ("250ms", "1.5ms", "3ns").
/// Exact: parse_duration(format_duration(d)) == d for every d.
std::string format_duration(Duration d);

/// Nanoseconds as an integer, for reports and traces.
constexpr std::int64_t to_ns(Duration d) { return d.count(); }

}  // namespace sim
