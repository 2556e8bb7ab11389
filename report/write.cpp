// Writing files atomically: a run's reports, a sweep's, a shrunk scenario.
#include <fcntl.h>  // AT_FDCWD
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>  // renameat2, RENAME_NOREPLACE, RENAME_EXCHANGE (glibc >= 2.28, _GNU_SOURCE)
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "fencesim/history_export.hpp"
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

// While an InterruptScope lives, a signal only sets g_interrupt: the
// command (a sweep) stops between runs and removes its whole staging folder,
// so the writes inside it install no handler of their own.
volatile std::sig_atomic_t g_interrupt = 0;
volatile std::sig_atomic_t g_scope_active = 0;

extern "C" void note_interrupt(int sig) { g_interrupt = sig; }

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
    if (g_scope_active) return;
    installed_ = true;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) previous_[index(sig)] = std::signal(sig, remove_temps_and_reraise);
  }
  TempGuard(const TempGuard&) = delete;
  TempGuard& operator=(const TempGuard&) = delete;
  ~TempGuard() {
    if (installed_) {
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, previous_[index(sig)]);
    }
    g_temp_count = 0;
    g_remove_dir = 0;
  }

 private:
  static std::size_t index(int sig) { return sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2; }
  std::array<void (*)(int), 3> previous_{};
  bool installed_ = false;
};

/// ".tmp-<pid>-<n>": unique per process and call, so that two processes (or
/// two calls) writing the same target never share a temporary name. The pid
/// only names temporary files; it never reaches a report's content.
std::string unique_suffix() {
  static std::atomic<unsigned long> counter{0};
  return ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

/// Moves `staging` to `dir`: with renameat2 (Linux >= 3.15) either into a
/// free name (RENAME_NOREPLACE) or atomically exchanged with the folder
/// there (RENAME_EXCHANGE), whose old contents, now at `staging`, are then
/// removed — so `dir` always holds one complete folder, and two writers
/// racing each end with a complete folder of one of them. Without renameat2
/// (EINVAL: a file system that lacks it), the old folder is renamed aside
/// first, leaving `dir` absent for an instant but never mixed.
bool swap_in(const fs::path& staging, const fs::path& dir, std::string& error) {
  std::error_code ec;
  std::string why = "it keeps being replaced";
  for (int attempt = 0; attempt < 100; ++attempt) {
#ifdef RENAME_EXCHANGE
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) == 0) return true;
    if (errno == EEXIST) {
      if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0) {
        fs::remove_all(staging, ec);  // the old folder
        return true;
      }
      if (errno == ENOENT) continue;  // removed in between: try the free name again
    }
    why = std::strerror(errno);
    if (errno != EINVAL && errno != ENOSYS) break;
#endif
    const fs::path aside = dir.parent_path() / ("." + dir.filename().string() + unique_suffix() + ".old");
    fs::rename(dir, aside, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {
      why = ec.message();
      break;
    }
    std::error_code moved;
    fs::rename(staging, dir, moved);
    fs::remove_all(aside, ec);
    if (!moved) return true;
    why = moved.message();
    if (moved != std::errc::directory_not_empty && moved != std::errc::file_exists) break;
  }
  error = "cannot move " + staging.string() + " to " + dir.string() + ": " + why;
  return false;
}

}  // namespace

std::string staging_folder(const std::string& dir) {
  fs::path d = fs::path(dir).lexically_normal();
  if (!d.has_filename()) d = d.parent_path();  // "out/x/" -> "out/x"
  return (d.parent_path() / ("." + d.filename().string() + unique_suffix())).string();
}

bool swap_folder_in(const std::string& staging, const std::string& dir, std::string& error) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    error = "cannot write " + dir + ": something other than a folder is in the way; remove it";
    fs::remove_all(staging, ec);
    return false;
  }
  fs::path d = fs::path(dir).lexically_normal();
  if (!d.has_filename()) d = d.parent_path();
  if (!swap_in(staging, d, error)) {
    fs::remove_all(staging, ec);
    return false;
  }
  return true;
}

InterruptScope::InterruptScope() {
  g_interrupt = 0;
  g_scope_active = 1;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) previous_[index(sig)] = std::signal(sig, note_interrupt);
}

InterruptScope::~InterruptScope() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, previous_[index(sig)]);
  g_scope_active = 0;
}

int InterruptScope::signal() { return g_interrupt; }

std::size_t InterruptScope::index(int sig) { return sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2; }

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
  const std::string suffix = unique_suffix();
  for (const OutputFile& f : files) temps.push_back(fs::path(dir) / (std::string(".") + f.name + suffix));
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

bool write_folder(const std::string& dir, const std::vector<OutputFile>& files, std::string& error) {
  // As write_files: a folder (say) where one of the files goes is refused
  // rather than removed with the old folder, before anything is written.
  std::error_code ec;
  for (const OutputFile& f : files) {
    const fs::path target = fs::path(dir) / f.name;
    if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) {
      error = "cannot write " + target.string() + ": something other than a file is in the way; remove it";
      return false;
    }
  }
  const std::string staging = staging_folder(dir);
  if (!write_files(staging, files, error)) return false;  // it removed what it wrote
  return swap_folder_in(staging, dir, error);
}

bool write_reports(const std::string& dir, const Scenario& s, const RunResult& r, const ReportMeta& m,
                   std::string& error) {
  // Render everything first: a rendering failure must not leave files.
  const std::string json = render_report_json(s, r, m), md = render_report_markdown(s, r, m),
                    html = render_timeline_html(s, r, m), trace = render_trace_jsonl(r);
  const std::string edn = m.history_edn ? render_history_edn(s, r) : std::string(),
                    porcupine = m.history_porcupine ? render_history_porcupine(s, r) : std::string();
  std::vector<OutputFile> files = {{"report.json", [&](std::ostream& o) { o << json; }},
                                   {"report.md", [&](std::ostream& o) { o << md; }},
                                   {"timeline.html", [&](std::ostream& o) { o << html; }},
                                   {"trace.jsonl", [&](std::ostream& o) { o << trace; }}};
  if (m.history_edn) files.push_back({"history.edn", [&](std::ostream& o) { o << edn; }});
  if (m.history_porcupine) files.push_back({"history.json", [&](std::ostream& o) { o << porcupine; }});
  return write_folder(dir, files, error);
}

}  // namespace fencesim
