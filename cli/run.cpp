// Writing a run's reports atomically.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "fencesim/run.hpp"

namespace fencesim {

namespace fs = std::filesystem;

bool write_reports(const std::string& dir, const Scenario& s, const RunResult& r, const ReportMeta& m,
                   std::string& error) {
  // Render everything first: a rendering failure must not leave files.
  const std::vector<std::pair<std::string, std::string>> files = {
      {"report.json", render_report_json(s, r, m)},
      {"report.md", render_report_markdown(s, r, m)},
      {"timeline.html", render_timeline_html(s, r, m)},
      {"trace.jsonl", render_trace_jsonl(r)},
  };
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  std::vector<fs::path> temps;
  auto cleanup = [&] {
    for (const fs::path& t : temps) fs::remove(t, ec);
  };
  for (const auto& [name, text] : files) {
    const fs::path tmp = fs::path(dir) / ("." + name + ".tmp");
    temps.push_back(tmp);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      error = "cannot write " + tmp.string();
      cleanup();
      return false;
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    fs::rename(temps[i], fs::path(dir) / files[i].first, ec);
    if (ec) {
      error = "cannot rename " + temps[i].string() + ": " + ec.message();
      cleanup();
      return false;
    }
  }
  return true;
}

}  // namespace fencesim
