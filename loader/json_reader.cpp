// loader/json_reader.cpp — the typed getters of json_reader.hpp and the
// models' KeyReader over one JSON object.
#include "loader/json_reader.hpp"

#include <cmath>

#include "loader/keys.hpp"
#include "sim/text.hpp"

namespace fencesim::loading {

[[noreturn]] void fail(std::string path, std::string message, std::string suggestion) {
  throw Failure{std::move(path), std::move(message), std::move(suggestion)};
}

/// A user-supplied string made safe for a one-line message (shared with
/// models/validate.hpp, so both give the same words).
std::string quote(std::string_view s, std::size_t max) { return quote_text(s, max); }

/// "\"a\", \"b\" or \"c\"": the choices of a required key, for its message.
std::string or_quoted(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += quote(items[i]);
  }
  return out;
}

/// "a string (\"x\")", "an array", … for "got …" in type errors.
std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::string: return "the string " + quote(v.get_ref<const std::string&>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "the number " + v.dump();
    case json::value_t::array: return v.empty() ? "an empty array" : "an array";
    case json::value_t::object: return v.empty() ? "an empty object" : "an object";
    default: return "an unsupported value";
  }
}

std::string key_path(const std::string& parent, std::string_view key) {
  bool plain = !key.empty();
  for (char c : key) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
      plain = false;
    }
  }
  if (!plain) return parent + "[" + quote(key) + "]";
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string index_path(const std::string& parent, std::size_t i) { return parent + "[" + std::to_string(i) + "]"; }

const json* find(const json& obj, std::string_view key) {
  auto it = obj.find(std::string(key));
  return it == obj.end() ? nullptr : &*it;
}

const json& require(const json& obj, const std::string& path, std::string_view key, const std::string& what) {
  const json* v = find(obj, key);
  if (v == nullptr) fail(key_path(path, key), "missing required key " + quote(key) + ": " + what);
  return *v;
}

void expect_object(const json& v, const std::string& path, const std::string& what) {
  if (!v.is_object()) fail(path, "expected " + what + " (a JSON object), got " + describe(v));
}

/// Every key of `obj` must be in `allowed`; `where` names the block.
void check_keys(const json& obj, const std::string& path, const Keys& allowed, const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (contains(allowed, it.key())) continue;
    std::string hint = suggest(it.key(), allowed);
    if (hint.empty()) hint = elsewhere(it.key(), where);
    fail(key_path(path, it.key()),
         "unknown key " + quote(it.key()) + " in " + where + "; expected one of " + join_list(allowed, 20), hint);
  }
}

std::int64_t get_int(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi,
                     const std::string& extra) {
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + extra;
  std::int64_t out = 0;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) fail(path, "expected " + range + ", got " + v.dump());
    out = static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
  } else if (v.is_number_float()) {
    const double x = v.get<double>();
    // A whole-valued float (3.0) is an integer, as in JSON Schema.
    if (!std::isfinite(x) || std::floor(x) != x || x < static_cast<double>(lo) || x > static_cast<double>(hi)) {
      fail(path, "expected " + range + ", got " + v.dump());
    }
    out = static_cast<std::int64_t>(x);
  } else {
    fail(path, "expected " + range + ", got " + describe(v));
  }
  if (out < lo || out > hi) fail(path, "expected " + range + ", got " + std::to_string(out));
  return out;
}

std::int64_t get_int(const json& v, const std::string& path, const IntRange& r) {
  return get_int(v, path, r.lo, r.hi, r.extra);
}

std::uint64_t get_u64(const json& v, const std::string& path) {
  const std::string what = "an integer from 0 to 18446744073709551615";
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    if (v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());  // -0
    fail(path, "expected " + what + ", got " + v.dump());
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && std::floor(x) == x && x >= 0 && x < 18446744073709551616.0) {
      return static_cast<std::uint64_t>(x);
    }
    fail(path, "expected " + what + ", got " + v.dump());
  }
  fail(path, "expected " + what + ", got " + describe(v));
}

