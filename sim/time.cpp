#include "sim/time.hpp"

#include <cstdlib>

#include "sim/text.hpp"

namespace sim {
namespace {

struct Unit {
  std::string_view name;
  std::int64_t ns;
};
// Longest names first so that "ms" is not read as "m" + garbage.
constexpr Unit kUnits[] = {
    {"ns", 1}, {"us", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}, {"m", 60'000'000'000}, {"h", 3'600'000'000'000}};

}  // namespace

DurationParse parse_duration(std::string_view text, bool allow_negative) {
  DurationParse out;
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    if (negative && !allow_negative) {
      out.error = "a negative duration is not allowed here";
      return out;
    }
    s.remove_prefix(1);
  }
  // A negative value may reach INT64_MIN, one more than INT64_MAX, so that
  // every value format_duration prints parses back.
  const __int128 limit = static_cast<__int128>(INT64_MAX) + (negative ? 1 : 0);
  std::size_t i = 0;
  __int128 whole = 0;
  std::size_t whole_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    whole = whole * 10 + (s[i] - '0');
    if (whole > limit) {
      out.error = "the number is too large";
      return out;
    }
    ++i;
    ++whole_digits;
  }
  __int128 frac = 0;
  __int128 frac_scale = 1;
  std::size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (frac_digits < 18) {
        frac = frac * 10 + (s[i] - '0');
        frac_scale *= 10;
      } else if (s[i] != '0') {
        out.error = "too many decimal places (the resolution is 1ns)";
        return out;
      }
      ++i;
      ++frac_digits;
    }
    if (frac_digits == 0) {
      out.error = "expected digits after the decimal point";
      return out;
    }
  }
  if (whole_digits == 0) {
    out.error = "expected a number followed by a unit (ns, us, ms, s, m, h), e.g. \"10s\"";
    return out;
  }
  std::string_view unit = s.substr(i);
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (unit == u.name) found = &u;
  }
  if (found == nullptr) {
    if (unit.empty()) {
      out.error = "missing unit: durations need one of ns, us, ms, s, m, h, e.g. \"10s\"";
    } else {
      // The unit as written, control characters shown (sim/text.hpp).
      std::string shown;
      for (char c : unit) {
        const auto u = static_cast<unsigned char>(c);
        if (is_control(u)) {
          append_escaped_control(shown, u);
        } else {
          shown += c;
        }
      }
      out.error = "unknown unit \"" + shown + "\": use one of ns, us, ms, s, m, h";
    }
    return out;
  }
  __int128 total = whole * found->ns;
  __int128 frac_ns = frac * found->ns;
  if (frac_ns % frac_scale != 0) {
    out.error = "finer than the 1ns resolution";
    return out;
  }
  total += frac_ns / frac_scale;
  if (total > limit) {
    out.error = "too large (the limit is about 292 years)";
    return out;
  }
  out.value = Duration{static_cast<std::int64_t>(negative ? -total : total)};
  return out;
}

std::string format_duration(Duration d) {
  std::int64_t v = d.count();
  if (v == 0) return "0s";
  std::string sign;
  // INT64_MIN has no positive counterpart; print it via unsigned arithmetic.
  std::uint64_t mag = v < 0 ? static_cast<std::uint64_t>(-(v + 1)) + 1 : static_cast<std::uint64_t>(v);
  if (v < 0) sign = "-";
  struct Choice {
    std::uint64_t ns;
    const char* name;
    int digits;
  };
  constexpr Choice kChoices[] = {{1'000'000'000, "s", 9}, {1'000'000, "ms", 6}, {1'000, "us", 3}, {1, "ns", 0}};
  for (const Choice& c : kChoices) {
    if (mag >= c.ns || c.ns == 1) {
      std::uint64_t whole = mag / c.ns;
      std::uint64_t rest = mag % c.ns;
      std::string out = sign + std::to_string(whole);
      if (rest != 0) {
        std::string frac = std::to_string(rest);
        frac.insert(0, static_cast<std::size_t>(c.digits) - frac.size(), '0');
        while (!frac.empty() && frac.back() == '0') frac.pop_back();
        out += "." + frac;
      }
      return out + c.name;
    }
  }
  return "0s";  // unreachable
}

}  // namespace sim
