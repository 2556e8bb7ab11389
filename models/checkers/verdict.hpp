// models/checkers/verdict.hpp — what a property checker returns.
//
// A checker never changes the world: it reads the History (and the scenario
// for applicability) and returns a Verdict with the first counterexample,
// told as a short numbered story with true times, nodes, tokens and values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/history.hpp"
#include "models/scenario.hpp"

namespace fencesim {

enum class Status { kHolds, kViolated, kNotApplicable };
const char* to_string(Status s);

struct Verdict {
  Property property = Property::kMutualExclusion;
  Status status = Status::kHolds;
  std::optional<Expectation> expected;
  /// True when there is no expectation or it is met.
  bool met = true;
  std::string summary;             ///< one line
  std::vector<std::string> story;  ///< the first counterexample, step by step
  std::optional<Time> at;          ///< true time of the first violation
  std::int64_t checked = 0;        ///< items examined (iterations for progress, ...)
};

/// What the checkers need besides the history.
struct CheckContext {
  Time run_end{0};
  /// When the last fault ended; nullopt when some fault never ends.
  std::optional<Time> last_fault_end;
  bool any_fault = false;
};

/// "12.345s" style time for stories.
std::string format_time(Time t);

}  // namespace fencesim
