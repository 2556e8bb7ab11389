// explore/junit_cases.cpp — the JUnit cases of a sweep (one per property)
// and of a matrix (one per cell); rendering and writing: report/junit.cpp.
#include <fmt/format.h>

#include "explore/percent.hpp"
#include "fencesim/junit.hpp"

namespace fencesim {

namespace {

/// "violated in 1 of 4000 runs (0.025 %)", or "applied in no run".
std::string violation_rate_text(const PropertyAggregate& p) {
  if (p.runs == 0) return "applied in no run";
  return fmt::format("violated in {} of {} runs ({} %)", p.violations, p.runs,
                     percent_number(static_cast<double>(p.violations) / static_cast<double>(p.runs), 1));
}

std::string seeds_text(const std::vector<std::uint64_t>& seeds) {
  std::string out;
  for (std::uint64_t s : seeds) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

/// One property of a sweep (or of a matrix cell's sweep) against its expectation.
JUnitCase property_case(const std::string& classname, const PropertyAggregate& p) {
  JUnitCase c;
  c.classname = classname;
  c.name = to_string(p.property);
  c.output = violation_rate_text(p) + (p.expected ? fmt::format("; expected {}", to_string(*p.expected)) : "") + "\n";
  if (p.unmet > 0) {
    c.result = JUnitCase::Result::kFailed;
    c.message = fmt::format("{}: expected {} in every run; {} runs did not meet it", to_string(p.property),
                            p.expected ? to_string(*p.expected) : "?", p.unmet);
    c.detail = "first seeds that did not: " + seeds_text(p.first_unmet) + "\n";
  } else if (p.runs == 0) {
    c.result = JUnitCase::Result::kSkipped;
    c.message = "not applicable in any run";
  }
  return c;
}

}  // namespace

std::vector<JUnitCase> junit_cases_of_sweep(const SweepResult& r) {
  const std::string classname = "fencesim.sweep." + r.scenario;
  std::vector<JUnitCase> cases;
  if (r.error) {
    JUnitCase e;
    e.classname = classname;
    e.name = "sweep";
    e.result = JUnitCase::Result::kError;
    e.message = fmt::format("seed {}: {}", r.error->seed, r.error->message);
    cases.push_back(e);
    return cases;
  }
  for (const PropertyAggregate& p : r.properties) cases.push_back(property_case(classname, p));
  return cases;
}

std::vector<JUnitCase> junit_cases_of_matrix(const Matrix& m) {
  std::vector<JUnitCase> cases;
  for (const MatrixRow& row : m.rows) {
    for (const MatrixCell& cell : row.cells) {
      JUnitCase c;
      c.classname = "fencesim.matrix." + m.name + "." + row.axis.name;
      c.name = cell.column;
      if (!cell.not_applicable.empty()) {
        c.result = JUnitCase::Result::kSkipped;
        c.message = cell.not_applicable;
        cases.push_back(c);
        continue;
      }
      for (const PropertyAggregate& p : cell.properties) {
        c.output += fmt::format("{}: {}\n", to_string(p.property), violation_rate_text(p));
        if (p.unmet == 0) continue;
        c.result = JUnitCase::Result::kFailed;
        c.detail +=
            fmt::format("{}: expected {}; {} of {} runs did not meet it (first seeds: {})\n", to_string(p.property),
                        p.expected ? to_string(*p.expected) : "?", p.unmet, cell.runs, seeds_text(p.first_unmet));
      }
      if (c.result == JUnitCase::Result::kFailed) c.message = "an expectation was not met in some run";
      cases.push_back(c);
    }
  }
  return cases;
}

}  // namespace fencesim
