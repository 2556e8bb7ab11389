// report/junit.cpp — JUnit XML (fencesim/junit.hpp): rendering, the atomic
// write, and the case of one run. The sweep's and matrix's cases are built in
// explore/junit_cases.cpp.
#include <fmt/format.h>

#include <filesystem>

#include "fencesim/junit.hpp"

namespace fencesim {

namespace {

/// Text or an attribute value, XML-escaped. XML 1.0 allows no control
/// character but tab, newline and carriage return, not even as &#N;: those
/// are written as the visible "\u00XX".
std::string xml_escape(const std::string& raw) {
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += fmt::format("\\u{:04X}", u);
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::size_t count(const std::vector<JUnitCase>& cases, JUnitCase::Result r) {
  std::size_t n = 0;
  for (const JUnitCase& c : cases) n += c.result == r ? 1 : 0;
  return n;
}

std::string case_xml(const JUnitCase& c) {
  std::string o =
      fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(c.classname), xml_escape(c.name));
  const char* tag = c.result == JUnitCase::Result::kFailed    ? "failure"
                    : c.result == JUnitCase::Result::kError   ? "error"
                    : c.result == JUnitCase::Result::kSkipped ? "skipped"
                                                              : nullptr;
  if (tag == nullptr && c.output.empty()) return o + "/>\n";
  o += ">\n";
  if (tag != nullptr) {
    o += fmt::format("      <{} message=\"{}\"", tag, xml_escape(c.message));
    if (c.result == JUnitCase::Result::kFailed) o += " type=\"expectation\"";
    o += c.detail.empty() ? "/>\n" : fmt::format(">{}</{}>\n", xml_escape(c.detail), tag);
  }
  if (!c.output.empty()) o += fmt::format("      <system-out>{}</system-out>\n", xml_escape(c.output));
  return o + "    </testcase>\n";
}

}  // namespace

std::string render_junit(const std::string& suite, const std::vector<JUnitCase>& cases) {
  const std::size_t failures = count(cases, JUnitCase::Result::kFailed),
                    errors = count(cases, JUnitCase::Result::kError),
                    skipped = count(cases, JUnitCase::Result::kSkipped);
  const std::string totals =
      fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"", cases.size(), failures, errors, skipped);
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += fmt::format("<testsuites name=\"fencesim\" {}>\n", totals);
  o += fmt::format("  <testsuite name=\"{}\" {}>\n", xml_escape(suite), totals);
  for (const JUnitCase& c : cases) o += case_xml(c);
  return o + "  </testsuite>\n</testsuites>\n";
}

bool write_junit(const std::string& path, const std::string& suite, const std::vector<JUnitCase>& cases,
                 std::string& error) {
  const std::filesystem::path p(path);
  if (!p.has_filename()) {
    error = "--junit needs a file name, got \"" + path + "\"";
    return false;
  }
  const std::string xml = render_junit(suite, cases);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : std::string(".");
  return write_files(dir, {{p.filename().string(), [&](std::ostream& o) { o << xml; }}}, error);
}

JUnitCase junit_case_of_run(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  JUnitCase c;
  c.classname = "fencesim.run";
  c.name = s.name;
  for (const Verdict& v : r.verdicts) {
    c.output += fmt::format("{}: {}{}\n", to_string(v.property), to_string(v.status),
                            v.expected ? fmt::format(" (expected {})", to_string(*v.expected)) : "");
  }
  c.output += expectation_outcome(s, r) + "\n";
  if (r.all_met) return c;
  c.result = JUnitCase::Result::kFailed;
  c.message = "an expectation was not met";
  for (const std::string& line : unmet_expectations(r)) c.detail += line + "\n";
  c.detail += "reproduce with: " + reproduce_command(s, r, m) + "\n";
  return c;
}

JUnitCase junit_case_of_error(const std::string& file, const std::string& message) {
  JUnitCase c;
  c.classname = "fencesim.run";
  c.name = file;
  c.result = JUnitCase::Result::kError;
  c.message = message;
  return c;
}

}  // namespace fencesim
