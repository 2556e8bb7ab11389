// fencesim/run.hpp — the public C++ API: load or build a scenario, run it,
// inspect verdicts and metrics, render or write the reports.
//
//   #include <fencesim/run.hpp>
//
//   auto loaded = fencesim::load_scenario_file("scenarios/worked-example-fenced.json");
//   if (!loaded.ok()) { std::cerr << loaded.error->to_string(); return 2; }
//   fencesim::RunResult r = fencesim::run_scenario(*loaded.scenario);
//   EXPECT_TRUE(r.all_met);
//   EXPECT_EQ(fencesim::verdict(r, fencesim::Property::kNoStaleWrite).status, fencesim::Status::kHolds);
//
// A Scenario can also be built in code: with fencesim/builder.hpp, or as the
// plain structs of models/scenario.hpp followed by `resolve_scenario` (the
// TTL in effect, renew intervals, notes). `validate_scenario`
// (models/validate.hpp) returns the first rule it breaks with the JSON path
// and message a file would get, e.g. at "clients[1].renew_interval".
// Errors: load errors come back as LoadError (never thrown);
// run_scenario throws InvalidScenario (a std::invalid_argument carrying that
// ScenarioProblem) for a scenario validate_scenario refuses,
// UnsupportedScenario for a design this version cannot run, and
// sim::ModelBug for a bug in a model.
#pragma once

#include <array>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "loader/loader.hpp"
#include "models/checkers/checkers.hpp"
#include "models/scenario.hpp"
#include "models/validate.hpp"
#include "models/world.hpp"

