// loader/loader.hpp — reads a scenario file (docs/FORMAT.md, version 1)
// into the plain structs of models/scenario.hpp.
//
//   fencesim::LoadResult r = fencesim::load_scenario_file("scenarios/c01.json");
//   if (r.error) { std::cerr << r.error->to_string() << "\n"; return 2; }
//   const fencesim::Scenario& s = *r.scenario;
//
// The loader is the only place that knows JSON. It fills in every default,
// parses durations, expands `count` clients and group names, checks every
// rule of the format that a file can break, and refuses the file at the first
// problem with a LoadError that names the file, the JSON path, what was
// expected and, for a misspelt key or value, the nearest valid spelling.
// It never throws, never crashes and never hangs, whatever the input: the
// nesting depth, the file size and every count are bounded before anything
// is expanded (see Limits in models/scenario.hpp and docs/FORMAT.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"

namespace fencesim {

/// A scenario file that cannot be loaded: a user error, reported cleanly.
struct LoadError {
  std::string file;        ///< the file name (or label) as given
  std::string path;        ///< JSON path of the offending value, e.g. "faults[0].duraton"; "" for the whole file
  std::string message;     ///< what is wrong and what was expected
  std::string suggestion;  ///< e.g. `did you mean "duration"?`, or ""
  int line = 0;            ///< 1-based, for malformed JSON only (0 otherwise)
  int column = 0;          ///< 1-based byte column, for malformed JSON only

  /// One line, no newline:
  ///   "FILE:LINE:COL: message"                    (malformed JSON)
  ///   "FILE: at PATH: message (suggestion)"       (everything else)
  ///   "FILE: message"                             (no path: the file itself)
  std::string to_string() const;
};

/// Either a resolved scenario or the first error found.
struct LoadResult {
  std::optional<Scenario> scenario;
  std::optional<LoadError> error;
  bool ok() const { return scenario.has_value(); }
};

/// Reads and loads `path`. A missing, unreadable or oversized file is an error.
LoadResult load_scenario_file(const std::string& path);

/// Makes every program client's `cwd` (clients[].program.cwd) absolute:
/// joined to the folder of the scenario file `file`. load_scenario_file
/// does it; a caller that loads a file's JSON another way (matrix) calls it.
void resolve_program_folders(Scenario& s, const std::string& file);

/// Loads scenario text; `file_label` is used only in error messages.
LoadResult load_scenario_text(std::string_view json, const std::string& file_label);

/// Loads a scenario already parsed (by parse_json_text, say, then edited, as
/// `fencesim matrix` merges its overrides); `file_label` names it in errors.
LoadResult load_scenario_json(const nlohmann::json& root, const std::string& file_label);

/// The steps of load_scenario_file, for other JSON files of fencesim (matrix
/// files): reads a regular file of at most LoaderLimits::kMaxFileBytes into
/// `text` (`what` names the kind of file in messages, e.g. "a scenario
/// file"); nullopt on success.
std::optional<LoadError> read_text_file(const std::string& path, std::string& text, const std::string& what);
/// Parses JSON text as scenario files are parsed (comments allowed, nesting
/// bounded, a duplicate key an error, malformed JSON with line and column);
/// `what` names the kind of document for an empty file ("a scenario").
std::optional<LoadError> parse_json_text(std::string_view text, const std::string& file_label, nlohmann::json& root,
                                         const std::string& what);

/// The keys the loader accepts in one section of the format, in its order:
/// "top", "network", "lock" (the keys every lock with a key shares),
/// "resource", "client", "workload", "nemesis", and each registered lock
/// service's own sections (ServiceDescriptor::key_sections: "redis",
/// "cluster", "etcd", "queue", "table"). Empty for another name.
/// tests/loader/words_schema_test.cpp compares them with the JSON Schema's.
std::vector<std::string> format_keys(const std::string& section);

/// Limits of the loader itself (the model's limits are fencesim::Limits).
struct LoaderLimits {
  static constexpr std::size_t kMaxFileBytes = 16u << 20;  ///< 16 MiB
  static constexpr int kMaxDepth = 64;                     ///< JSON nesting depth
  static constexpr std::size_t kMaxNameLength = 64;        ///< client names
  static constexpr std::size_t kMaxScenarioNameLength = 100;
  static constexpr std::size_t kMaxTextLength = 100'000;              ///< description, lock key
  static constexpr std::int64_t kMaxInteger = 1'000'000'000'000'000;  ///< |initial|, value: 1e15
  static constexpr std::int64_t kMaxBlock = 1'000'000'000;
};

}  // namespace fencesim
