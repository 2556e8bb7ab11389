// loader/loader.cpp — the scenario loader (see loader.hpp and docs/FORMAT.md).
//
// Structure: a guarded SAX pass builds the JSON document (bounding nesting
// depth and refusing duplicate keys), then `Loader` walks the document in a
// fixed order — top level, network, lock, resource, clients, faults, nemesis,
// expect — and stops at the first problem by throwing `Failure`, which never
// leaves this file.
#include "loader/loader.hpp"

#include "models/checkers/metric_expect.hpp"
#include "models/checkers/registry.hpp"
#include "models/etcd/versions.hpp"
#include "models/faults.hpp"
#include "models/lock_service.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"
#include "sim/text.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencesim {

std::string LoadError::to_string() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
  } else if (!path.empty()) {
    out += ": at " + path + ": " + message;
  } else {
    out += ": " + message;
  }
  if (!suggestion.empty()) out += " (" + suggestion + ")";
  return out;
}

static_assert(LoaderLimits::kMaxScenarioNameLength == NameLimits::kScenario &&
                  LoaderLimits::kMaxNameLength == NameLimits::kClient &&
                  LoaderLimits::kMaxInteger == Ranges::kInitial.hi && LoaderLimits::kMaxBlock == 1'000'000'000,
              "the loader's limits and the rules of models/validate.hpp agree");

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Small text helpers.

/// A user-supplied string made safe for a one-line message (shared with
/// models/validate.hpp, so both give the same words).
std::string quote(std::string_view s, std::size_t max = 48) { return quote_text(s, max); }

/// `did you mean "x"?` for the nearest candidate within a few edits, or "".
template <typename Range>
std::string suggest(std::string_view got, const Range& candidates) {
  std::vector<std::string> names;
  for (const auto& c : candidates) names.emplace_back(std::string_view(c));
  return suggest_nearest(got, names);
}

template <typename Range>
std::string join_list(const Range& items, std::size_t max_items = 12) {
  std::vector<std::string> names;
  for (const auto& it : items) names.emplace_back(std::string_view(it));
  return join_names(names, max_items);
}

template <typename Range>
std::string join_quoted(const Range& items) {
  std::string out;
  std::size_t n = 0;
  for (const auto& it : items) {
    if (n++ > 0) out += ", ";
    out += quote(std::string_view(it));
  }
  return out;
}

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
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
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

// ---------------------------------------------------------------------------
// Guarded parse: the DOM parser of nlohmann-json behind a SAX filter that
// bounds the depth, refuses duplicate keys (which the DOM parser would
// silently collapse to the last one) and records where a syntax error is.

struct ParseProblem {
  bool syntax = false;  ///< true: byte/message from the lexer
  std::size_t byte = 0;
  std::string message;
  std::string path;
};

class GuardedSax {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  explicit GuardedSax(json& root) : dom_(root, /*allow_exceptions=*/false) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return value() && dom_.number_float(v, s); }
  bool string(string_t& v) { return value() && dom_.string(v); }
  bool binary(binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) {
    if (!value() || !push(false)) return false;
    return dom_.start_object(n);
  }
  bool key(string_t& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      problem_.message = "duplicate key " + quote(k) + ": each key may appear only once in an object";
      problem_.path = path_to_key(k);
      return false;
    }
    f.key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (!value() || !push(true)) return false;
    return dom_.start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const nlohmann::detail::exception& ex) {
    problem_.syntax = true;
    problem_.byte = position;
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error …"
    if (auto col = what.find(", column "); col != std::string::npos) {
      if (auto colon = what.find(": ", col); colon != std::string::npos) what = what.substr(colon + 2);
    } else if (auto br = what.find("] "); br != std::string::npos) {
      what = what.substr(br + 2);
    }
    // Drop "; last read: '…'": the line and column say where, and the token
    // can span lines.
    if (auto lr = what.find("; last read: '"); lr != std::string::npos) {
      auto rest = what.find("'; expected ", lr + 14);
      what = what.substr(0, lr) + (rest == std::string::npos ? "" : what.substr(rest + 1));
    }
    problem_.message = what;
    return false;
  }

  const ParseProblem& problem() const { return problem_; }

 private:
  struct Frame {
    bool array = false;
    std::size_t next_index = 0;  // arrays: index of the next element
    std::string key;             // objects: the current key
    std::set<std::string> keys;
  };

  // Called before every value: advances the index of an enclosing array.
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().next_index;
    return true;
  }
  bool push(bool array) {
    if (static_cast<int>(frames_.size()) >= LoaderLimits::kMaxDepth) {
      problem_.message =
          "nesting deeper than " + std::to_string(LoaderLimits::kMaxDepth) + " levels; a scenario needs at most 5";
      return false;
    }
    frames_.push_back(Frame{array, 0, "", {}});
    return true;
  }
  std::string path_to_key(std::string_view last) const {
    std::string p;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      p = f.array ? index_path(p, f.next_index - 1) : key_path(p, f.key);
    }
    if (!last.empty()) p = key_path(p, last);
    return p;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Frame> frames_;
  ParseProblem problem_;
};

// ---------------------------------------------------------------------------
// The loader proper.

struct Failure {
  std::string path;
  std::string message;
  std::string suggestion;
};

[[noreturn]] void fail(std::string path, std::string message, std::string suggestion = "") {
  throw Failure{std::move(path), std::move(message), std::move(suggestion)};
}

using Keys = std::vector<std::string_view>;

const Keys kTopKeys = {"version", "scenario", "description", "seed",   "duration", "settle", "network",
                       "lock",    "resource", "clients",     "faults", "nemesis",  "expect"};
const Keys kNetworkKeys = {"latency", "loss"};
const Keys kRangeKeys = {"min", "max"};
const Keys kLockCommonKeys = {"service", "ttl", "key", "keys"};
const Keys kRedisKeys = {"replicas", "replication_delay", "sentinels",   "down_after",  "expiry_clock",
                         "token",    "redlock",           "counter_key", "persistence", "cluster"};
const Keys kClusterKeys = {"shards", "replicas", "node_timeout"};
const Keys kEtcdKeys = {"nodes",
                        "election_timeout",
                        "heartbeat",
                        "token",
                        "version",
                        "pre_vote",
                        "keepalive_checks_leadership",
                        "keepalive_skips_check_if_active",
                        "mutex_checks_own_key",
                        "lock_fails_on_session_end",
                        "wal_fsync"};
const Keys kQueueKeys = {"service", "visibility_timeout", "messages", "fifo", "max_receives"};
const Keys kTableKeys = {"expiry", "token", "lock_delay"};
const Keys kResourceKeys = {"kind", "check", "fence_reads", "idempotent", "initial", "replicas", "replication_delay"};
const Keys kClientKeys = {"name", "count", "start", "fencing", "renew", "renew_interval", "renew_clock",
                          "retry_interval", "command_timeout", "resource", "workload",
                          // client policies (docs/FORMAT.md "Client policies")
                          "check_lease_before_write", "on_lease_loss", "lease_loss_after",
                          // per-client lease TTL and etcd client library (docs/FORMAT.md "Clients")
                          "ttl", "library",
                          // the lock it takes (docs/FORMAT.md "More than one lock")
                          "lock"};
const Keys kWorkloadKeys = {"kind", "block", "work", "iterations", "think", "retries", "retry_backoff"};
const Keys kMetricBoundKeys = {"min", "max"};
const Keys kNemesisKeys = {"kinds", "targets", "groups", "interval", "max_duration", "swarm"};
// Group and role names come from the lock services (models/lock_service.hpp).
bool is_group_name(const std::string& name) {
  const auto all = all_group_names();
  return std::find(all.begin(), all.end(), name) != all.end();
}
bool is_role_name(const std::string& name) { return role_owner(name) != nullptr; }

