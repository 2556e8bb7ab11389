#include "sim/time.hpp"

#include <cstdlib>
#include <string>

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

/// The number of a duration: `whole[.frac]`, the decimals kept as
/// frac / frac_scale (at most 18 of them; more must be zeros).
struct Number {
  __int128 whole = 0;
  __int128 frac = 0;
  __int128 frac_scale = 1;
  std::size_t end = 0;  ///< where the unit starts
};

/// Reads the number at the start of `s`; returns an error message, or empty.
/// `limit`: the largest whole part allowed.
std::string read_number(std::string_view s, __int128 limit, Number& n) {
  std::size_t i = 0;
  std::size_t whole_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    n.whole = n.whole * 10 + (s[i] - '0');
    if (n.whole > limit) return "the number is too large";
    ++i;
    ++whole_digits;
  }
  std::size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (frac_digits < 18) {
        n.frac = n.frac * 10 + (s[i] - '0');
        n.frac_scale *= 10;
      } else if (s[i] != '0') {
        return "too many decimal places (the resolution is 1ns)";
      }
      ++i;
      ++frac_digits;
    }
    if (frac_digits == 0) return "expected digits after the decimal point";
  }
  if (whole_digits == 0) return "expected a number followed by a unit (ns, us, ms, s, m, h), e.g. \"10s\"";
  n.end = i;
  return {};
}

const Unit* find_unit(std::string_view unit) {
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (unit == u.name) found = &u;
  }
  return found;
}

std::string unit_error(std::string_view unit) {
  if (unit.empty()) return "missing unit: durations need one of ns, us, ms, s, m, h, e.g. \"10s\"";
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
  return "unknown unit \"" + shown + "\": use one of ns, us, ms, s, m, h";
}

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
  Number n;
  out.error = read_number(s, limit, n);
  if (!out.error.empty()) return out;
  const Unit* found = find_unit(s.substr(n.end));
  if (found == nullptr) {
    out.error = unit_error(s.substr(n.end));
    return out;
  }
  __int128 total = n.whole * found->ns;
  const __int128 frac_ns = n.frac * found->ns;
  if (frac_ns % n.frac_scale != 0) {
    out.error = "finer than the 1ns resolution";
    return out;
  }
  total += frac_ns / n.frac_scale;
  if (total > limit) {
    out.error = "too large (the limit is about 292 years)";
    out.too_large = true;
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
