// models/key_reader.hpp — settings read key by key, without JSON.
//
// The reading twin of models/key_writer.hpp. The models know no JSON
// (models/scenario.hpp is plain structs); what they own of the format — a
// fault kind's keys (models/faults.hpp, FaultKindInfo::parse) — they read
// through a KeyReader over one object of the file. The loader implements it
// (loader/loader.cpp) with its own typed reading, so every error keeps the
// loader's words: one line with the JSON path of the key ("faults[2].by"),
// what was expected and a suggestion, and the load stops there (exit 2).
//
//   f.target = *in.node("target", "the node to pause");        // required
//   f.duration = in.duration("duration", KeyReader::kPositive); // optional
//
// Every getter reads `key` of the current object. An absent key gives
// nullopt, unless `required` is given: then its absence is the error
// `missing required key "<key>": <required>`, and the result always has a
// value. A getter never returns when the value is wrong (the loader throws
// its load error); neither does `fail`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/validate.hpp"
#include "sim/time.hpp"

namespace fencesim {

/// What a duration may be ("10s", "250ms"; a bare number is refused).
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

  virtual ~KeyReader() = default;

  /// Whether the object has `key` (of any type).
  virtual bool has(std::string_view key) const = 0;
  /// A duration, in nanoseconds; at most Limits::kMaxDuration either way.
  virtual std::optional<sim::Duration> duration(std::string_view key, DurationRule rule,
                                                const Required& required = std::nullopt) = 0;
  /// An integer in `range` (the message spells the range and its `extra`).
  virtual std::optional<std::int64_t> integer(std::string_view key, const IntRange& range,
                                              const Required& required = std::nullopt) = 0;
  virtual std::optional<bool> boolean(std::string_view key, const Required& required = std::nullopt) = 0;
  /// A string of at most LoaderLimits::kMaxTextLength bytes.
  virtual std::optional<std::string> text(std::string_view key, const Required& required = std::nullopt) = 0;
  /// One of `options` (a string): its index. Unknown values get "did you mean".
  virtual std::optional<std::size_t> choice(std::string_view key, const std::vector<std::string>& options,
                                            const Required& required = std::nullopt) = 0;
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
  /// Stops the load with `message` at `key`'s path ("" = the object's own
  /// path): a rule that needs more than one key, or a value's meaning.
  [[noreturn]] virtual void fail(std::string_view key, const std::string& message) = 0;
};

}  // namespace fencesim