/// Keys each fault kind takes besides `at` and `kind` (the fault table,
/// models/faults.cpp); which kinds exist and which the nemesis draws come
/// from there too.
const Keys& fault_keys(FaultKind k) { return fault_info(k).keys; }

bool contains(const Keys& keys, std::string_view k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); }

// Rules for a duration value: DurationRule (models/key_reader.hpp; the
// models read durations with the same rules through a KeyReader).
constexpr DurationRule kNonNegative = KeyReader::kNonNegative;
constexpr DurationRule kPositive = KeyReader::kPositive;

class Loader {
 public:
  explicit Loader(const json& root) : root_(root) {}

  Scenario run() {
    if (!root_.is_object()) fail("", "expected a JSON object at the top level, got " + describe(root_));
    if (root_.contains("matrix") && root_.contains("base") && !root_.contains("scenario")) {
      fail("",
           "this is a matrix file (docs/FORMAT.md \"Matrix files\"), not a scenario: run it with `fencesim matrix "
           "FILE`");
    }
    check_keys(root_, "", kTopKeys, "the top level");
    // Each block is checked against the rules of models/validate.hpp as soon
    // as it is read, so a file gets its first problem first.
    load_top();
    check(validate_top(s_));
    load_network();
    check(validate_network(s_));
    load_lock();
    resolve_defaults(s_);
    check(validate_lock(s_, src_));
    load_resource();
    check(validate_resource(s_));
    load_clients();
    resolve_defaults(s_);
    check(validate_clients(s_, src_));
    dir_ = directory(s_);
    for (const auto& n : dir_.all()) nodes_.insert(n);
    load_faults();
    check(validate_faults(s_));
    load_nemesis();
    check(validate_nemesis(s_, src_));
    load_expect();
    check(validate_expect(s_));
    // The notes on input without effect (docs/FORMAT.md "Notes").
    resolve_scenario(s_);
    return std::move(s_);
  }

 private:
  /// A rule of models/validate.hpp broken: fail at its path, quoting the
  /// value as the file spells it ("0ms", not the "0s" the rule prints).
  void check(const std::optional<ScenarioProblem>& p) const {
    if (!p) return;
    std::string message = p->message;
    const std::string got = ", got \"";
    const json* v = at_path(p->path);
    if (const auto at = message.rfind(got);
        v != nullptr && v->is_string() && at != std::string::npos && message.back() == '"') {
      message = message.substr(0, at) + ", got " + quote(v->get_ref<const std::string&>());
    }
    fail(p->path, message, p->suggestion);
  }

  /// The value at a path such as "clients[1].renew_interval", or nullptr.
  const json* at_path(const std::string& path) const {
    const json* v = &root_;
    std::size_t i = 0;
    while (i < path.size() && v != nullptr) {
      if (path[i] == '.') ++i;
      if (path[i] == '[') {
        const std::size_t close = path.find(']', i);
        if (close == std::string::npos || path[i + 1] == '"' || !v->is_array()) return nullptr;
        const std::size_t n = std::stoul(path.substr(i + 1, close - i - 1));
        v = n < v->size() ? &(*v)[n] : nullptr;
        i = close + 1;
      } else {
        const std::size_t end = path.find_first_of(".[", i);
        const std::string k = path.substr(i, end == std::string::npos ? std::string::npos : end - i);
        v = v->is_object() ? find(*v, k) : nullptr;
        i = end == std::string::npos ? path.size() : end;
      }
    }
    return v;
  }

  // -- generic accessors ---------------------------------------------------

  static const json* find(const json& obj, std::string_view key) {
    auto it = obj.find(std::string(key));
    return it == obj.end() ? nullptr : &*it;
  }

  const json& require(const json& obj, const std::string& path, std::string_view key, const std::string& what) {
    const json* v = find(obj, key);
    if (v == nullptr) fail(key_path(path, key), "missing required key " + quote(key) + ": " + what);
    return *v;
  }

  static void expect_object(const json& v, const std::string& path, const std::string& what) {
    if (!v.is_object()) fail(path, "expected " + what + " (a JSON object), got " + describe(v));
  }

  /// `"ttl" belongs in lock` when `key` is a key of another block, else "".
  static std::string elsewhere(const std::string& key, const std::string& where) {
    static const std::vector<std::pair<std::string, const Keys*>> kBlocks = {
        {"the top level", &kTopKeys}, {"network", &kNetworkKeys}, {"lock", &kLockCommonKeys},
        {"lock", &kRedisKeys},        {"lock", &kEtcdKeys},       {"lock", &kQueueKeys},
        {"resource", &kResourceKeys}, {"a client", &kClientKeys}, {"a workload", &kWorkloadKeys},
        {"nemesis", &kNemesisKeys},   {"lock", &kTableKeys}};
    for (const auto& [block, keys] : kBlocks) {
      if (block != where && contains(*keys, key)) return quote(key) + " belongs in " + block;
    }
    return "";
  }

