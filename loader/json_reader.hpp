// loader/json_reader.hpp — the loader's typed reader over nlohmann::json
// (internal to loader/; the public API is loader.hpp).
//
// Every getter takes a value and its JSON path ("clients[1].renew_interval")
// and either returns the value, typed, or ends the load by throwing
// `Failure` (path, message, suggestion) — never anything else, and never out
// of loader/: load_scenario_json turns it into the LoadError a user sees.
// The words of the messages are the format's (docs/FORMAT.md "Errors") and
// tests/loader pins them byte for byte.
//
// `JsonKeyReader` is the models' view of one JSON object
// (models/key_reader.hpp): a lock service reads its keys of the `lock`
// section through it, with the same getters and the same messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/loader.hpp"
#include "models/key_reader.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"

namespace fencesim::loading {

using nlohmann::json;
using Keys = std::vector<std::string_view>;

/// The first problem of a file; thrown by `fail`, caught by load_scenario_json.
struct Failure {
  std::string path;
  std::string message;
  std::string suggestion;
};

[[noreturn]] void fail(std::string path, std::string message, std::string suggestion = "");

/// A LoadResult that holds only the error: `file` (as the user named it),
/// the JSON path, the message, the suggestion and, for a syntax error, the
/// line and column (1-based; 0 = none).
LoadResult error_result(const std::string& file, std::string path, std::string message, std::string suggestion = "",
                        int line = 0, int column = 0);

// ---------------------------------------------------------------------------
// Small text helpers.

/// A user-supplied string made safe for a one-line message (shared with
/// models/validate.hpp, so both give the same words).
std::string quote(std::string_view s, std::size_t max = 48);

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
std::string or_quoted(const std::vector<std::string>& items);
/// "a string (\"x\")", "an array", … for "got …" in type errors.
std::string describe(const json& v);
/// "lock.replicas"; a key that is no plain word is bracketed: lock["a b"].
std::string key_path(const std::string& parent, std::string_view key);
std::string index_path(const std::string& parent, std::size_t i);

template <typename Range>
bool contains(const Range& keys, std::string_view k) {
  for (const auto& x : keys) {
    if (std::string_view(x) == k) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Typed getters.

/// Rules for a duration value: DurationRule (models/key_reader.hpp; the
/// models read durations with the same rules through a KeyReader).
inline constexpr DurationRule kNonNegative = KeyReader::kNonNegative;
inline constexpr DurationRule kPositive = KeyReader::kPositive;

const json* find(const json& obj, std::string_view key);
/// The value of `key` in `obj`; ends the load ("missing required key …: what") without it.
const json& require(const json& obj, const std::string& path, std::string_view key, const std::string& what);
void expect_object(const json& v, const std::string& path, const std::string& what);
/// Every key of `obj` must be in `allowed`; `where` names the block. The
/// message names the nearest allowed key, or the block a key belongs in.
void check_keys(const json& obj, const std::string& path, const Keys& allowed, const std::string& where);

std::int64_t get_int(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi,
                     const std::string& extra = "");
std::int64_t get_int(const json& v, const std::string& path, const IntRange& r);
std::uint64_t get_u64(const json& v, const std::string& path);
bool get_bool(const json& v, const std::string& path);
std::string get_string(const json& v, const std::string& path, std::size_t max_len = LoaderLimits::kMaxTextLength);
/// One of `options`; returns its index.
std::size_t get_enum(const json& v, const std::string& path, const Keys& options);
/// One of enum E's words (models/words.hpp), as its value.
template <class E>
E get_word(const json& v, const std::string& path) {
  static const Keys kWords = [] {
    Keys k;
    for (const Word<E>& w : Words<E>::kTable) k.push_back(w.text);
    return k;
  }();
  return Words<E>::kTable[get_enum(v, path, kWords)].value;
}
Duration get_duration(const json& v, const std::string& path, DurationRule rule = kNonNegative);
[[noreturn]] void too_long(const std::string& path, const std::string& text);
/// A duration or {"min": d, "max": d}.
std::pair<Duration, Duration> get_range(const json& v, const std::string& path, DurationRule rule);

// ---------------------------------------------------------------------------
// The models' view of one object.

/// KeyReader (models/key_reader.hpp) over the JSON object `obj` at `path`.
class JsonKeyReader final : public KeyReader {
 public:
  JsonKeyReader(const json& obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  std::string path(std::string_view key) const override { return key_path(path_, key); }
  Shape shape(std::string_view key) const override;
  std::string spelling(std::string_view key) const override;
  std::string_view require(std::string_view key, const std::string& what) override;
  [[noreturn]] void fail(std::string_view key, const std::string& message, const std::string& suggestion) override;
  using KeyReader::duration;
  std::optional<sim::Duration> duration(std::string_view key, DurationRule rule, const Required& required) override;
  std::optional<std::int64_t> integer(std::string_view key, const IntRange& range, const Required& required) override;
  std::optional<bool> boolean(std::string_view key, const Required& required) override;
  std::optional<std::string> text(std::string_view key, std::size_t max_len, const Required& required) override;
  std::optional<std::size_t> choice(std::string_view key, const std::vector<std::string>& options,
                                    const Required& required) override;
  void object(std::string_view key, const std::string& what, const std::vector<std::string>& keys,
              const std::function<void(KeyReader&)>& fill) override;

 private:
  /// The key's value; nullptr when it is absent and optional.
  const json* get(std::string_view key, const Required& required) const;
  const json& obj_;
  std::string path_;
};

}  // namespace fencesim::loading
