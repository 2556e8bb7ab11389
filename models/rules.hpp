// models/rules.hpp — the small vocabulary of the format's rules, shared by
// models/validate.cpp and the lock services' own rules (models/<service>/):
// a problem at a JSON path, the path of a key, and the checks of a duration
// or an integer that every rule words the same way. Internal to the models.
//
//   Problem check(const Scenario& s) {
//     FENCESIM_CHECK(positive("lock.down_after", s.lock.redis.down_after));
//     return std::nullopt;
//   }
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "models/validate.hpp"
#include "sim/text.hpp"
#include "sim/time.hpp"

namespace fencesim::rules {

inline std::string fmt_d(Duration d) { return sim::format_duration(d); }

using Problem = std::optional<ScenarioProblem>;

inline ScenarioProblem problem(std::string path, std::string message, std::string suggestion = "") {
  return ScenarioProblem{std::move(path), std::move(message), std::move(suggestion)};
}

/// A lock key, lock.keys entry, clients[].lock or counter key with a
/// control character (a byte below 0x20, or 0x7f): refused, since the key
/// is printed in stories, reports and the timeline's lanes.
inline std::string hex_byte(unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("0x") + kHex[c >> 4] + kHex[c & 15];
}

inline Problem key_without_controls(const std::string& path, const std::string& key, const char* what) {
  std::string clean;
  for (unsigned char c : key) {
    if (!sim::is_control(c)) clean += static_cast<char>(c);
  }
  if (clean.size() == key.size()) return std::nullopt;
  std::size_t at = 0;
  while (!sim::is_control(static_cast<unsigned char>(key[at]))) ++at;
  return problem(
      path,
      std::string(what) + " " + quote_text(key) + " has a control character (byte " +
          hex_byte(static_cast<unsigned char>(key[at])) + " at byte " + std::to_string(at) +
          "): lock and counter keys must not contain bytes below 0x20 or 0x7f",
      clean.empty() ? std::string("use printable characters, e.g. \"row-1\"") : "remove it, e.g. " + quote_text(clean));
}

inline std::string key(const std::string& parent, std::string_view k) { return parent + "." + std::string(k); }

/// A duration that must be > 0 (or at least `min`).
/// Every duration of a scenario is at most Limits::kMaxDuration either way
/// (the loader's words for a file's "25h").
inline Problem not_too_long(const std::string& path, Duration d) {
  if (d <= Limits::kMaxDuration && d >= -Limits::kMaxDuration) return std::nullopt;
  return problem(path, "duration " + quote_text(fmt_d(d)) + " is too long: at most " +
                           std::to_string(Limits::kMaxDuration / std::chrono::hours(1)) + "h");
}
inline Problem positive(const std::string& path, Duration d, Duration min = Duration{1}) {
  if (auto p = not_too_long(path, d)) return p;
  if (d < Duration::zero()) return problem(path, "must not be negative, got " + quote_text(fmt_d(d)));
  if (d >= min) return std::nullopt;
  return problem(path, min > Duration{1} ? "must be at least " + fmt_d(min) + ", got " + quote_text(fmt_d(d))
                                         : "must be greater than zero, got " + quote_text(fmt_d(d)));
}
inline Problem non_negative(const std::string& path, Duration d) {
  if (auto p = not_too_long(path, d)) return p;
  if (d >= Duration::zero()) return std::nullopt;
  return problem(path, "must not be negative, got " + quote_text(fmt_d(d)));
}
inline Problem in_range(const std::string& path, std::int64_t v, const IntRange& r) {
  if (r.contains(v)) return std::nullopt;
  return problem(path, r.message(std::to_string(v)));
}

}  // namespace fencesim::rules

/// Returns the problem of `expr` (a rules::Problem) if it has one.
#define FENCESIM_CHECK(expr)            \
  do {                                  \
    if (Problem p_ = (expr)) return p_; \
  } while (0)
