// models/key_reader.hpp — settings read key by key, without JSON: the twin of
// models/key_writer.hpp.
//
// The models know no JSON (models/scenario.hpp is plain structs); what they
// own of a file — a lock service's keys of the `lock` section, a fault's
// parameters — they read from a KeyReader, one object of the file at a time.
// The loader implements it over nlohmann::json (loader/json_reader.hpp), with
// its own error machinery: a getter that meets a value of the wrong type or
// out of range does not return — it ends the load with one error line naming
// the JSON path ("lock.replicas"), what was expected and, where it can, a
// suggestion, exactly as the loader's own sections do.
//
//   // in a ServiceDescriptor::read (models/lock_service.hpp):
//   if (auto n = in.integer("replicas", Ranges::kRedisReplicas)) r.replicas = static_cast<int>(*n);
//   if (auto t = in.word<RedisToken>("token")) r.token = *t;
//   r.shards = static_cast<int>(*in.integer(in.require("shards", "the number of primaries, e.g. 3"), ...));
//
// Every getter takes the key's name in the object being read and returns
// nullopt when the key is absent. Units: durations are sim::Duration
// (nanoseconds), written in a file as "10s" / "250ms". Which keys an object
// may hold is checked by the caller before the reader is handed out; a
// reader never refuses a key for being unknown.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/validate.hpp"
#include "models/words.hpp"
#include "sim/time.hpp"

namespace fencesim {

class KeyReader {
 public:
  /// What a value is, for rules that depend on how a file spells it
  /// (Redis Cluster accepts `"sentinels": 0` beside it, nothing else).
  enum class Shape { kAbsent, kNull, kBoolean, kInteger, kNumber, kString, kArray, kObject };

  virtual ~KeyReader() = default;

  /// The JSON path of `key` in this object ("lock.replicas").
  virtual std::string path(std::string_view key) const = 0;
  virtual Shape shape(std::string_view key) const = 0;
  bool has(std::string_view key) const { return shape(key) != Shape::kAbsent; }
  /// The value as the file writes it (JSON text: `3`, `"10s"`), "" when absent.
  virtual std::string spelling(std::string_view key) const = 0;

  /// Ends the load when `key` is absent: "missing required key \"k\": <what>".
  /// Returns `key`, so that `in.integer(in.require("shards", …), …)` reads.
  virtual std::string_view require(std::string_view key, const std::string& what) = 0;
  /// Ends the load with an error at `key`'s path (`message`, `suggestion`).
  [[noreturn]] virtual void fail(std::string_view key, const std::string& message,
                                 const std::string& suggestion = "") = 0;

  /// A duration string such as "10s"; at least `min` when `positive`
  /// (a bare number, a negative or a too long value end the load).
  virtual std::optional<sim::Duration> duration(std::string_view key, bool positive = false) = 0;
  /// An integer in `range` (3.0 is 3; 3.5, "3" and 1e300 end the load).
  virtual std::optional<std::int64_t> integer(std::string_view key, const IntRange& range) = 0;
  virtual std::optional<bool> boolean(std::string_view key) = 0;
  /// A string of at most `max_len` bytes.
  virtual std::optional<std::string> text(std::string_view key, std::size_t max_len) = 0;
  /// One of `options` (its index); an unknown word ends the load with the
  /// list and the nearest option.
  virtual std::optional<std::size_t> choice(std::string_view key, const std::vector<std::string>& options) = 0;
  /// A nested object: `fill` reads its keys (paths "lock.cluster.shards"),
  /// after its keys are checked against `keys`; `what` names it when the
  /// value is not an object ("the Redis Cluster settings, e.g. {…}").
  virtual void object(std::string_view key, const std::string& what, const std::vector<std::string>& keys,
                      const std::function<void(KeyReader&)>& fill) = 0;

  /// One of enum E's words (models/words.hpp).
  template <class E>
  std::optional<E> word(std::string_view key) {
    const std::vector<std::string> words = word_list<E>();
    const auto i = choice(key, words);
    if (!i) return std::nullopt;
    return Words<E>::kTable[*i].value;
  }
};

}  // namespace fencesim