  /// Every key of `obj` must be in `allowed`; `where` names the block.
  static void check_keys(const json& obj, const std::string& path, const Keys& allowed, const std::string& where) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (contains(allowed, it.key())) continue;
      std::string hint = suggest(it.key(), allowed);
      if (hint.empty()) hint = elsewhere(it.key(), where);
      fail(key_path(path, it.key()),
           "unknown key " + quote(it.key()) + " in " + where + "; expected one of " + join_list(allowed, 20), hint);
    }
  }

  static std::int64_t get_int(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi,
                              const std::string& extra = "") {
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

  static std::int64_t get_int(const json& v, const std::string& path, const IntRange& r) {
    return get_int(v, path, r.lo, r.hi, r.extra);
  }

  static std::uint64_t get_u64(const json& v, const std::string& path) {
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

  static bool get_bool(const json& v, const std::string& path) {
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

  static std::string get_string(const json& v, const std::string& path,
                                std::size_t max_len = LoaderLimits::kMaxTextLength) {
    if (!v.is_string()) fail(path, "expected a string, got " + describe(v));
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > max_len) fail(path, "too long: at most " + std::to_string(max_len) + " bytes");
    return s;
  }

  /// One of `options`; returns its index.
  /// One of enum E's words (models/words.hpp), as its value.
  template <class E>
  static E get_word(const json& v, const std::string& path) {
    static const Keys kWords = [] {
      Keys k;
      for (const Word<E>& w : Words<E>::kTable) k.push_back(w.text);
      return k;
    }();
    return Words<E>::kTable[get_enum(v, path, kWords)].value;
  }

  static std::size_t get_enum(const json& v, const std::string& path, const Keys& options) {
    if (!v.is_string()) fail(path, "expected one of " + join_quoted(options) + ", got " + describe(v));
    const auto& s = v.get_ref<const std::string&>();
    for (std::size_t i = 0; i < options.size(); ++i) {
      if (s == options[i]) return i;
    }
    fail(path, "unknown value " + quote(s) + "; expected one of " + join_quoted(options), suggest(s, options));
  }

  /// For a duration whose unit is spelt another way ("200MS", "200µs",
  /// "5 sec"): the same text with the unit the format knows, or "".
  static std::string unit_hint(const std::string& text, bool allow_negative) {
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

  static Duration get_duration(const json& v, const std::string& path, DurationRule rule = kNonNegative) {
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

  [[noreturn]] static void too_long(const std::string& path, const std::string& text) {
    fail(path, "duration " + quote(text) + " is too long: at most " +
                   std::to_string(Limits::kMaxDuration / std::chrono::hours(1)) + "h");
  }

  /// A duration or {"min": d, "max": d}.
  static std::pair<Duration, Duration> get_range(const json& v, const std::string& path, DurationRule rule) {
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
      fail(path,
           "expected a duration such as \"10s\" or a range {\"min\": \"1s\", \"max\": \"5s\"}, got " + describe(v));
    }
    const Duration d = get_duration(v, path, rule);
    return {d, d};
  }

  // -- top level -------------------------------------------------------------

  void load_top() {
    if (const json* v = find(root_, "version")) {
      if (v->is_string() && v->get_ref<const std::string&>() == "1")
        fail("version", "expected the number 1, got the string \"1\"", "write 1 without quotes");
      if (!v->is_number()) fail("version", "expected the number 1, got " + describe(*v));
      s_.version = static_cast<int>(get_int(*v, "version", INT32_MIN, INT32_MAX));  // 1: validate_top
    }
    {
      const json& v = require(root_, "", "scenario", "the scenario's name, e.g. \"worked-example\"");
      s_.name = get_string(v, "scenario", LoaderLimits::kMaxTextLength);  // the name rule: validate_top
    }
    if (const json* v = find(root_, "description")) s_.description = get_string(*v, "description");
    if (const json* v = find(root_, "seed")) s_.seed = get_u64(*v, "seed");
    s_.duration = get_duration(require(root_, "", "duration", "how long to run, e.g. \"60s\""), "duration");
    if (const json* v = find(root_, "settle")) s_.settle = get_duration(*v, "settle");
  }

  void load_network() {
    const json* v = find(root_, "network");
    if (v == nullptr) return;
    expect_object(*v, "network", "the network settings");
    check_keys(*v, "network", kNetworkKeys, "network");
    if (const json* l = find(*v, "latency")) {
      auto [lo, hi] = get_range(*l, "network.latency", kNonNegative);
      s_.network.latency_min = lo;
      s_.network.latency_max = hi;
    }
    if (const json* l = find(*v, "loss")) {
      if (!l->is_number()) fail("network.loss", "expected a number in [0, 1), got " + describe(*l));
      const double x = l->get<double>();
      if (!(x >= 0.0 && x < 1.0)) fail("network.loss", "expected a number in [0, 1) (a probability), got " + l->dump());
      // Parts per billion, rounded to nearest, and never certain loss.
      const double ppb = std::round(x * 1e9);
      s_.network.loss_ppb = std::min<std::uint64_t>(static_cast<std::uint64_t>(ppb), 999'999'999);
    }
  }

  // -- lock --------------------------------------------------------------------

  void load_lock() {
    const json& v = require(root_, "", "lock", "the lock service, e.g. {\"service\": \"redis\", \"ttl\": \"10s\"}");
    expect_object(v, "lock", "the lock service");
    // The services are the registry's (models/lock_service.hpp), in its order.
    std::vector<std::string> names;
    for (const ServiceDescriptor* d : service_registry()) names.push_back(d->name());
    const Keys services(names.begin(), names.end());
    const json& svc = require(v, "lock", "service", or_quoted(names));
    s_.lock.service = service_registry()[get_enum(svc, "lock.service", services)]->kind();
    if (s_.lock.service == ServiceKind::kQueue) {
      load_queue(v);
      return;
    }

    // Keys allowed for this service; keys of the other service get a pointed message.
    Keys allowed;
    if (s_.lock.service == ServiceKind::kNone) {
      allowed = {"service"};
    } else {
      allowed = kLockCommonKeys;
      const Keys& own = s_.lock.service == ServiceKind::kRedis  ? kRedisKeys
                        : s_.lock.service == ServiceKind::kEtcd ? kEtcdKeys
                                                                : kTableKeys;
      allowed.insert(allowed.end(), own.begin(), own.end());
    }
    const std::string svc_name = to_string(s_.lock.service);
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (contains(allowed, it.key())) continue;
      const std::string p = key_path("lock", it.key());
      if (s_.lock.service == ServiceKind::kNone &&
          (contains(kLockCommonKeys, it.key()) || contains(kRedisKeys, it.key()) || contains(kEtcdKeys, it.key()))) {
        fail(p, quote(it.key()) + " does not apply to \"service\": \"none\" (no lock is taken); remove it");
      }
      if (s_.lock.service == ServiceKind::kRedis && contains(kEtcdKeys, it.key())) {
        fail(p, quote(it.key()) + " is an etcd setting; it does not apply to \"service\": \"redis\"");
      }
      if (s_.lock.service == ServiceKind::kEtcd && contains(kRedisKeys, it.key())) {
        fail(p, quote(it.key()) + " is a Redis setting; it does not apply to \"service\": \"etcd\"");
      }
      if (s_.lock.service != ServiceKind::kTable && s_.lock.service != ServiceKind::kNone &&
          contains(kTableKeys, it.key())) {
        fail(p, quote(it.key()) + " is a lock-table setting; it needs \"service\": \"table\"");
      }
      if (s_.lock.service == ServiceKind::kTable && (contains(kRedisKeys, it.key()) || contains(kEtcdKeys, it.key()))) {
        fail(p, quote(it.key()) + (contains(kRedisKeys, it.key()) ? " is a Redis" : " is an etcd") +
                    " setting; it does not apply to \"service\": \"table\"");
      }
      fail(p,
           "unknown key " + quote(it.key()) + " in lock (service " + svc_name + "); expected one of " +
               join_list(allowed, 20),
           suggest(it.key(), allowed));
    }
    if (s_.lock.service == ServiceKind::kNone) return;

    const json& ttl = require(v, "lock", "ttl", "the lease TTL, e.g. \"10s\"");
    s_.lock.ttl = s_.lock.requested_ttl = get_duration(ttl, "lock.ttl");  // resolved by resolve_defaults
    if (const json* k = find(v, "key")) s_.lock.key = get_string(*k, "lock.key", 1024);
    if (const json* k = find(v, "keys")) {
      // More than one lock (its rules: validate_scenario's locks).
      constexpr std::size_t kMaxLocks = 64;
      if (!k->is_array() || k->empty() || k->size() > kMaxLocks) {
        fail("lock.keys", "expected a list of 1 to " + std::to_string(kMaxLocks) +
                              " further lock keys besides lock.key, e.g. [\"row-2\"], got " +
                              (k->is_array() ? std::to_string(k->size()) + " keys" : describe(*k)));
      }
      for (std::size_t i = 0; i < k->size(); ++i) {
        s_.lock.keys.push_back(get_string((*k)[i], index_path("lock.keys", i), 1024));
      }
    }
    if (s_.lock.service == ServiceKind::kRedis) {
      load_redis(v);
    } else if (s_.lock.service == ServiceKind::kTable) {
      load_table(v);
    } else {
      load_etcd(v);
    }
  }

  /// `"service": "table"` (its rules: validate_lock).
  void load_table(const json& v) {
    TableSpec& t = s_.lock.table;
    if (const json* x = find(v, "expiry")) {
      t.expiry = get_word<TableExpiry>(*x, "lock.expiry");
    }
    if (const json* x = find(v, "token")) {
      t.token = get_word<TableToken>(*x, "lock.token");
    }
    if (const json* x = find(v, "lock_delay")) t.lock_delay = get_duration(*x, "lock.lock_delay");
  }

  void load_redis(const json& v) {
    RedisSpec& r = s_.lock.redis;
    if (const json* c = find(v, "cluster")) {
      load_cluster(v, *c);
    } else if (const json* x = find(v, "redlock"))
      r.redlock = static_cast<int>(get_int(*x, "lock.redlock", Ranges::kRedlock));
    if (r.redlock > 0) {
      // Redlock's defaults: independent primaries, no replicas, no Sentinel,
      // no token (validate_lock refuses a token; replicas and sentinels,
      // per pool, come together or not at all).
      r.replicas = 0;
      r.sentinels = 0;
      r.token = RedisToken::kNone;
    }
    if (const json* x = find(v, "replicas")) {
      r.replicas = static_cast<int>(
          get_int(*x, "lock.replicas", r.redlock > 0 ? IntRange{0, Limits::kMaxServiceNodes} : Ranges::kRedisReplicas));
    }
    if (const json* x = find(v, "sentinels")) {
      r.sentinels = static_cast<int>(get_int(*x, "lock.sentinels", Ranges::kSentinels));
    }
    if (const json* x = find(v, "token")) {
      r.token = get_word<RedisToken>(*x, "lock.token");
    }
    if (const json* x = find(v, "replication_delay")) r.replication_delay = get_duration(*x, "lock.replication_delay");
    if (const json* x = find(v, "down_after")) r.down_after = get_duration(*x, "lock.down_after");
    if (const json* x = find(v, "expiry_clock")) {
      r.expiry_clock = get_word<sim::ClockKind>(*x, "lock.expiry_clock");
    }
    if (const json* x = find(v, "counter_key")) r.counter_key = get_string(*x, "lock.counter_key", 1024);
    if (const json* x = find(v, "persistence")) {
      r.persistence = get_word<RedisPersistence>(*x, "lock.persistence");
    }
  }

  /// `lock.cluster`: Redis Cluster mode. Sentinel, Redlock and the single
  /// primary's replicas do not apply beside it; each of those keys may still
  /// be given as the integer 0, its "none", which is what a cluster implies.
  void load_cluster(const json& lock, const json& v) {
    RedisSpec& r = s_.lock.redis;
    // The value shown in the message: `"sentinels": 3 does not apply ...`.
    const auto beside = [&](const char* key) -> std::optional<std::string> {
      const json* x = find(lock, key);
      if (x == nullptr || (x->is_number_integer() && x->get<long long>() == 0)) return std::nullopt;
      return quote(key) + (x->is_number_integer() ? ": " + x->dump() : "");
    };
    if (const auto shown = beside("sentinels")) {
      fail("lock.sentinels",
           *shown +
               " does not apply with lock.cluster: Redis Cluster fails over by itself (the primaries "
               "elect a replica), Sentinel does not monitor a cluster",
           "remove lock.sentinels");
    }
    if (const auto shown = beside("redlock")) {
      fail("lock.redlock",
           *shown +
               " does not apply with lock.cluster: Redlock runs over independent primaries, a cluster "
               "shards one key space over primaries with replicas; choose one",
           "remove lock.redlock or lock.cluster");
    }
    if (const auto shown = beside("replicas")) {
      fail("lock.replicas", *shown + " does not apply with lock.cluster: a cluster's replicas are per shard",
           "use lock.cluster.replicas");
    }
    expect_object(v, "lock.cluster", "the Redis Cluster settings, e.g. {\"shards\": 3}");
    check_keys(v, "lock.cluster", kClusterKeys, "lock.cluster");
    RedisClusterSpec c;
    c.shards = static_cast<int>(get_int(require(v, "lock.cluster", "shards", "the number of primaries, e.g. 3"),
                                        "lock.cluster.shards", Ranges::kClusterShards));
    if (const json* x = find(v, "replicas")) {
      c.replicas = static_cast<int>(get_int(*x, "lock.cluster.replicas", Ranges::kClusterReplicas));
    }
    if (const json* x = find(v, "node_timeout")) c.node_timeout = get_duration(*x, "lock.cluster.node_timeout");
    r.cluster = c;
    r.replicas = 0;
    r.sentinels = 0;
  }

  /// `"service": "queue"`: its own keys only (a lock's are pointed at).
  void load_queue(const json& v) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (contains(kQueueKeys, it.key())) continue;
      const std::string p = key_path("lock", it.key());
      if (it.key() == "ttl") {
        fail(p, "\"ttl\" does not apply to \"service\": \"queue\"; the queue's lease is its visibility timeout",
             "use \"visibility_timeout\"");
      }
      if (contains(kLockCommonKeys, it.key()) || contains(kRedisKeys, it.key()) || contains(kEtcdKeys, it.key())) {
        fail(p, quote(it.key()) + " is a lock setting; it does not apply to \"service\": \"queue\"");
      }
      fail(p,
           "unknown key " + quote(it.key()) + " in lock (service queue); expected one of " + join_list(kQueueKeys, 20),
           suggest(it.key(), kQueueKeys));
    }
    QueueSpec& q = s_.lock.queue;
    q.visibility_timeout = get_duration(
        require(v, "lock", "visibility_timeout", "how long a received message stays invisible, e.g. \"30s\""),
        "lock.visibility_timeout");
    // The design's lease TTL is the visibility timeout (renew_interval defaults to a third of it).
    s_.lock.ttl = s_.lock.requested_ttl = q.visibility_timeout;
    q.messages =
        static_cast<int>(get_int(require(v, "lock", "messages", "how many messages are enqueued at time 0, e.g. 10"),
                                 "lock.messages", Ranges::kQueueMessages));
    if (const json* x = find(v, "fifo")) q.fifo = get_bool(*x, "lock.fifo");
    if (const json* x = find(v, "max_receives")) {
      q.max_receives = static_cast<int>(get_int(*x, "lock.max_receives", Ranges::kMaxReceives));
    }
  }

  void load_etcd(const json& v) {
    EtcdSpec& e = s_.lock.etcd;
    if (const json* x = find(v, "nodes")) e.nodes = static_cast<int>(get_int(*x, "lock.nodes", Ranges::kEtcdNodes));
    if (const json* x = find(v, "heartbeat")) e.heartbeat = get_duration(*x, "lock.heartbeat");
    if (const json* x = find(v, "election_timeout")) e.election_timeout = get_duration(*x, "lock.election_timeout");
    src_.election_timeout_given = find(v, "election_timeout") != nullptr;
    if (const json* x = find(v, "token")) {
      e.token = get_word<EtcdToken>(*x, "lock.token");
    }
    // The version's profile first, then the fine-grained keys as overrides
    // (models/etcd/versions.hpp).
    if (const json* x = find(v, "version")) {
      e.version = std::string(etcd::known_versions()[get_enum(*x, "lock.version", etcd::known_versions())]);
    }
    etcd::apply_version(e);
    if (const json* x = find(v, "pre_vote")) e.pre_vote = get_bool(*x, "lock.pre_vote");
    if (const json* x = find(v, "keepalive_checks_leadership")) {
      e.keepalive_checks_leadership = get_bool(*x, "lock.keepalive_checks_leadership");
    }
    if (const json* x = find(v, "keepalive_skips_check_if_active")) {
      e.keepalive_skips_check_if_active = get_bool(*x, "lock.keepalive_skips_check_if_active");
    }
    if (const json* x = find(v, "mutex_checks_own_key")) {
      e.mutex_checks_own_key = get_bool(*x, "lock.mutex_checks_own_key");
    }
    if (const json* x = find(v, "lock_fails_on_session_end")) {
      e.lock_fails_on_session_end = get_bool(*x, "lock.lock_fails_on_session_end");
    }
    if (const json* x = find(v, "wal_fsync")) {
      e.wal_fsync = get_duration(*x, "lock.wal_fsync");
      if (e.wal_fsync > std::chrono::seconds(10)) {
        fail("lock.wal_fsync", "must be at most 10s (one WAL fsync of a member), got " + quote(x->get<std::string>()),
             "a local SSD takes about \"2ms\", a 7200 RPM disk \"20ms\" (etcd's hardware guide)");
      }
    }
    // Odd membership, the heartbeat multiple, whole-second TTLs and etcd's
    // minimum TTL are models/validate.cpp's (validate_lock, resolve_defaults).
  }

  // -- resource ----------------------------------------------------------------

  void load_resource() {
    const json& v = require(root_, "", "resource", "the protected resource, e.g. {\"kind\": \"fenced\"}");
    expect_object(v, "resource", "the resource");
    check_keys(v, "resource", kResourceKeys, "resource");
    ResourceSpec& r = s_.resource;
    r.kind =
        get_word<ResourceKind>(require(v, "resource", "kind", or_quoted(word_list<ResourceKind>())), "resource.kind");
    for (std::string_view k : {"check", "fence_reads", "idempotent"}) {
      if (r.kind != ResourceKind::kFenced && find(v, k)) {
        fail(key_path("resource", k), quote(k) + " applies only to a fenced resource (\"kind\": \"fenced\"), not to " +
                                          quote(to_string(r.kind)));
      }
    }
    if (const json* x = find(v, "check")) {
      r.check = get_word<FenceCheck>(*x, "resource.check");
    }
    if (const json* x = find(v, "fence_reads")) r.fence_reads = get_bool(*x, "resource.fence_reads");
    if (const json* x = find(v, "idempotent")) r.idempotent = get_bool(*x, "resource.idempotent");
    if (const json* x = find(v, "initial")) {
      r.initial = get_int(*x, "resource.initial", Ranges::kInitial);
    }
    if (const json* x = find(v, "replicas")) {
      r.replicas = static_cast<int>(get_int(*x, "resource.replicas", Ranges::kResourceReplicas));
    }
    if (const json* x = find(v, "replication_delay"))
      r.replication_delay = get_duration(*x, "resource.replication_delay");
  }

  // -- clients -----------------------------------------------------------------

  void load_clients() {
    const json& v = require(root_, "", "clients", "an array of at least one client");
    if (!v.is_array()) fail("clients", "expected an array of clients, got " + describe(v));
    if (v.size() > static_cast<std::size_t>(Limits::kMaxClients)) fail("clients", too_many_clients());
    // (No clients at all: validate_clients.)
    std::size_t total = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string path = index_path("clients", i);
      const json& c = v[i];
      expect_object(c, path, "a client");
      check_keys(c, path, kClientKeys, "a client");
      const std::string name = get_string(require(c, path, "name", "the client's name, e.g. \"A\""),
                                          key_path(path, "name"), LoaderLimits::kMaxTextLength);
      const int count = client_count(c, path, total);
      const ClientSpec spec = load_client(c, path);
      // `count` is file syntax: N clients name-0 … name-(N-1).
      for (int k = 0; k < count; ++k) {
        ClientSpec copy = spec;
        copy.name = count == 1 ? name : name + "-" + std::to_string(k);
        s_.clients.push_back(std::move(copy));
        src_.clients.push_back(ScenarioSource::Client{i, count > 1});
      }
    }
  }

  static std::string too_many_clients() {
    return "too many clients: at most " + std::to_string(Limits::kMaxClients) + " after count expansion";
  }

  /// The client's `count`, with the running total bounded before anything is expanded.
  static int client_count(const json& c, const std::string& path, std::size_t& total) {
    int count = 1;
    if (const json* x = find(c, "count"))
      count = static_cast<int>(get_int(*x, key_path(path, "count"), Ranges::kCount));
    total += static_cast<std::size_t>(count);
    if (total > static_cast<std::size_t>(Limits::kMaxClients)) {
      // Point at this client's `count` only if it has one; else at the
      // client that tipped the total over (the counts are earlier).
      fail(find(c, "count") != nullptr ? key_path(path, "count") : path,
           too_many_clients() + " (this client makes " + std::to_string(total) + ")");
    }
    return count;
  }

  /// One entry of clients[] but its name and count.
  ClientSpec load_client(const json& c, const std::string& path) {
    ClientSpec spec;
    auto kp = [&](std::string_view k) { return key_path(path, k); };
    if (const json* x = find(c, "start")) spec.start = get_duration(*x, kp("start"));
    if (const json* x = find(c, "fencing")) spec.fencing = get_bool(*x, kp("fencing"));
    if (const json* x = find(c, "renew")) spec.renew = get_bool(*x, kp("renew"));
    // Left out: a third of the TTL in effect (resolve_defaults).
    spec.renew_interval = kResolveRenewInterval;
    if (const json* x = find(c, "renew_interval")) spec.renew_interval = get_duration(*x, kp("renew_interval"));
    if (const json* x = find(c, "renew_clock")) {
      spec.renew_clock = get_word<sim::ClockKind>(*x, kp("renew_clock"));
    }
    if (const json* x = find(c, "retry_interval")) spec.retry_interval = get_duration(*x, kp("retry_interval"));
    if (const json* x = find(c, "command_timeout")) spec.command_timeout = get_duration(*x, kp("command_timeout"));
    if (const json* x = find(c, "resource")) spec.resource = get_string(*x, kp("resource"), 256);
    if (const json* x = find(c, "lock")) {
      spec.lock = get_string(*x, kp("lock"), 1024);
      if (spec.lock.empty()) fail(kp("lock"), "the lock name must not be empty", "leave \"lock\" out for lock.key");
    }
    load_client_policies(c, path, spec);
    if (const json* x = find(c, "ttl")) spec.ttl = get_duration(*x, kp("ttl"), kPositive);
    if (const json* x = find(c, "library")) {
      spec.library = get_word<EtcdLibrary>(*x, kp("library"));
      if (s_.lock.service != ServiceKind::kEtcd) {
        fail(kp("library"), "\"library\" chooses an etcd client library, and lock.service is " +
                                quote(to_string(s_.lock.service)) + ": remove it");
      }
      if (spec.library == EtcdLibrary::kJetcd) {
        for (const char* k : {"renew_interval", "renew_clock"}) {
          if (find(c, k) == nullptr) continue;
          fail(kp(k),
               std::string("\"") + k +
                   "\" does not apply to \"library\": \"jetcd\": jetcd schedules its own keepalives (a 500 ms "
                   "tick, each lease a third of its TTL after the last answer)",
               "remove it, or use \"library\": \"go\"");
        }
      }
    }
    spec.workload = load_workload(require(c, path, "workload", "the client's workload, e.g. {\"kind\": \"counter\"}"),
                                  kp("workload"));
    return spec;
  }

  /// check_lease_before_write, on_lease_loss, lease_loss_after (their rules: validate_clients).
  static void load_client_policies(const json& c, const std::string& path, ClientSpec& spec) {
    auto kp = [&](std::string_view k) { return key_path(path, k); };
    if (const json* x = find(c, "check_lease_before_write")) {
      if (x->is_boolean() && !x->get<bool>()) {
        spec.check_lease_before_write.reset();
      } else if (x->is_string()) {
        spec.check_lease_before_write = get_duration(*x, kp("check_lease_before_write"));
      } else {
        fail(kp("check_lease_before_write"),
             "expected false or a duration margin such as \"500ms\", got " + describe(*x),
             x->is_boolean() ? "write the margin the check keeps below the TTL, e.g. \"0s\"" : "");
      }
    }
    if (const json* x = find(c, "on_lease_loss")) {
      spec.on_lease_loss = get_word<LeaseLossPolicy>(*x, kp("on_lease_loss"));
    }
    if (const json* x = find(c, "lease_loss_after")) {
      if (x->is_string() && x->get_ref<const std::string&>() == "none") {
        spec.lease_loss_after.reset();
      } else if (x->is_string()) {
        spec.lease_loss_after = get_duration(*x, kp("lease_loss_after"), kPositive);
      } else {
        fail(kp("lease_loss_after"), "expected \"none\" or a duration such as \"10s\", got " + describe(*x));
      }
    }
  }

  WorkloadSpec load_workload(const json& v, const std::string& path) {
    expect_object(v, path, "a workload");
    WorkloadSpec w;
    const json& kind = require(v, path, "kind", or_quoted(word_list<WorkloadKind>()));
    w.kind = get_word<WorkloadKind>(kind, key_path(path, "kind"));
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() == "block" && w.kind != WorkloadKind::kSequenceAllocator) {
        fail(key_path(path, "block"),
             "\"block\" applies only to the sequence_allocator workload, not to " + quote(word(w.kind)));
      }
    }
    check_keys(v, path, kWorkloadKeys, "a workload");
    if (const json* x = find(v, "block")) w.block = get_int(*x, key_path(path, "block"), Ranges::kBlock);
    if (const json* x = find(v, "work")) {
      // A duration, or a range {"min", "max"} drawn per iteration.
      const auto [lo, hi] = get_range(*x, key_path(path, "work"), kNonNegative);
      w.work = lo;
      if (x->is_object() && hi != lo) w.work_max = hi;  // an empty range is a fixed value
    }
    if (const json* x = find(v, "iterations")) {
      w.iterations = static_cast<int>(get_int(*x, key_path(path, "iterations"), Ranges::kIterations));
    }
    if (const json* x = find(v, "think")) {
      const auto [lo, hi] = get_range(*x, key_path(path, "think"), kNonNegative);
      w.think = lo;
      if (x->is_object() && hi != lo) w.think_max = hi;
    }
    // Only with a cas resource: validate_clients.
    if (const json* x = find(v, "retries")) {
      w.retries = static_cast<int>(get_int(*x, key_path(path, "retries"), Ranges::kRetries));
    }
    if (const json* x = find(v, "retry_backoff")) {
      w.retry_backoff = get_word<RetryBackoff>(*x, key_path(path, "retry_backoff"));
    }
    return w;
  }

  // -- node names ----------------------------------------------------------------

  std::string service_word() const { return to_string(s_.lock.service); }

  /// Why a role alias is not valid here, or "" if it is.
  std::string role_problem(const std::string& name) const {
    const auto& roles = dir_.roles();
    if (std::find(roles.begin(), roles.end(), name) != roles.end()) return "";
    const ServiceDescriptor* owner = role_owner(name);
    return "the role " + quote(name) + " needs the " + (owner ? owner->display_name() : std::string("?")) +
           " service; this scenario's lock service is " + service_word();
  }

  std::vector<std::string> known_names() const {
    std::vector<std::string> out = dir_.all();
    for (const auto& r : dir_.roles()) out.push_back(r);
    return out;
  }

  [[noreturn]] void unknown_node(const std::string& name, const std::string& path, bool groups_ok) const {
    std::vector<std::string> cands = known_names();
    // Only the groups with nodes here (a registered service's groups are
    // empty unless it is this scenario's): a suggestion never names an
    // empty group.
    std::vector<std::string> groups;
    for (const NodeGroup& g : dir_.groups) {
      if (!g.nodes.empty()) groups.push_back(g.name);
    }
    if (groups_ok) cands.insert(cands.end(), groups.begin(), groups.end());
    fail(path,
         "unknown node " + quote(name) + "; nodes in this scenario are " + join_list(dir_.all(), 16) +
             (dir_.roles().empty() ? "" : ", roles " + join_list(dir_.roles())) +
             (groups_ok ? ", groups " + join_list(groups) : ""),
         suggest(name, cands));
  }

  /// A single node or a role alias.
  std::string get_target(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a node name (a string), got " + describe(v));
    const auto& name = v.get_ref<const std::string&>();
    if (nodes_.count(name) != 0) return name;
    if (is_role_name(name)) {
      if (auto why = role_problem(name); !why.empty()) fail(path, why);
      return name;
    }
    if (is_group_name(name)) {
      std::string roles;
      for (const auto& r : all_role_names()) roles += (roles.empty() ? "" : ", ") + r;
      fail(path, quote(name) + " is a group; a target is a single node or a role (" + roles + ")",
           "write one fault per node, or use the node list of a partition");
    }
    unknown_node(name, path, false);
  }

  /// A node list: node names, role aliases and group names, expanded in
  /// declaration order, duplicates dropped.
  std::vector<std::string> get_node_list(const json& v, const std::string& path) const {
    if (!v.is_array()) fail(path, "expected a list of node names, e.g. [\"A\", \"redis\"], got " + describe(v));
    if (v.empty()) fail(path, "the node list is empty; name at least one node or group");
    std::vector<std::string> out;
    std::set<std::string> seen;
    auto add = [&](const std::string& n) {
      if (seen.insert(n).second) out.push_back(n);
    };
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = index_path(path, i);
      if (!v[i].is_string()) fail(p, "expected a node or group name (a string), got " + describe(v[i]));
      const auto& name = v[i].get_ref<const std::string&>();
      if (nodes_.count(name) != 0) {
        add(name);
      } else if (auto g = dir_.group(name)) {
        if (g->empty())
          fail(p, "the group " + quote(name) + " has no nodes in this scenario (lock service " + service_word() + ")");
        for (const auto& n : *g) add(n);
      } else if (is_role_name(name)) {
        if (auto why = role_problem(name); !why.empty()) fail(p, why);
        add(name);
      } else {
        unknown_node(name, p, true);
      }
    }
    return out;
  }

  // -- faults ------------------------------------------------------------------

  void load_faults() {
    const json* v = find(root_, "faults");
    if (v == nullptr) return;
    if (!v->is_array()) fail("faults", "expected an array of faults, got " + describe(*v));
    if (v->size() > static_cast<std::size_t>(Limits::kMaxFaults)) {
      fail("faults", "too many faults: at most " + std::to_string(Limits::kMaxFaults));
    }
    for (std::size_t i = 0; i < v->size(); ++i) s_.faults.push_back(load_fault((*v)[i], index_path("faults", i)));
  }

  static Keys fault_kind_names() {
    Keys out;
    for (const FaultKindInfo& k : fault_kinds()) out.push_back(k.name);
    return out;
  }

  FaultSpec load_fault(const json& v, const std::string& path) {
    expect_object(v, path, "a fault");
    const Keys kinds = fault_kind_names();
    const json& kind_v = require(v, path, "kind", "one of " + join_list(kinds));
    FaultSpec f;
    f.kind = fault_kinds()[get_enum(kind_v, key_path(path, "kind"), kinds)].kind;
    check_fault_keys(v, path, f.kind);
    f.origin = path;
    auto [at, at_max] =
        get_range(require(v, path, "at", "when the fault starts, e.g. \"5s\""), key_path(path, "at"), kNonNegative);
    f.at = at;
    if (at_max != at) f.at_max = at_max;  // max below min: validate's fault()
    parse_fault_params(v, path, f);
    return f;
  }

  /// Refuses a key the kind does not take (fault_keys), naming the kinds
  /// that do take it.
  static void check_fault_keys(const json& v, const std::string& path, FaultKind kind) {
    const std::string kname = to_string(kind);
    Keys allowed = {"at", "kind"};
    const Keys& own = fault_keys(kind);
    allowed.insert(allowed.end(), own.begin(), own.end());
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (contains(allowed, it.key())) continue;
      // A key of another kind: say whose it is.
      std::vector<std::string> owners;
      for (const FaultKindInfo& other : fault_kinds()) {
        if (contains(other.keys, it.key())) owners.push_back(other.name);
      }
      const std::string p = key_path(path, it.key());
      const std::string takes = "a " + kname + " fault takes " + join_list(allowed);
      if (!owners.empty()) {
        fail(p, quote(it.key()) + " does not apply to a " + kname + " fault (it belongs to " + join_list(owners) +
                    "); " + takes);
      }
      fail(p, "unknown key " + quote(it.key()) + " in a " + kname + " fault; " + takes, suggest(it.key(), allowed));
    }
  }

  /// The loader's KeyReader (models/key_reader.hpp) over the object `v` at
  /// `path`: each getter is one of the accessors above, so a model's keys
  /// (a fault kind's) get the loader's words and JSON paths.
  class ObjectReader final : public KeyReader {
   public:
    ObjectReader(Loader& l, const json& v, const std::string& path) : l_(l), v_(v), path_(path) {}
    bool has(std::string_view key) const override { return find(v_, key) != nullptr; }
    std::optional<Duration> duration(std::string_view key, DurationRule rule, const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(get_duration(*x, key_path(path_, key), rule)) : std::nullopt;
    }
    std::optional<std::int64_t> integer(std::string_view key, const IntRange& r, const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(get_int(*x, key_path(path_, key), r)) : std::nullopt;
    }
    std::optional<bool> boolean(std::string_view key, const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(get_bool(*x, key_path(path_, key))) : std::nullopt;
    }
    std::optional<std::string> text(std::string_view key, const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(get_string(*x, key_path(path_, key))) : std::nullopt;
    }
    std::optional<std::size_t> choice(std::string_view key, const std::vector<std::string>& options,
                                      const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(get_enum(*x, key_path(path_, key), Keys(options.begin(), options.end()))) : std::nullopt;
    }
    std::optional<std::string> node(std::string_view key, const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(l_.get_target(*x, key_path(path_, key))) : std::nullopt;
    }
    std::optional<std::vector<std::string>> nodes(std::string_view key, const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(l_.get_node_list(*x, key_path(path_, key))) : std::nullopt;
    }
    std::optional<std::vector<std::vector<std::string>>> node_groups(std::string_view key,
                                                                     const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(l_.get_partition_groups(*x, key_path(path_, key))) : std::nullopt;
    }
    [[noreturn]] void fail(std::string_view key, const std::string& message) override {
      fencesim::fail(key.empty() ? path_ : key_path(path_, key), message);
    }

   private:
    /// The key's value; nullptr when it is absent and optional.
    const json* get(std::string_view key, const Required& required) {
      return required ? &l_.require(v_, path_, key, *required) : find(v_, key);
    }
    Loader& l_;
    const json& v_;
    const std::string& path_;
  };

  /// Parses the keys of f.kind (those fault_keys lists) into `f`: the fault
  /// table's reader for the kind (FaultKindInfo::parse).
  void parse_fault_params(const json& v, const std::string& path, FaultSpec& f) {
    ObjectReader in(*this, v, path);
    fault_info(f.kind).parse(in, f);
  }

  /// A partition's "groups": at least two node lists, no node in two.
  std::vector<std::vector<std::string>> get_partition_groups(const json& groups, const std::string& path) const {
    if (!groups.is_array())
      fail(path, "expected a list of node lists, e.g. [[\"A\"], [\"redis\"]], got " + describe(groups));
    if (groups.size() < 2) fail(path, "a partition needs at least two groups");
    std::vector<std::vector<std::string>> out;
    std::map<std::string, std::size_t> where;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::string gp = index_path(path, g);
      std::vector<std::string> nodes = get_node_list(groups[g], gp);
      for (const auto& n : nodes) {
        auto [it, fresh] = where.emplace(n, g);
        if (!fresh) {
          fail(gp, "node " + quote(n) + " is in groups " + std::to_string(it->second) + " and " + std::to_string(g) +
                       "; each node may be in one group only");
        }
      }
      out.push_back(std::move(nodes));
    }
    return out;
  }

  // -- nemesis -----------------------------------------------------------------

  void load_nemesis() {
    const json* v = find(root_, "nemesis");
    if (v == nullptr) return;
    expect_object(*v, "nemesis", "the nemesis settings");
    check_keys(*v, "nemesis", kNemesisKeys, "nemesis");
    NemesisSpec n;
    Keys names;
    for (FaultKind k : nemesis_fault_kinds()) names.push_back(to_string(k));
    const json& kinds = require(*v, "nemesis", "kinds", "the fault kinds to draw, e.g. [\"pause\"]");
    if (!kinds.is_array())
      fail("nemesis.kinds", "expected a list of fault kinds, e.g. [\"pause\", \"crash\"], got " + describe(kinds));
    // (An empty list: validate_nemesis.)
    if (kinds.size() > 100) fail("nemesis.kinds", "too many entries: at most 100");
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      const std::string p = index_path("nemesis.kinds", i);
      if (kinds[i].is_string()) {
        const auto& s = kinds[i].get_ref<const std::string&>();
        if (!contains(names, s) && fault_kind_from_string(s)) {
          fail(p, quote(s) + " cannot be drawn by the nemesis; nemesis kinds are " + join_list(names));
        }
      }
      n.kinds.push_back(nemesis_fault_kinds()[get_enum(kinds[i], p, names)]);
    }
    if (const json* x = find(*v, "groups")) {
      if (find(*v, "targets") != nullptr) {
        fail("nemesis.groups",
             "give either \"targets\" (one node a draw) or \"groups\" (a whole group a draw), not both");
      }
      if (!x->is_array() || x->empty()) {
        fail("nemesis.groups", "expected a non-empty list of node lists, e.g. [[\"etcd-leader\"], [\"etcd\"]], got " +
                                   (x->is_array() ? std::string("an empty list") : describe(*x)));
      }
      if (x->size() > 100) fail("nemesis.groups", "too many entries: at most 100");
      for (std::size_t i = 0; i < x->size(); ++i) {
        n.groups.push_back(get_node_list((*x)[i], index_path("nemesis.groups", i)));
      }
    } else if (const json* t = find(*v, "targets")) {
      n.targets = get_node_list(*t, "nemesis.targets");
    } else {
      n.targets = dir_.clients();
    }
    if (const json* x = find(*v, "interval")) {
      auto [lo, hi] = get_range(*x, "nemesis.interval", kNonNegative);
      n.interval_min = lo;
      n.interval_max = hi;
    }
    if (const json* x = find(*v, "max_duration")) n.max_duration = get_duration(*x, "nemesis.max_duration");
    if (const json* x = find(*v, "swarm")) n.swarm = get_bool(*x, "nemesis.swarm");
    src_.nemesis_interval_given = find(*v, "interval") != nullptr;
    // Positive interval and max_duration, and the bound on the draws: validate_nemesis.
    s_.nemesis = std::move(n);
  }

  // -- expect ------------------------------------------------------------------

  void load_expect() {
    const json* v = find(root_, "expect");
    if (v == nullptr) return;
    expect_object(*v, "expect", "a map of property to \"holds\" or \"violated\"");
    Keys props;
    for (Property p : all_properties()) props.push_back(to_string(p));
    for (auto it = v->begin(); it != v->end(); ++it) {
      const std::string p = key_path("expect", it.key());
      if (it.key() == "metrics") {
        load_expect_metrics(it.value(), p);
        continue;
      }
      auto prop = property_from_string(it.key());
      if (!prop) {
        Keys words = props;
        words.push_back("metrics");
        fail(p,
             "unknown property " + quote(it.key()) + "; properties are " + join_list(props) +
                 " (and \"metrics\" for bounds on metrics)",
             suggest(it.key(), words));
      }
      // A property that does not apply to the design: validate_expect.
      s_.expect[*prop] = get_word<Expectation>(it.value(), p);
    }
  }

  /// expect.metrics: {"writes_rejected": {"min": 1}, "longest_overlap": {"max": "0s"}}.
  void load_expect_metrics(const json& v, const std::string& path) {
    expect_object(v, path, "a map of metric name to {\"min\": …, \"max\": …}");
    Keys names;
    for (const MetricInfo& i : metric_infos()) names.push_back(i.name);
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string p = key_path(path, it.key());
      const MetricInfo* info = find_metric(it.key());
      if (info == nullptr) {
        fail(p, "unknown metric " + quote(it.key()) + "; metrics are " + join_list(names, 20),
             suggest(it.key(), names));
      }
      expect_object(it.value(), p,
                    std::string("a bound such as {\"min\": ") + (info->duration ? "\"1s\"" : "1") +
                        "} or {\"max\": " + (info->duration ? "\"3s\"" : "0") + "}");
      check_keys(it.value(), p, kMetricBoundKeys, "a metric bound");
      MetricBound b;
      for (const char* side : {"min", "max"}) {
        const json* x = find(it.value(), side);
        if (x == nullptr) continue;
        const std::string sp = key_path(p, side);
        std::int64_t value = 0;
        if (info->duration) {
          value = get_duration(*x, sp).count();
        } else {
          if (x->is_string()) {
            fail(sp, std::string(info->name) + " is a count: expected an integer from 0, got " + describe(*x));
          }
          value = get_int(*x, sp, Ranges::kMetricCount);
        }
        (std::string_view(side) == "min" ? b.min : b.max) = value;
      }
      if (!b.min && !b.max) fail(p, "a metric bound needs \"min\", \"max\" or both, e.g. {\"min\": 1}");
      // min above max: validate_expect.
      s_.expect_metrics[it.key()] = b;
    }
  }

  const json& root_;
  Scenario s_;
  NodeDirectory dir_;
  std::set<std::string> nodes_;
  ScenarioSource src_;  ///< where each expanded client came from, and which keys were written
};

