// models/key_reader.hpp — settings read key by key, without JSON: the twin of
// models/key_writer.hpp.
//
// The models know no JSON (models/scenario.hpp is plain structs); what they
// own of a file — a lock service's keys of the `lock` section
// (ServiceDescriptor::read, models/lock_service.hpp), a fault kind's
// parameters (FaultKindInfo::parse, models/faults.hpp) — they read from a
// KeyReader, one object of the file at a time. The loader implements it over
// nlohmann::json (loader/json_reader.hpp) with its own error machinery: a
// getter that meets a value of the wrong type or out of range does not
// return — it ends the load with one error line naming the JSON path
// ("lock.replicas", "faults[2].by"), what was expected and, where it can, a
// suggestion, exactly as the loader's own sections do (exit 2).
//
//   // in a ServiceDescriptor::read:
//   if (auto n = in.integer("replicas", Ranges::kRedisReplicas)) r.replicas = static_cast<int>(*n);
//   if (auto t = in.word<RedisToken>("token")) r.token = *t;
//   // in a FaultKindInfo::parse (a NodeKeyReader):
//   f.target = *in.node("target", "the node to pause");          // required
//   f.duration = in.duration("duration", KeyReader::kPositive);   // optional
//
// Every getter takes the key's name in the object being read and returns
// nullopt when the key is absent — unless `required` is given: then its
// absence is the error `missing required key "<key>": <required>`, and the
// result always has a value. Units: durations are sim::Duration
// (nanoseconds), written in a file as "10s" / "250ms" (a bare number is
// refused). Which keys an object may hold is checked by the caller before
// the reader is handed out; a reader never refuses a key for being unknown.
#pragma once

#include <cstddef>
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

/// What a duration may be.
struct DurationRule {
  bool allow_negative = false;  ///< "-5s" allowed (a clock_jump's "by")
  bool positive = false;        ///< must be > 0 (at least `min`)
  sim::Duration min{1};         ///< when positive: the least value
};

class KeyReader {
 public:
  static constexpr DurationRule kNonNegative{};
  static constexpr DurationRule kPositive{false, true, sim::Duration{1}};
  static constexpr DurationRule kSigned{true, false, sim::Duration{1}};

  /// What a required key is for (the end of "missing required key"), or
  /// nullopt for an optional key.
  using Required = std::optional<std::string>;

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
  /// Ends the load with an error at `key`'s path ("" = the object's own
  /// path): `message`, and `suggestion` in parentheses when not empty.
  [[noreturn]] virtual void fail(std::string_view key, const std::string& message,
                                 const std::string& suggestion = "") = 0;

  /// A duration string such as "10s", as `rule` allows; at most
  /// Limits::kMaxDuration either way.
  virtual std::optional<sim::Duration> duration(std::string_view key, DurationRule rule,
                                                const Required& required = std::nullopt) = 0;
  /// A non-negative duration, or (`positive`) one of at least 1 ns.
  std::optional<sim::Duration> duration(std::string_view key, bool positive = false) {
    return duration(key, positive ? kPositive : kNonNegative);
  }
  /// An integer in `range` (3.0 is 3; 3.5, "3" and 1e300 end the load; the
  /// message spells the range and its `extra`).
  virtual std::optional<std::int64_t> integer(std::string_view key, const IntRange& range,
                                              const Required& required = std::nullopt) = 0;
  virtual std::optional<bool> boolean(std::string_view key, const Required& required = std::nullopt) = 0;
  /// A string of at most `max_len` bytes.
  virtual std::optional<std::string> text(std::string_view key, std::size_t max_len,
                                          const Required& required = std::nullopt) = 0;
  /// One of `options` (its index); an unknown word ends the load with the
  /// list and the nearest option.
  virtual std::optional<std::size_t> choice(std::string_view key, const std::vector<std::string>& options,
                                            const Required& required = std::nullopt) = 0;
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

/// A KeyReader that also knows the scenario's nodes: what a fault reads
/// (its target, the nodes it isolates, a partition's groups). Node names
/// are checked against the scenario's nodes, groups and role aliases.
class NodeKeyReader : public KeyReader {
 public:
  /// A single node of the scenario, or a role alias ("redis-primary"): a
  /// fault's target. A group name is refused.
  virtual std::optional<std::string> node(std::string_view key, const Required& required = std::nullopt) = 0;
  /// A list of node names, role aliases and group names, expanded in node
  /// order, duplicates dropped; never empty.
  virtual std::optional<std::vector<std::string>> nodes(std::string_view key,
                                                        const Required& required = std::nullopt) = 0;
  /// At least two node lists (each as `nodes`), no node in two of them: a
  /// partition's groups.
  virtual std::optional<std::vector<std::vector<std::string>>> node_groups(std::string_view key,
                                                                           const Required& required = std::nullopt) = 0;
};

}  // namespace fencesim
