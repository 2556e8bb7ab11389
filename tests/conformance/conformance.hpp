// tests/conformance/conformance.hpp — what the model-conformance tests share:
// real server processes started and stopped by the test (RAII), transcripts
// of a script's answers, and the step-by-step comparison of a real server's
// transcript with the model's, with a list of documented deviations.
//
// The shape of every conformance test:
//
//   Transcript real = run_on_real_server(script);   // real time, loopback
//   Transcript model = run_on_model(script);         // simulated time
//   compare_transcripts(real, model, kDeviations);   // gtest failures
//
// A script is written once against a small backend interface (see
// redis_conformance_test.cpp and etcd_conformance_test.cpp) and records one
// normalised answer per step ("int 1", "nil", "error READONLY", "rev 5").
// Answers that depend on real time are only recorded when the timing that
// makes them meaningful held (see Transcript::add_timed); a step whose timing
// did not hold on a loaded machine is reported, not compared, and never
// asserts a duration tighter than its margin.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "real/process.hpp"

namespace fencesim::conformance {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// --- processes -----------------------------------------------------------
// Child, run_command, free_port, require_program, read_file and tail are
// real/process.hpp's (library fencesim_process, shared with fencesim-real).

using process::Child;
using process::CommandResult;
using process::free_port;
using process::read_file;
using process::require_program;
using process::run_command;
using process::tail;

/// A fresh temporary directory ($TMPDIR/fencesim-conf-`tag`-XXXXXX), removed
/// with everything in it on destruction (kept when FENCESIM_CONFORMANCE_KEEP
/// is set, for debugging).
class TempDir : public process::TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : process::TempDir(tag, std::getenv("FENCESIM_CONFORMANCE_KEEP") != nullptr, "fencesim-conf-") {}
};

// --- transcripts ---------------------------------------------------------

/// One step of a script and its normalised answer. `detail` is the raw
/// answer or a remark, printed but not compared. `deviation` names an entry
/// of the deviation list when the step is known to differ.
struct Step {
  std::string name;
  std::string answer;
  std::string detail;
  std::string deviation;
  bool unobservable = false;  ///< the timing that makes the answer meaningful did not hold
};

class Transcript {
 public:
  explicit Transcript(std::string side) : side_(std::move(side)) {}
  const std::string& side() const { return side_; }
  void add(const std::string& name, const std::string& answer, const std::string& detail = "",
           const std::string& deviation = "");
  /// Records `answer` only if `timing_held`; otherwise records the step as
  /// unobservable with `why` (on a real server under load, a check that had
  /// to run within a window may run late; it is then not compared).
  void add_timed(const std::string& name, bool timing_held, const std::string& why, const std::string& answer,
                 const std::string& detail = "", const std::string& deviation = "");
  const std::vector<Step>& steps() const { return steps_; }
  /// Appends a step as it is (used to rebuild a transcript streamed from a
  /// child process).
  void append(Step s) { steps_.push_back(std::move(s)); }
  /// Called with every step as it is recorded (to stream it out of a child
  /// process that may crash).
  std::function<void(const Step&)> on_add;

 private:
  void push(Step s);
  std::string side_;
  std::vector<Step> steps_;
};

/// A documented difference between a real server and the model, found by
/// this suite. `real_answer` / `model_answer` are regular expressions the
/// answers of the named steps must match (ECMAScript, whole answer); the
/// texts are what the list prints. When the model is fixed, the comparison
/// fails with "no longer deviates" so that the entry is removed.
struct Deviation {
  std::string id;
  std::string summary;
  std::string real_answer;   ///< regex
  std::string model_answer;  ///< regex
  std::string real_text;
  std::string model_text;
  /// Optional: how the two answers must relate (e.g. the same number).
  std::function<bool(const std::string& real, const std::string& model)> related;
};

/// An operation a script needs that the model has no request for; the test
/// reads the model's state instead (documented, compared like any answer).
struct Substitution {
  std::string operation;
  std::string how;
};

/// Prints the deviation and substitution lists (the tests call this so that
/// every run shows them).
void print_deviations(const std::string& title, const std::vector<Deviation>& devs,
                      const std::vector<Substitution>& subs);

/// Compares two transcripts step by step with gtest failures: same steps in
/// the same order, equal answers, except steps marked with a deviation
/// (each answer must match the documented one, and they must still differ)
/// and unobservable steps (reported, not compared). Prints the whole table.
void compare_transcripts(const Transcript& real, const Transcript& model, const std::vector<Deviation>& devs);

// --- small helpers -------------------------------------------------------

std::int64_t ms(Clock::duration d);
std::string base64_decode(const std::string& in);

}  // namespace fencesim::conformance