namespace fencesim {

/// The fencesim version these reports were made with.
const char* version();

/// The verdict of one property in a run.
const Verdict& verdict(const RunResult& r, Property p);

/// Where a run came from, for the report (never an absolute path).
struct ReportMeta {
  std::string
      source;  ///< the scenario file's name (fencesim run uses it without its folder), or "" for a built scenario
  bool seed_overridden = false;
  /// `fencesim run --history edn|porcupine`: write_reports also writes
  /// history.edn / history.json (fencesim/history_export.hpp).
  bool history_edn = false;
  bool history_porcupine = false;
};

/// `word` as one word for a POSIX shell: as it is when it has only
/// characters no shell treats specially (a-z A-Z 0-9 _-./+,:@%=), else in
/// single quotes (a ' inside as '\'').
std::string shell_word(const std::string& word);

/// The exact command that reproduces the run (the file name quoted for a
/// POSIX shell when it has characters a shell treats specially).
std::string reproduce_command(const Scenario& s, const RunResult& r, const ReportMeta& m);

/// report.json: the documented, stable schema of docs/REPORTS.md.
/// Byte-identical for the same scenario, seed and version.
std::string render_report_json(const Scenario& s, const RunResult& r, const ReportMeta& m);
/// report.md: the same for people.
std::string render_report_markdown(const Scenario& s, const RunResult& r, const ReportMeta& m);
/// trace.jsonl: every event of the run.
std::string render_trace_jsonl(const RunResult& r);
/// timeline.html: one self-contained page (inline SVG, CSS, a little JS; no
/// network) with a swimlane per node: beliefs vs the lease as the service
/// holds it, faults, grants with tokens, renewals, reads and writes, notes,
/// and the first counterexample of each broken property.
std::string render_timeline_html(const Scenario& s, const RunResult& r, const ReportMeta& m);
/// What the terminal timeline `fencesim run` prints shows (counts are
/// lines of the text timeline, one key event each).
struct TerminalTimeline {
  bool color = false;            ///< ANSI colours
  bool whole = false;            ///< every line (`fencesim run --full-timeline`)
  std::size_t before = 8;        ///< lines shown before a first counterexample's instant
  std::size_t after = 6;         ///< lines shown from that instant on (at least 1)
  std::size_t first_lines = 40;  ///< without a broken property: the first lines
};
/// The text timeline `fencesim run` prints (report/terminal.cpp). For a run
/// that broke properties: for each broken property's first counterexample
/// (its verdict's `at`, true time), the `before` lines before that instant
/// and the `after` lines from it on, windows that overlap merged, a marker
/// line at the instant naming the properties; without a broken property
/// (or none with an instant), the first `first_lines` lines. Its header
/// says which lines of how many are shown, and how to see all of them.
std::string render_terminal_timeline(const Scenario& s, const RunResult& r, const TerminalTimeline& options);
/// One line per unmet expectation of the `expect` block, in report order:
/// "mutual_exclusion: expected holds, got violated", "metric updates_lost:
/// expected max 0, got 1". Empty when every expectation was met.
std::vector<std::string> unmet_expectations(const RunResult& r);
/// "every expectation met", "an expectation was NOT met", or, for a file
/// with no `expect` block, "no expect block: nothing was expected".
std::string expectation_outcome(const Scenario& s, const RunResult& r);
/// The terminal summary `fencesim run` prints.
std::string render_summary(const Scenario& s, const RunResult& r, const ReportMeta& m);

/// Where fencesim writes when no folder is given (`--out`): `out/`, which
/// git ignores — never `reports/`, where the stored reports live.
inline constexpr const char* kDefaultOut = "out";

/// The folder a run writes: `<out>/<scenario>` or, with the seed overridden,
/// `<out>/<scenario>-seed<N>`; an empty `out` is kDefaultOut.
std::string report_dir(const std::string& out, const Scenario& s, const RunResult& r, const ReportMeta& m);

/// One file for write_files: its name inside the folder, and what writes its
/// bytes (called once, while the file is written).
struct OutputFile {
  std::string name;
  std::function<void(std::ostream&)> write;
};

/// Writes `files` (at most kMaxOutputFiles) into `dir`, created if needed.
/// Each is written to a temporary name (`.NAME.tmp-<pid>-<n>` beside it, unique
/// per process and call) and renamed
/// into place only after all of them were written, so a failure leaves no
/// partial file and no mix of new and old ones; an interrupt (SIGINT,
/// SIGTERM, SIGHUP) while writing removes the temporary files, and the
/// folder if this call created it and it is still empty. Something other
/// than a file in the way of one of them fails before anything is written.
/// False with `error` set (one line) on failure. Not thread-safe: one call
/// at a time per process (the interrupt handler's state is process-wide).
inline constexpr std::size_t kMaxOutputFiles = 8;
bool write_files(const std::string& dir, const std::vector<OutputFile>& files, std::string& error);

/// A new, unused staging folder's path beside `dir`:
/// `<parent>/.<name>.tmp-<pid>-<n>` (not created). Write a whole folder
/// there, then swap_folder_in it.
std::string staging_folder(const std::string& dir);

/// Replaces the folder `dir` (or creates it) with `staging`, as a whole:
/// on Linux the two are exchanged atomically (renameat2 RENAME_EXCHANGE)
/// and the old contents removed, so `dir` never holds a mix of two writes,
/// even when two processes swap into it at once (the last one wins). False
/// with `error` (one line) if a file is in the way or the rename fails;
/// `staging` is removed either way.
bool swap_folder_in(const std::string& staging, const std::string& dir, std::string& error);

/// Writes `files` as the whole contents of the folder `dir`: into a staging
/// folder beside it (write_files), then swap_folder_in. Anything else that
/// was in `dir` is gone afterwards. Same errors and thread-safety as write_files.
bool write_folder(const std::string& dir, const std::vector<OutputFile>& files, std::string& error);

/// While it lives, SIGINT, SIGTERM and SIGHUP only set a flag (signal()
/// returns the signal number, 0 before one arrived), and write_files
/// installs no handler of its own: the command checks the flag between
/// runs and removes its staging folder itself (`fencesim sweep`). One at a
/// time per process.
class InterruptScope {
 public:
  InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  ~InterruptScope();
  /// The signal received since the scope began, or 0. Async-signal-safe to set; any thread may read.
  static int signal();

 private:
  static std::size_t index(int sig);
  std::array<void (*)(int), 3> previous_{};
};

/// Writes report.json, report.md, timeline.html and trace.jsonl (and, as
/// `m` asks, history.edn and history.json: fencesim/history_export.hpp) as the
/// folder `dir` (write_folder): staged beside it and swapped in whole, so a
/// failure leaves the previous reports as they were, and two runs writing
/// the same folder at once leave one run's complete reports, never a mix.
/// Returns false with `error` set on failure.
bool write_reports(const std::string& dir, const Scenario& s, const RunResult& r, const ReportMeta& m,
                   std::string& error);

}  // namespace fencesim