bool get_bool(const json& v, const std::string& path) {
  if (!v.is_boolean()) {
    std::string hint;
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (s == "true" || s == "false") hint = "write " + s + " without quotes";
    }
    fail(path, "expected true or false, got " + describe(v), hint);
  }
  return v.get<bool>();
}

std::string get_string(const json& v, const std::string& path, std::size_t max_len) {
  if (!v.is_string()) fail(path, "expected a string, got " + describe(v));
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max_len) fail(path, "too long: at most " + std::to_string(max_len) + " bytes");
  return s;
}

std::size_t get_enum(const json& v, const std::string& path, const Keys& options) {
  if (!v.is_string()) fail(path, "expected one of " + join_quoted(options) + ", got " + describe(v));
  const auto& s = v.get_ref<const std::string&>();
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (s == options[i]) return i;
  }
  fail(path, "unknown value " + quote(s) + "; expected one of " + join_quoted(options), suggest(s, options));
}

/// For a duration whose unit is spelt another way ("200MS", "200µs",
/// "5 sec"): the same text with the unit the format knows, or "".
namespace {

std::string unit_hint(const std::string& text, bool allow_negative) {
  std::string lower;
  for (char c : text) {
    if (c != ' ') lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  static const std::vector<std::pair<std::string, std::string>> kUnits = {
      {"µs", "us"},  {"μs", "us"}, {"usec", "us"}, {"msec", "ms"}, {"millis", "ms"}, {"nsec", "ns"},
      {"secs", "s"}, {"sec", "s"}, {"mins", "m"},  {"min", "m"},   {"hrs", "h"},     {"hr", "h"}};
  std::string fixed = lower;
  for (const auto& [from, to] : kUnits) {
    if (fixed.size() > from.size() && fixed.ends_with(from)) {
      fixed = fixed.substr(0, fixed.size() - from.size()) + to;
      break;
    }
  }
  if (fixed == text || !sim::parse_duration(fixed, allow_negative).value) return "";
  return "did you mean \"" + fixed + "\"?";
}

}  // namespace

Duration get_duration(const json& v, const std::string& path, DurationRule rule) {
  if (v.is_number()) {
    std::string hint;
    if (v.is_number_integer()) hint = "did you mean \"" + v.dump() + "s\" or \"" + v.dump() + "ms\"?";
    fail(path, "durations need a unit, e.g. \"10s\"; got the bare number " + v.dump(), hint);
  }
  if (!v.is_string()) fail(path, "expected a duration string such as \"10s\" or \"250ms\", got " + describe(v));
  const auto& text = v.get_ref<const std::string&>();
  const sim::DurationParse p = sim::parse_duration(text, rule.allow_negative);
  // Too large for the engine is too long for the format: name the format's limit.
  if (!p.value && p.too_large) too_long(path, text);
  if (!p.value) {
    std::string msg = "invalid duration " + quote(text) + ": " + p.error;
    if (!rule.allow_negative && !text.empty() && text[0] == '-')
      msg += " (a negative value is allowed only for a clock_jump's \"by\")";
    fail(path, msg, unit_hint(text, rule.allow_negative));
  }
  const Duration d = *p.value;
  const Duration abs = d < Duration::zero() ? -d : d;
  if (abs > Limits::kMaxDuration) too_long(path, text);
  if (rule.positive && d < rule.min) {
    fail(path, rule.min > Duration{1} ? "must be at least " + sim::format_duration(rule.min) + ", got " + quote(text)
                                      : "must be greater than zero, got " + quote(text));
  }
  return d;
}

[[noreturn]] void too_long(const std::string& path, const std::string& text) {
  fail(path, "duration " + quote(text) + " is too long: at most " +
                 std::to_string(Limits::kMaxDuration / std::chrono::hours(1)) + "h");
}

/// A duration or {"min": d, "max": d}.
std::pair<Duration, Duration> get_range(const json& v, const std::string& path, DurationRule rule) {
  if (v.is_object()) {
    check_keys(v, path, kRangeKeys, "a range");
    const json* lo = find(v, "min");
    const json* hi = find(v, "max");
    if (lo == nullptr) fail(key_path(path, "min"), "missing required key \"min\": a range needs both min and max");
    if (hi == nullptr) fail(key_path(path, "max"), "missing required key \"max\": a range needs both min and max");
    const Duration a = get_duration(*lo, key_path(path, "min"), rule);
    const Duration b = get_duration(*hi, key_path(path, "max"), rule);
    return {a, b};  // max below min: validate_network / validate_nemesis
  }
  if (v.is_number()) get_duration(v, path, rule);  // the bare-number message
  if (!v.is_string()) {
    fail(path, "expected a duration such as \"10s\" or a range {\"min\": \"1s\", \"max\": \"5s\"}, got " + describe(v));
  }
  const Duration d = get_duration(v, path, rule);
  return {d, d};
}

// ---------------------------------------------------------------------------
// Errors and JsonKeyReader.

LoadResult error_result(const std::string& file, std::string path, std::string message, std::string suggestion,
                        int line, int column) {
  LoadResult r;
  r.error = LoadError{file, std::move(path), std::move(message), std::move(suggestion), line, column};
  return r;
}

KeyReader::Shape JsonKeyReader::shape(std::string_view key) const {
  const json* v = find(obj_, key);
  if (v == nullptr) return Shape::kAbsent;
  switch (v->type()) {
    case json::value_t::null: return Shape::kNull;
    case json::value_t::boolean: return Shape::kBoolean;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return Shape::kInteger;
    case json::value_t::number_float: return Shape::kNumber;
    case json::value_t::string: return Shape::kString;
    case json::value_t::array: return Shape::kArray;
    default: return Shape::kObject;
  }
}

std::string JsonKeyReader::spelling(std::string_view key) const {
  const json* v = find(obj_, key);
  return v == nullptr ? "" : v->dump();
}

std::string_view JsonKeyReader::require(std::string_view key, const std::string& what) {
  loading::require(obj_, path_, key, what);
  return key;
}

void JsonKeyReader::fail(std::string_view key, const std::string& message, const std::string& suggestion) {
  loading::fail(key.empty() ? path_ : path(key), message, suggestion);
}

const json* JsonKeyReader::get(std::string_view key, const Required& required) const {
  return required ? &loading::require(obj_, path_, key, *required) : find(obj_, key);
}

std::optional<sim::Duration> JsonKeyReader::duration(std::string_view key, DurationRule rule,
                                                     const Required& required) {
  const json* v = get(key, required);
  if (v == nullptr) return std::nullopt;
  return get_duration(*v, path(key), rule);
}

std::optional<std::int64_t> JsonKeyReader::integer(std::string_view key, const IntRange& range,
                                                   const Required& required) {
  const json* v = get(key, required);
  if (v == nullptr) return std::nullopt;
  return get_int(*v, path(key), range);
}

std::optional<bool> JsonKeyReader::boolean(std::string_view key, const Required& required) {
  const json* v = get(key, required);
  if (v == nullptr) return std::nullopt;
  return get_bool(*v, path(key));
}

std::optional<std::string> JsonKeyReader::text(std::string_view key, std::size_t max_len, const Required& required) {
  const json* v = get(key, required);
  if (v == nullptr) return std::nullopt;
  return get_string(*v, path(key), max_len);
}

std::optional<std::size_t> JsonKeyReader::choice(std::string_view key, const std::vector<std::string>& options,
                                                 const Required& required) {
  const json* v = get(key, required);
  if (v == nullptr) return std::nullopt;
  return get_enum(*v, path(key), Keys(options.begin(), options.end()));
}

void JsonKeyReader::object(std::string_view key, const std::string& what, const std::vector<std::string>& keys,
                           const std::function<void(KeyReader&)>& fill) {
  const json* v = find(obj_, key);
  if (v == nullptr) return;
  const std::string p = path(key);
  expect_object(*v, p, what);
  check_keys(*v, p, Keys(keys.begin(), keys.end()), p);
  JsonKeyReader inner(*v, p);
  fill(inner);
}

}  // namespace fencesim::loading
