// Writing files atomically: a run's reports, a sweep's, a shrunk scenario.
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "fencesim/run.hpp"

namespace fencesim {

namespace fs = std::filesystem;

namespace {

// The temporary files being written, for the signal handler: an interrupted
// run (Ctrl-C, kill) removes them instead of leaving hidden .tmp files
// beside the reports. Fixed-size C strings: a handler may only call
// async-signal-safe functions (unlink, signal, raise) and read plain memory.
constexpr std::size_t kMaxTemps = kMaxOutputFiles;
constexpr std::size_t kMaxPath = 4096;
char g_temps[kMaxTemps][kMaxPath];
volatile std::sig_atomic_t g_temp_count = 0;
// The report folder, when this run created it: removed too if it is left
// empty (rmdir removes only an empty directory; it is async-signal-safe).
char g_created_dir[kMaxPath];
volatile std::sig_atomic_t g_remove_dir = 0;

extern "C" void remove_temps_and_reraise(int sig) {
  for (std::sig_atomic_t i = 0; i < g_temp_count; ++i) ::unlink(g_temps[i]);
  if (g_remove_dir) ::rmdir(g_created_dir);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// Registers the temporary paths with the handler while it lives.
class TempGuard {
 public:
  TempGuard(const std::vector<fs::path>& temps, const std::string& created_dir) {
    g_temp_count = 0;
    for (const fs::path& t : temps) {
      const std::string s = t.string();
      if (s.size() >= kMaxPath || g_temp_count == static_cast<std::sig_atomic_t>(kMaxTemps)) continue;
      std::memcpy(g_temps[g_temp_count], s.c_str(), s.size() + 1);
      g_temp_count = g_temp_count + 1;
    }
    g_remove_dir = 0;
    if (!created_dir.empty() && created_dir.size() < kMaxPath) {
      std::memcpy(g_created_dir, created_dir.c_str(), created_dir.size() + 1);
      g_remove_dir = 1;
    }
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) previous_[index(sig)] = std::signal(sig, remove_temps_and_reraise);
  }
  TempGuard(const TempGuard&) = delete;
  TempGuard& operator=(const TempGuard&) = delete;
  ~TempGuard() {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, previous_[index(sig)]);
    g_temp_count = 0;
    g_remove_dir = 0;
  }

 private:
  static std::size_t index(int sig) { return sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2; }
  std::array<void (*)(int), 3> previous_{};
};

}  // namespace

bool write_files(const std::string& dir, const std::vector<OutputFile>& files, std::string& error) {
  if (files.size() > kMaxOutputFiles) {
    error = "internal error: more than " + std::to_string(kMaxOutputFiles) + " files in one write";
    return false;
  }
  std::error_code ec;
  // Anything in the way of a file is found before anything is written, so
  // that a failure cannot leave a mix of new and old files.
  for (const OutputFile& f : files) {
    const fs::path target = fs::path(dir) / f.name;
    if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) {
      error = "cannot write " + target.string() + ": something other than a file is in the way; remove it";
      return false;
    }
  }
  const bool created = !fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  std::vector<fs::path> temps;
  for (const OutputFile& f : files) temps.push_back(fs::path(dir) / (std::string(".") + f.name + ".tmp"));
  const TempGuard guard(temps, created ? dir : std::string());
  auto cleanup = [&] {
    for (const fs::path& t : temps) fs::remove(t, ec);
    if (created) fs::remove(dir, ec);  // only if still empty
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    errno = 0;
    std::ofstream out(temps[i], std::ios::binary | std::ios::trunc);
    if (out) files[i].write(out);
    out.close();
    if (!out) {
      const int why = errno;
      error = "cannot write " + temps[i].string() + (why != 0 ? std::string(": ") + std::strerror(why) : "");
      cleanup();
      return false;
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    fs::rename(temps[i], fs::path(dir) / files[i].name, ec);
    if (ec) {
      error = "cannot rename " + temps[i].string() + ": " + ec.message();
      cleanup();
      return false;
    }
  }
  return true;
}

bool write_reports(const std::string& dir, const Scenario& s, const RunResult& r, const ReportMeta& m,
                   std::string& error) {
  // Render everything first: a rendering failure must not leave files.
  const std::string json = render_report_json(s, r, m), md = render_report_markdown(s, r, m),
                    html = render_timeline_html(s, r, m), trace = render_trace_jsonl(r);
  return write_files(dir,
                     {{"report.json", [&](std::ostream& o) { o << json; }},
                      {"report.md", [&](std::ostream& o) { o << md; }},
                      {"timeline.html", [&](std::ostream& o) { o << html; }},
                      {"trace.jsonl", [&](std::ostream& o) { o << trace; }}},
                     error);
}

}  // namespace fencesim