LoadResult error_result(const std::string& file, std::string path, std::string message, std::string suggestion = "",
                        int line = 0, int column = 0) {
  LoadResult r;
  r.error = LoadError{file, std::move(path), std::move(message), std::move(suggestion), line, column};
  return r;
}

}  // namespace

std::optional<LoadError> parse_json_text(std::string_view text, const std::string& file_label, nlohmann::json& root,
                                         const std::string& what) {
  if (text.size() > LoaderLimits::kMaxFileBytes) {
    return error_result(file_label, "",
                        "the file is too large (" + std::to_string(text.size()) + " bytes; at most " +
                            std::to_string(LoaderLimits::kMaxFileBytes) + ")")
        .error;
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return error_result(file_label, "", "the file is empty; " + what + " is one JSON object (see docs/FORMAT.md)")
        .error;
  }
  try {
    GuardedSax sax(root);
    const bool ok = json::sax_parse(text.begin(), text.end(), &sax, nlohmann::json::input_format_t::json,
                                    /*strict=*/true, /*ignore_comments=*/true);
    if (!ok) {
      const ParseProblem& p = sax.problem();
      if (p.syntax) {
        // Line and column of the last byte the lexer read (1-based, bytes).
        const std::size_t end = std::min(p.byte, text.size());
        int line = 1;
        std::size_t line_start = 0;
        for (std::size_t i = 0; i < end; ++i) {
          if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
          }
        }
        const int column = static_cast<int>(std::max<std::size_t>(1, end - line_start));
        // Two common slips get a hint: a trailing comma and single quotes.
        std::string hint;
        if (end >= 1 && (text[end - 1] == '}' || text[end - 1] == ']')) {
          std::size_t i = end - 1;
          while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n' || text[i - 1] == '\r'))
            --i;
          if (i > 0 && text[i - 1] == ',')
            hint = "JSON allows no comma before a closing bracket: remove the trailing comma";
        } else if (end >= 1 && text[end - 1] == '\'') {
          hint = "JSON strings need double quotes";
        }
        return error_result(file_label, "", "malformed JSON: " + p.message, hint, line, column).error;
      }
      return error_result(file_label, p.path, p.message.empty() ? "malformed JSON" : p.message).error;
    }
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    return error_result(file_label, "", "out of memory while reading the file").error;
  } catch (const std::exception& e) {
    return error_result(file_label, "", std::string("internal error while reading: ") + e.what()).error;
  }
}

