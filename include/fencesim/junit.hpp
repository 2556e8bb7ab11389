// fencesim/junit.hpp — JUnit XML for CI systems (`--junit FILE` of `run`,
// `sweep` and `matrix`; docs/REPORTS.md "JUnit XML").
//
// The shape is the one Jenkins, GitLab and GitHub's test reporters read
// (the Ant JUnit task's XML):
//   <testsuites name="fencesim" tests="N" failures="F" errors="E" skipped="S">
//     <testsuite name="…" tests=… failures=… errors=… skipped=…>
//       <testcase classname="…" name="…">
//         <failure message="one line" type="expectation">detail lines</failure>
//       </testcase> …
// One test case per scenario (`run`), per property (`sweep`) or per cell
// (`matrix`). No times: the file is a pure function of the results, like
// every other report. Every attribute and text is XML-escaped; a character
// XML 1.0 cannot hold (a control character) is written as "\u00XX".
#pragma once

#include <string>
#include <vector>

#include "fencesim/matrix.hpp"
#include "fencesim/run.hpp"
#include "fencesim/sweep.hpp"

namespace fencesim {

struct JUnitCase {
  enum class Result { kPassed, kFailed, kError, kSkipped };
  std::string classname;  ///< "fencesim.run", "fencesim.sweep.<scenario>", "fencesim.matrix.<matrix>.<row>"
  std::string name;       ///< the scenario, property or column
  Result result = Result::kPassed;
  std::string message;  ///< one line: why it failed, erred or was skipped
  std::string detail;   ///< the element's text: one line per unmet expectation, a reproduce command
  std::string output;   ///< <system-out>: what the case measured (verdicts, rates); may be empty
};

/// The whole XML document: one <testsuite> named `suite` holding `cases` in order.
std::string render_junit(const std::string& suite, const std::vector<JUnitCase>& cases);

/// Writes render_junit to `path` atomically (a temporary name beside it,
/// then a rename; the folder is created if needed). False with `error` (one line).
bool write_junit(const std::string& path, const std::string& suite, const std::vector<JUnitCase>& cases,
                 std::string& error);

/// `run`: the scenario's case — failed with each unmet expectation (and the
/// reproduce command) when one was not met, passed otherwise; its verdicts
/// in <system-out>.
JUnitCase junit_case_of_run(const Scenario& s, const RunResult& r, const ReportMeta& m);
/// `run`: a file that could not run (exit 2 or 3): an <error> with `message`.
JUnitCase junit_case_of_error(const std::string& file, const std::string& message);

/// `sweep`: one case per property — failed when some run did not meet its
/// expectation, skipped when it applied in no run, passed otherwise; an
/// error case when the sweep stopped (SweepResult::error).
std::vector<JUnitCase> junit_cases_of_sweep(const SweepResult& r);
/// `matrix`: one case per cell — skipped when not applicable, failed when a
/// property missed the scenario's expectation in some run, passed otherwise;
/// the properties' violation rates in <system-out>.
std::vector<JUnitCase> junit_cases_of_matrix(const Matrix& m);

}  // namespace fencesim