LoadResult load_scenario_text(std::string_view text, const std::string& file_label) {
  json root;
  if (auto e = parse_json_text(text, file_label, root, "a scenario")) {
    LoadResult r;
    r.error = std::move(*e);
    return r;
  }
  return load_scenario_json(root, file_label);
}

LoadResult load_scenario_json(const nlohmann::json& root, const std::string& file_label) {
  try {
    Loader loader(root);
    LoadResult r;
    r.scenario = loader.run();
    return r;
  } catch (const Failure& f) {
    return error_result(file_label, f.path, f.message, f.suggestion);
  } catch (const std::bad_alloc&) {
    return error_result(file_label, "", "out of memory while reading the file");
  } catch (const std::exception& e) {
    // Not expected: every rule above fails with Failure. Report, never crash.
    return error_result(file_label, "", std::string("internal error while loading: ") + e.what());
  }
}

LoadResult load_scenario_file(const std::string& path) {
  std::string text;
  if (auto e = read_text_file(path, text, "a scenario file")) {
    LoadResult r;
    r.error = std::move(*e);
    return r;
  }
  return load_scenario_text(text, path);
}

std::optional<LoadError> read_text_file(const std::string& path, std::string& text, const std::string& what) {
  const auto error_result = [](const std::string& file, std::string p, std::string message) {
    return fencesim::error_result(file, std::move(p), std::move(message)).error;
  };
  std::error_code ec;
  if (path.empty()) return error_result("\"\"", "", "an empty file name; give the path of " + what);
  if (!std::filesystem::exists(path, ec)) {
    // exists() is false with an error for a link loop or a directory that
    // cannot be searched: name that instead of "no such file".
    if (ec) return error_result(path, "", "cannot read: " + ec.message());
    return error_result(path, "", "no such file");
  }
  if (std::filesystem::is_directory(path, ec)) return error_result(path, "", "is a directory, not " + what);
  // A named pipe would block the read until a writer comes; a device may
  // never end. Only regular files (or links to them) are read.
  if (!std::filesystem::is_regular_file(path, ec)) {
    return error_result(path, "", "is not a regular file (a pipe, socket or device); give " + what);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return error_result(path, "", "cannot open the file for reading");
  text.clear();
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > LoaderLimits::kMaxFileBytes) {
      return error_result(
          path, "", "the file is too large (more than " + std::to_string(LoaderLimits::kMaxFileBytes) + " bytes)");
    }
  }
  if (in.bad()) return error_result(path, "", "read error");
  return std::nullopt;
}

std::vector<std::string> format_keys(const std::string& section) {
  static const std::vector<std::pair<std::string_view, const Keys*>> kSections = {
      {"top", &kTopKeys},       {"network", &kNetworkKeys},   {"lock", &kLockCommonKeys},
      {"redis", &kRedisKeys},   {"cluster", &kClusterKeys},   {"etcd", &kEtcdKeys},
      {"queue", &kQueueKeys},   {"table", &kTableKeys},       {"resource", &kResourceKeys},
      {"client", &kClientKeys}, {"workload", &kWorkloadKeys}, {"nemesis", &kNemesisKeys}};
  for (const auto& [name, keys] : kSections) {
    if (name == section) return std::vector<std::string>(keys->begin(), keys->end());
  }
  return {};
}

}  // namespace fencesim
