// fencesim — the command.
//
//   fencesim run FILE... [--seed N] [--out DIR] [--quiet] [--no-color] [--full-timeline]
//       [--history edn,porcupine] [--junit FILE]
//   fencesim validate FILE...
//   fencesim write FILE [--materialize-nemesis] [--seed N]
//   fencesim matrix FILE [--seeds N] [--jobs J] [--out DIR] [--quiet] [--junit FILE]
//   fencesim sweep FILE --seeds A..B [--jobs J] [--shard I/N|auto] [--out DIR] [--keep none|failing|all]
//       [--junit FILE]
//   fencesim merge SWEEP.json... [--out DIR]
//   fencesim shrink FILE --seed N [--property P] [--out DIR] [--max-runs M]
//
// Exit codes: 0 every expectation met; 1 an expectation not met; 2 invalid
// input or usage, or a run that exceeded its event budget; 3 an internal
// error (a bug in fencesim: please report it with the scenario and seed), or
// a run that ran out of memory. `shrink` has its own: 0 the shrunk file was
// written; 1 the run breaks no property (or not the one asked for): nothing
// to shrink; 2 and 3 as above.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <cstdlib>

#include "cli/usage.hpp"
#include "fencesim/junit.hpp"
#include "fencesim/matrix.hpp"
#include "fencesim/run.hpp"
#include "fencesim/shrink.hpp"
#include "fencesim/sweep.hpp"
#include "fencesim/sweep_merge.hpp"
#include "loader/writer.hpp"
#include "sim/heap.hpp"

#include <filesystem>
#include <fstream>

namespace {

constexpr int kExitOk = fencesim::exit_code::kOk;
constexpr int kExitExpectation = fencesim::exit_code::kExpectation;
constexpr int kExitInput = fencesim::exit_code::kInput;
constexpr int kExitInternal = fencesim::exit_code::kInternal;

/// Where reports go without --out: `out/` (ignored by git), not `reports/`,
/// which holds the project's stored reference reports (issue #30: a run with
/// `--seed 42` used to write into the stored folder and break the golden test).
constexpr const char* kDefaultOut = "out";

/// The scenario file as reports name it: its file name without the folder,
/// so that a report depends on the file's content and the seed only, not on
/// where it was run from or how the path was spelled (and carries no path
/// of the machine). The terminal's reproduce line uses the path as given.
std::string report_source(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int cmd_validate(const std::vector<std::string>& files) {
  int code = kExitOk;
  for (const std::string& f : files) {
    const fencesim::LoadResult r = fencesim::load_scenario_file(f);
    if (!r.ok()) {
      std::cerr << "fencesim: " << r.error->to_string() << "\n";
      code = kExitInput;
    } else {
      std::cout << "ok " << f << " (" << r.scenario->name << ")\n";
      for (const std::string& n : r.scenario->notes) std::cerr << "fencesim: " << f << ": note: " << n << "\n";
    }
  }
  return code;
}

/// `fencesim write`: the scenario as the writer writes it (loader/writer.hpp), on stdout.
int cmd_write(const std::string& file, bool materialize, std::optional<std::uint64_t> seed) {
  const fencesim::LoadResult r = fencesim::load_scenario_file(file);
  if (!r.ok()) {
    std::cerr << "fencesim: " << r.error->to_string() << "\n";
    return kExitInput;
  }
  for (const std::string& n : r.scenario->notes) std::cerr << "fencesim: " << file << ": note: " << n << "\n";
  const fencesim::WriteResult w = fencesim::write_scenario_checked(*r.scenario, {materialize, seed});
  if (!w.ok()) {
    std::cerr << "fencesim: internal error while writing " << file << ": " << *w.error
              << "\nThis is a bug in fencesim; please report it with the scenario file.\n";
    return kExitInternal;
  }
  std::cout << w.text;
  return kExitOk;
}

/// One scenario file to run, and the folder its reports go to.
struct Job {
  std::string file;
  fencesim::Scenario scenario;
  std::string dir;
};

/// --junit FILE of run, sweep and matrix: writes the cases (fencesim/junit.hpp)
/// when a file was asked for; false (after saying why) if it could not be written.
bool junit_written(const std::string& path, const std::string& suite, const std::vector<fencesim::JUnitCase>& cases) {
  if (path.empty()) return true;
  std::string error;
  if (fencesim::write_junit(path, suite, cases, error)) return true;
  std::cerr << "fencesim: --junit: " << error << "\n";
  return false;
}

/// Loads every file; one that does not load is reported, sets `code` and
/// adds an error case to `junit`.
std::vector<Job> load_jobs(const std::vector<std::string>& files, std::optional<std::uint64_t> seed,
                           const std::string& out, bool quiet, int& code, std::vector<fencesim::JUnitCase>& junit) {
  std::vector<Job> jobs;
  for (const std::string& f : files) {
    fencesim::LoadResult r = fencesim::load_scenario_file(f);
    if (!r.ok()) {
      std::cerr << "fencesim: " << r.error->to_string() << "\n";
      junit.push_back(fencesim::junit_case_of_error(f, r.error->to_string()));
      code = kExitInput;
      continue;
    }
    // Without --quiet the summary shows the notes; with it, stderr does.
    if (quiet) {
      for (const std::string& n : r.scenario->notes) std::cerr << "fencesim: " << f << ": note: " << n << "\n";
    }
    const std::uint64_t s = seed.value_or(r.scenario->seed);
    const std::string dir = out.empty() ? std::string(kDefaultOut) : out;
    const std::string name = seed ? r.scenario->name + "-seed" + std::to_string(s) : r.scenario->name;
    jobs.push_back(Job{f, std::move(*r.scenario), dir + "/" + name});
  }
  return jobs;
}

/// Two files that would write the same folder are refused before anything
/// runs: false (and a message) if two jobs share a folder.
bool folders_distinct(const std::vector<Job>& jobs, std::optional<std::uint64_t> seed) {
  std::map<std::string, std::string> seen;
  for (const Job& j : jobs) {
    auto [it, fresh] = seen.emplace(j.dir, j.file);
    if (!fresh) {
      std::cerr << "fencesim: " << j.file << " and " << it->second << " would both write " << j.dir
                << " (same scenario name" << (seed ? " and seed" : "")
                << "); give them different \"scenario\" names or run them separately\n";
      return false;
    }
  }
  return true;
}

/// Runs one job's scenario. Nothing (and `code` raised) if it could not run
/// to its end: not supported, out of memory, an internal error, or stopped at
/// its event budget.
std::optional<fencesim::RunResult> run_job(const Job& j, std::optional<std::uint64_t> seed, int& code) {
  fencesim::RunOptions opt;
  opt.seed = seed;
  fencesim::RunResult result;
  try {
    result = fencesim::run_scenario(j.scenario, opt);
  } catch (const fencesim::UnsupportedScenario& e) {
    std::cerr << "fencesim: " << j.file << ": cannot run: " << e.what() << "\n";
    code = std::max(code, kExitInput);
    return std::nullopt;
  } catch (const fencesim::InvalidScenario& e) {
    // A loaded file passed the same checks; this guards a --seed override or
    // a future path that builds the Scenario another way.
    std::cerr << "fencesim: " << j.file << ": " << e.problem.to_string() << "\n";
    code = std::max(code, kExitInput);
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    // The run's budgets (docs/FORMAT.md) keep it to about 2 to 3 GB; less than
    // that was available.
    std::cerr << "fencesim: " << j.file << " (seed " << seed.value_or(j.scenario.seed)
              << "): out of memory; a run can take up to about 3 GB (docs/FORMAT.md, limits): free some"
                 " memory, or shorten `duration` or reduce clients/iterations. No report was written.\n";
    code = std::max(code, kExitInternal);
    return std::nullopt;
  } catch (const std::exception& e) {
    std::cerr << "fencesim: internal error while running " << j.file << " (seed " << seed.value_or(j.scenario.seed)
              << "): " << e.what()
              << "\nThis is a bug in fencesim; please report it with the scenario file and seed.\n";
    code = std::max(code, kExitInternal);
    return std::nullopt;
  }
  if (result.budget_exceeded) {
    std::cerr << "fencesim: " << j.file << ": the run was stopped at its budget of " << fencesim::Limits::kEventBudget
              << " events (or " << fencesim::Limits::kPendingBudget
              << " waiting at once); shorten `duration`, reduce clients/iterations, or lengthen the"
                 " intervals (heartbeat, retry_interval) that schedule events faster than they run."
                 " No report was written.\n";
    code = std::max(code, kExitInput);
    return std::nullopt;
  }
  return result;
}

/// What `run` writes and prints besides the reports (its options).
struct RunOutput {
  std::string out;
  bool quiet = false, color = false, full_timeline = false;
  bool history_edn = false, history_porcupine = false;  ///< --history edn|porcupine
  std::string junit;                                    ///< --junit FILE, or ""
};

/// Writes a finished run's reports and prints its summary (or, with
/// `quiet`, only an unmet expectation); raises `code`. False if the reports
/// could not be written.
bool report_job(const Job& j, const fencesim::RunResult& result, std::optional<std::uint64_t> seed, const RunOutput& o,
                int& code) {
  const std::string& out = o.out;
  const bool quiet = o.quiet;
  fencesim::ReportMeta meta{report_source(j.file), seed.has_value(), o.history_edn, o.history_porcupine};
  const std::string dir = fencesim::report_dir(out, j.scenario, result, meta);
  std::string error;
  if (!fencesim::write_reports(dir, j.scenario, result, meta, error)) {
    std::cerr << "fencesim: " << error << "\n";
    code = std::max(code, kExitInput);
    return false;
  }
  if (!quiet) {
    std::cout << fencesim::render_summary(j.scenario, result, meta);
    fencesim::TerminalTimeline shown;
    shown.color = o.color;
    shown.whole = o.full_timeline;
    std::cout << fencesim::render_terminal_timeline(j.scenario, result, shown);
    std::cout << "\n  report: " << dir << "/report.md (also timeline.html, report.json, trace.jsonl)\n";
  }
  if (!result.all_met) {
    const std::string lead = quiet ? j.scenario.name + ": " : std::string("  ");
    // Each unmet expectation on its own line: what was expected, what the run gave.
    for (const std::string& line : fencesim::unmet_expectations(result)) std::cout << lead << line << "\n";
    std::cout << lead << "an expectation was not met; reproduce with: "
              << fencesim::reproduce_command(j.scenario, result, fencesim::ReportMeta{j.file, meta.seed_overridden})
              << "\n";
    code = std::max(code, kExitExpectation);
  }
  return true;
}

int cmd_run(const std::vector<std::string>& files, std::optional<std::uint64_t> seed, const RunOutput& o) {
  int code = kExitOk;
  std::vector<fencesim::JUnitCase> junit;
  const std::vector<Job> jobs = load_jobs(files, seed, o.out, o.quiet, code, junit);
  if (!folders_distinct(jobs, seed)) return kExitInput;
  for (const Job& j : jobs) {
    const std::optional<fencesim::RunResult> result = run_job(j, seed, code);
    if (!result) {
      junit.push_back(fencesim::junit_case_of_error(j.file, "could not run (see the command's error output)"));
      continue;
    }
    if (!report_job(j, *result, seed, o, code)) continue;
    junit.push_back(fencesim::junit_case_of_run(j.scenario, *result, fencesim::ReportMeta{j.file, seed.has_value()}));
    if (!o.quiet && jobs.size() > 1) std::cout << "\n";
  }
  if (!junit_written(o.junit, "fencesim run", junit)) code = std::max(code, kExitInput);
  return code;
}

int cmd_matrix(const std::string& file, std::optional<std::uint64_t> seeds_arg, unsigned jobs, const std::string& out,
               bool quiet, const std::string& junit) {
  const fencesim::MatrixLoad load = fencesim::load_matrix_file(file);
  if (load.error) {
    std::cerr << "fencesim: " << load.error->to_string() << "\n";
    return kExitInput;
  }
  const std::uint64_t seeds = seeds_arg.value_or(load.matrix->seeds);
  fencesim::MatrixOptions opt;
  opt.seeds = seeds;
  opt.jobs = jobs;
  if (!quiet) {
    // Progress on stderr, one line per row (a thousand seeds take minutes).
    opt.on_row_done = [seeds](const std::string& row, std::size_t done, std::size_t total) {
      std::cerr << "fencesim matrix: " << done << "/" << total << " rows done (" << seeds
                << (seeds == 1 ? " seed" : " seeds") << " per cell): " << row << "\n";
    };
  }
  const fencesim::Matrix m = fencesim::run_matrix(*load.matrix, opt);
  if (m.error) {
    std::cerr << "fencesim: " << file << ": cell \"" << m.error->row << "\" × \"" << m.error->column << "\", seed "
              << m.error->error.seed << ": " << m.error->error.message << "\n";
    return m.error->error.kind == fencesim::SweepError::Kind::kInput ? kExitInput : kExitInternal;
  }
  if (m.mismatch) {
    std::cerr << "fencesim: internal error: cell \"" << m.mismatch_row << "\" × \"" << m.mismatch_column << "\": seed "
              << m.mismatch->seed << " ran twice with different fingerprints (a bug in fencesim)\n";
    return kExitInternal;
  }
  const std::string md = fencesim::render_matrix_markdown(m);
  const std::string js = fencesim::render_matrix_json(m);
  const std::string dir = out.empty() ? std::string(kDefaultOut) : out;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const auto& [name, text] : {std::pair<std::string, const std::string*>{"MATRIX.md", &md},
                                   std::pair<std::string, const std::string*>{"MATRIX.json", &js}}) {
    const std::string path = dir + "/" + name;
    const std::string tmp = dir + "/." + name + ".tmp";
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << *text;
    f.close();
    if (!f || (std::filesystem::rename(tmp, path, ec), ec)) {
      std::cerr << "fencesim: cannot write " << path << "\n";
      std::filesystem::remove(tmp, ec);
      return kExitInput;
    }
  }
  if (!quiet) std::cout << md << "\nwritten: " << dir << "/MATRIX.md and MATRIX.json\n";
  if (!junit_written(junit, "fencesim matrix " + m.name, fencesim::junit_cases_of_matrix(m))) return kExitInput;
  return kExitOk;
}

/// The progress line of `fencesim sweep`, on stderr when it is a terminal:
/// runs done / total, runs/s, violations so far per property, ETA. This is
/// the only place fencesim reads the wall clock: in the command, outside any
/// run, for this line alone; nothing it reads reaches a run, a result or a
/// file.
class SweepProgressLine {
 public:
  SweepProgressLine() : start_(std::chrono::steady_clock::now()) {}
  void update(const fencesim::SweepProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (p.done < p.total && printed_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double rate = secs > 0 ? static_cast<double>(p.done) / secs : 0;
    std::string line = "sweep: " + std::to_string(p.done) + "/" + std::to_string(p.total) + " runs";
    char buf[64];
    std::snprintf(buf, sizeof buf, ", %.0f runs/s", rate);
    line += buf;
    std::string violations;
    for (std::size_t i = 0; i < fencesim::kPropertyCount; ++i) {
      if (p.violations[i] == 0) continue;
      violations += (violations.empty() ? "" : ", ") + std::string(fencesim::to_string(fencesim::all_properties()[i])) +
                    " " + std::to_string(p.violations[i]);
    }
    line += ", violations: " + (violations.empty() ? std::string("none") : violations);
    if (rate > 0 && p.done < p.total) {
      std::snprintf(buf, sizeof buf, ", ETA %.0fs", static_cast<double>(p.total - p.done) / rate);
      line += buf;
    }
    std::cerr << "\r\033[K" << line << std::flush;
    printed_ = true;
  }
  /// Clears the line before the summary is printed.
  void finish() {
    if (printed_) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  std::chrono::steady_clock::time_point start_, last_;
  bool printed_ = false;
};

/// The sweep folder: DIR/<scenario>-sweep, or DIR/<scenario>-sweep-shard-I-of-N for a shard (so that shards
/// given the same --out never write into one another's folder).
std::string sweep_folder(const std::string& out, const std::string& scenario, const fencesim::Shard& shard) {
  std::string dir = (out.empty() ? std::string(kDefaultOut) : out) + "/" + scenario + "-sweep";
  if (shard.count > 1) dir += "-shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count);
  return dir;
}

/// The summary, then where it was written (sweep and merge alike).
void print_sweep_written(const fencesim::SweepResult& r, const std::string& file, const std::string& dir) {
  std::cout << fencesim::render_sweep_summary(r, file);
  std::size_t kept = 0;
  for (const fencesim::SweepRun& run : r.runs) kept += run.kept ? 1 : 0;
  std::cout << "  written: " << dir << "/sweep.json and summary.md (" << kept << " run report" << (kept == 1 ? "" : "s")
            << " kept";
  if (kept > 0) std::cout << ", in " << dir << "/seed<N>/";
  std::cout << ")\n";
}

int cmd_sweep(const std::string& file, const fencesim::SeedRange& seeds, const fencesim::Shard& shard, unsigned jobs,
              const std::string& out, fencesim::Keep keep, const std::string& junit) {
  const fencesim::LoadResult loaded = fencesim::load_scenario_file(file);
  if (!loaded.ok()) {
    std::cerr << "fencesim: " << loaded.error->to_string() << "\n";
    return kExitInput;
  }
  const fencesim::Scenario& s = *loaded.scenario;
  for (const std::string& n : s.notes) std::cerr << "fencesim: " << file << ": note: " << n << "\n";
  const std::string dir = sweep_folder(out, s.name, shard);
  // Until this sweep is complete the previous one in `dir` stays as it was:
  // everything goes into a staging folder beside it, swapped in whole at the
  // end; an error or a signal (checked between runs) removes it (issue #35).
  const std::string staging = fencesim::staging_folder(dir);
  const fencesim::InterruptScope interrupt;
  fencesim::SweepOptions opt;
  opt.interrupted = [] { return fencesim::InterruptScope::signal() != 0; };
  opt.seeds = seeds;
  opt.shard = shard;
  opt.jobs = jobs;
  opt.keep = keep;
  opt.report_dir = staging;
  opt.source = report_source(file);
  SweepProgressLine progress;
  if (isatty(STDERR_FILENO) != 0)
    opt.on_progress = [&progress](const fencesim::SweepProgress& p) { progress.update(p); };
  const fencesim::SweepResult r = fencesim::run_sweep(s, opt);
  progress.finish();
  std::error_code ec;
  if (r.interrupted || r.error || r.mismatch) std::filesystem::remove_all(staging, ec);
  if (r.interrupted) {
    std::cerr << "fencesim: sweep interrupted (signal " << fencesim::InterruptScope::signal() << "); " << dir
              << " is left as it was\n";
    return 128 + fencesim::InterruptScope::signal();  // 130 for Ctrl-C, as a shell reports it
  }
  if (r.error) {
    std::cerr << "fencesim: " << file << ": " << r.error->message << "\n";
    junit_written(junit, "fencesim sweep " + s.name, fencesim::junit_cases_of_sweep(r));
    return r.error->kind == fencesim::SweepError::Kind::kInput ? kExitInput : kExitInternal;
  }
  if (r.mismatch) {
    char a[17], b[17];
    std::snprintf(a, sizeof a, "%016llx", static_cast<unsigned long long>(r.mismatch->first));
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(r.mismatch->second));
    std::cerr << "fencesim: determinism self-check FAILED: " << file << " seed " << r.mismatch->seed
              << " ran twice with different fingerprints, " << a << " then " << b
              << "; this is a bug in fencesim, please report it with the scenario file and seed. No sweep.json was"
                 " written.\n";
    return kExitInternal;
  }
  std::string error;
  if (!fencesim::write_sweep_files(staging, r, error) || !fencesim::swap_folder_in(staging, dir, error)) {
    std::filesystem::remove_all(staging, ec);
    std::cerr << "fencesim: " << error << "\n";
    return kExitInput;
  }
  print_sweep_written(r, file, dir);
  if (!junit_written(junit, "fencesim sweep " + s.name, fencesim::junit_cases_of_sweep(r))) return kExitInput;
  if (shard.count > 1) {
    const std::string base = out.empty() ? std::string(kDefaultOut) : out;
    std::cout << "  shard " << shard.index << " of " << shard.count << "; when every shard is done: fencesim merge "
              << base << "/" << s.name << "-sweep-shard-*-of-" << shard.count << "/sweep.json --out " << base << "\n";
  }
  return r.all_met ? kExitOk : kExitExpectation;
}

/// One scenario file: its notes on stderr, or its error (nullopt).
std::optional<fencesim::Scenario> load_one(const std::string& file) {
  fencesim::LoadResult r = fencesim::load_scenario_file(file);
  if (!r.ok()) {
    std::cerr << "fencesim: " << r.error->to_string() << "\n";
    return std::nullopt;
  }
  for (const std::string& n : r.scenario->notes) std::cerr << "fencesim: " << file << ": note: " << n << "\n";
  return std::move(r.scenario);
}

/// `fencesim shrink` (include/fencesim/shrink.hpp): the search, then the
/// shrunk file and its reports.
int cmd_shrink(const std::string& file, const fencesim::ShrinkOptions& opt, const std::string& out) {
  const std::optional<fencesim::Scenario> loaded = load_one(file);
  if (!loaded) return kExitInput;
  const fencesim::Scenario& s = *loaded;
  const fencesim::ShrinkResult r = fencesim::shrink_scenario(s, opt);
  auto failed = [&](const fencesim::ShrinkError& e) {
    using Kind = fencesim::ShrinkError::Kind;
    std::cerr << "fencesim: " << file << ": " << e.message << "\n";
    if (e.kind == Kind::kInternal) {
      std::cerr << "This is a bug in fencesim; please report it with the scenario file and seed.\n";
      return kExitInternal;
    }
    return e.kind == Kind::kNothingToShrink ? kExitExpectation : kExitInput;
  };
  if (r.error) return failed(*r.error);
  const fencesim::ShrinkOutput o =
      fencesim::write_shrink_output(file, s, r, out.empty() ? std::string(kDefaultOut) : out);
  if (o.error) return failed(*o.error);
  const std::size_t before = r.scripted_before + r.drawn_before;
  std::cout << "shrink " << s.name << " seed " << r.seed << ", keeping " << fencesim::to_string(r.property)
            << " violated\n";
  std::cout << "  materialized: " << before << " faults (" << r.scripted_before << " scripted, " << r.drawn_before
            << " drawn by the nemesis), ";
  if (r.same_run) {
    std::cout << "the same run (same fingerprint)\n";
  } else {
    char a[17], b[17];
    std::snprintf(a, sizeof a, "%016llx", static_cast<unsigned long long>(r.fingerprint_materialized));
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(r.fingerprint_original));
    std::cout << "NOT the same run (fingerprint " << a << ", not " << b
              << ": a bug in fencesim, please report it), but it still breaks " << fencesim::to_string(r.property)
              << ", so the search starts from it\n";
  }
  std::cout << "  kept: " << r.signature.text() << "\n";
  std::cout << "  search: " << r.runs << " runs";
  if (r.skipped > 0) std::cout << " (and " << r.skipped << " invalid candidates skipped)";
  if (r.budget_reached) std::cout << "; stopped at --max-runs " << opt.max_runs << ", the result may shrink further";
  std::cout << "\n  faults:   " << before << " -> " << o.scenario.faults.size() << "\n  clients:  " << s.clients.size()
            << " -> " << o.scenario.clients.size() << "\n  duration: " << sim::format_duration(s.duration) << " -> "
            << sim::format_duration(o.scenario.duration) << "\n";
  std::cout << "  written: " << o.file << " and its reports in " << o.report_dir
            << "/ (report.md, timeline.html, report.json, trace.jsonl)\n";
  std::cout << "  run it: fencesim run " << fencesim::shell_word(o.file) << "\n";
  return kExitOk;
}

/// `fencesim merge`: the shards' sweep.json files into DIR/<scenario>-sweep/.
int cmd_merge(const std::vector<std::string>& paths, const std::string& out) {
  std::vector<fencesim::SweepFile> files;
  std::string error;
  for (const std::string& p : paths) {
    std::optional<fencesim::SweepFile> f = fencesim::read_sweep_file(p, error);
    if (!f) {
      std::cerr << "fencesim: merge: " << error << "\n";
      return kExitInput;
    }
    files.push_back(std::move(*f));
  }
  std::optional<fencesim::MergedSweep> m = fencesim::merge_sweeps(files, error);
  if (!m) {
    std::cerr << "fencesim: merge: " << error << "\n";
    return kExitInput;
  }
  const std::string dir = sweep_folder(out, m->sweep.scenario, fencesim::Shard{1, 1});
  std::vector<std::string> notes;
  if (!fencesim::write_merged_sweep(*m, dir, notes, error)) {
    std::cerr << "fencesim: merge: " << error << "\n";
    return kExitInput;
  }
  for (const std::string& n : notes) std::cerr << "fencesim: merge: note: " << n << "\n";
  print_sweep_written(m->sweep, m->sweep.source.empty() ? "FILE" : m->sweep.source, dir);
  std::cout << "  merged " << m->shards << " shard" << (m->shards == 1 ? "" : "s") << "\n";
  return m->sweep.all_met ? kExitOk : kExitExpectation;
}

// --- the command line: one piece per subcommand ----------------------------

/// --out: a folder name (not ""), and one that can be a folder — checked
/// before anything runs, so that a long sweep or shrink does not fail at its
/// end: it must be a folder already, or the nearest part of it that exists
/// must be a folder this process can write in. False with the message.
bool out_option(const CLI::App& command, const std::string& out) {
  if (command.count("--out") > 0 && out.empty()) {
    std::cerr << "fencesim: --out needs a folder name (default: out)\n";
    return false;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = out.empty() ? fs::path(kDefaultOut) : fs::path(out);
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec)) {
      std::cerr << "fencesim: --out " << fencesim::quote_text(p.string(), 4096)
                << " is not a folder (a file is in the way); give a folder name\n";
      return false;
    }
  } else {
    fs::path parent = fs::absolute(p, ec).parent_path();
    while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.parent_path()) parent = parent.parent_path();
    if (!fs::is_directory(parent, ec) || ::access(parent.c_str(), W_OK) != 0) {
      std::cerr << "fencesim: --out " << fencesim::quote_text(p.string(), 4096) << " cannot be created ("
                << fencesim::quote_text(parent.string(), 4096) << " is not a folder this user can write in)\n";
      return false;
    }
  }
  if (::access(p.c_str(), F_OK) == 0 && ::access(p.c_str(), W_OK) != 0) {
    std::cerr << "fencesim: --out " << fencesim::quote_text(p.string(), 4096) << " is not writable by this user\n";
    return false;
  }
  return true;
}

struct RunArgs {
  CLI::App* command = nullptr;
  std::vector<std::string> files;
  std::string seed_text;
  std::string out;
  bool quiet = false;
  bool no_color = false;
  bool full_timeline = false;
  std::vector<std::string> history;
  std::string junit;
};

void add_run_command(CLI::App& app, RunArgs& a) {
  CLI::App* run = app.add_subcommand("run", "Run scenario files and write their reports");
  run->add_option("files", a.files, "Scenario files (JSON)")->required();
  run->add_option("--seed", a.seed_text,
                  "Override the scenario's seed, 0 to 2^64-1 (reports go to DIR/<scenario>-seed<N>)");
  run->add_option("--out", a.out, "Folder for the reports (default: out)");
  run->add_flag("--quiet,-q", a.quiet, "Print only failures");
  run->add_flag("--no-color", a.no_color, "No ANSI colours (colours are used only when stdout is a terminal)");
  run->add_flag("--full-timeline", a.full_timeline,
                "Print every line of the text timeline (default: the lines around each broken property's first"
                " counterexample, or the first 40)");
  run->add_option("--history", a.history,
                  "Also write the History for outside checkers: edn (history.edn, Jepsen/Knossos/Elle), porcupine"
                  " (history.json); both: edn,porcupine")
      ->delimiter(',')
      ->check(CLI::IsMember({"edn", "porcupine"}));
  run->add_option("--junit", a.junit, "Also write JUnit XML to FILE: a test case per scenario");
  a.command = run;
}

/// A subcommand's --seed, when given: false (after saying why) when it is
/// not a seed.
bool seed_option(const CLI::App& command, const std::string& text, std::optional<std::uint64_t>& seed) {
  if (command.count("--seed") == 0) return true;
  seed = fencesim::parse_seed(text);
  if (seed) return true;
  std::cerr << "fencesim: --seed expects a decimal integer from 0 to 18446744073709551615, got \"" << text << "\"\n";
  return false;
}

/// `run` after parsing: checks --seed and --out, then runs.
int start_run(const RunArgs& a) {
  std::optional<std::uint64_t> seed;
  if (!seed_option(*a.command, a.seed_text, seed)) return kExitInput;
  if (!out_option(*a.command, a.out)) return kExitInput;
  RunOutput o;
  o.out = a.out;
  o.quiet = a.quiet;
  o.color = !a.no_color && getenv("NO_COLOR") == nullptr && isatty(STDOUT_FILENO) != 0;
  o.full_timeline = a.full_timeline;
  o.history_edn = std::ranges::find(a.history, "edn") != a.history.end();
  o.history_porcupine = std::ranges::find(a.history, "porcupine") != a.history.end();
  o.junit = a.junit;
  return cmd_run(a.files, seed, o);
}

struct MatrixArgs {
  CLI::App* command = nullptr;
  std::string file;
  std::string seeds_text;
  std::string jobs_text;
  std::string out;
  bool quiet = false;
  std::string junit;
};

void add_matrix_command(CLI::App& app, MatrixArgs& a) {
  CLI::App* matrix =
      app.add_subcommand("matrix", "Run a matrix file (rows x columns of scenarios) over seeds; write MATRIX.md/.json");
  matrix->add_option("file", a.file, "Matrix file (JSON; docs/FORMAT.md \"Matrix files\")")->required();
  matrix->add_option("--seeds", a.seeds_text, "Runs per cell (default: the file's seeds)");
  matrix->add_option("--jobs,-j", a.jobs_text, "Worker threads (default: the number of cores); no effect on results");
  matrix->add_option("--out", a.out, "Folder for MATRIX.md and MATRIX.json (default: out)");
  matrix->add_flag("--quiet,-q", a.quiet, "Do not print the table");
  matrix->add_option("--junit", a.junit, "Also write JUnit XML to FILE: a test case per cell");
  a.command = matrix;
}

struct SweepArgs {
  CLI::App* command = nullptr;
  std::string file;
  std::string seeds_text;
  std::string shard_text;
  std::string jobs_text;
  std::string out;
  std::string keep_text = "failing";
  std::string junit;
};

void add_sweep_command(CLI::App& app, SweepArgs& a) {
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Run one scenario over a range of seeds on all cores; write DIR/<scenario>-sweep/sweep.json");
  sweep->add_option("file", a.file, "Scenario file (JSON)")->required();
  sweep->add_option("--seeds", a.seeds_text, "Seeds A..B, both included (at most 10000000 seeds)")->required();
  sweep->add_option("--jobs,-j", a.jobs_text, "Worker threads (default: the number of cores); no effect on results");
  sweep->add_option("--shard", a.shard_text,
                    "Run only shard I of N (1 <= I <= N <= seeds): with C seeds from A, the block "
                    "A+floor((I-1)*C/N) .. A+floor(I*C/N)-1, into DIR/<scenario>-sweep-shard-I-of-N/; combine the N "
                    "with `fencesim merge`. 'auto' reads JOB_COMPLETION_INDEX (Kubernetes, 0-based; count from "
                    "FENCESIM_SHARD_COUNT), SLURM_ARRAY_TASK_ID/_MIN/_STEP/_COUNT (Slurm) or PARALLEL_SEQ (GNU "
                    "parallel; count from FENCESIM_SHARD_COUNT). See docs/SWEEP.md");
  sweep->add_option("--out", a.out, "Folder for the sweep folder (default: out)");
  sweep->add_option("--keep", a.keep_text,
                    "Full reports of: none, failing (default: the first 20 failing runs per property) or all runs");
  sweep->add_option("--junit", a.junit, "Also write JUnit XML to FILE: a test case per property");
  a.command = sweep;
}

struct MergeArgs {
  CLI::App* command = nullptr;
  std::vector<std::string> files;
  std::string out;
};

void add_merge_command(CLI::App& app, MergeArgs& a) {
  CLI::App* merge = app.add_subcommand(
      "merge", "Combine the shards of a sweep (sweep --shard I/N) into the DIR/<scenario>-sweep/ one machine writes");
  merge->add_option("files", a.files, "Every shard's sweep.json (in any order)")->required();
  merge->add_option("--out", a.out,
                    "Folder for the merged sweep folder (default: out); kept run reports are copied into it");
  a.command = merge;
}

/// `merge` after parsing: checks --out, then merges.
int start_merge(const MergeArgs& a) {
  if (!out_option(*a.command, a.out)) return kExitInput;
  return cmd_merge(a.files, a.out);
}

/// --jobs of `sweep` and `matrix`: the number of cores when not given;
/// nullopt (with a message) when invalid.
std::optional<unsigned> jobs_option(const CLI::App* command, const std::string& text) {
  if (command->count("--jobs") == 0) return std::max(1u, std::thread::hardware_concurrency());
  const std::optional<std::uint64_t> j = fencesim::parse_seed(text);
  if (!j || *j == 0 || *j > 1024) {
    std::cerr << "fencesim: --jobs expects a number of worker threads from 1 to 1024, got \"" << text << "\"\n";
    return std::nullopt;
  }
  return static_cast<unsigned>(*j);
}

/// `matrix` after parsing: checks --seeds, --jobs and --out, then runs the matrix.
int start_matrix(const MatrixArgs& a) {
  std::optional<std::uint64_t> seeds;
  if (a.command->count("--seeds") > 0) {
    seeds = fencesim::parse_seed(a.seeds_text);
    if (!seeds || *seeds == 0 || *seeds > fencesim::kMaxMatrixSeeds) {
      std::cerr << "fencesim: --seeds expects the runs per cell, from 1 to " << fencesim::kMaxMatrixSeeds << ", got \""
                << a.seeds_text << "\"\n";
      return kExitInput;
    }
  }
  const std::optional<unsigned> jobs = jobs_option(a.command, a.jobs_text);
  if (!jobs) return kExitInput;
  if (!out_option(*a.command, a.out)) return kExitInput;
  return cmd_matrix(a.file, seeds, *jobs, a.out, a.quiet, a.junit);
}

/// `sweep` after parsing: checks --seeds, --jobs, --keep and --out, then sweeps.
int start_sweep(const SweepArgs& a) {
  std::string error;
  const std::optional<fencesim::SeedRange> seeds = fencesim::parse_seed_range(a.seeds_text, error);
  if (!seeds) {
    std::cerr << "fencesim: " << error << "\n";
    return kExitInput;
  }
  const std::optional<unsigned> jobs_given = jobs_option(a.command, a.jobs_text);
  if (!jobs_given) return kExitInput;
  const unsigned jobs = *jobs_given;
  const std::optional<fencesim::Keep> keep = fencesim::keep_from_string(a.keep_text);
  if (!keep) {
    std::cerr << "fencesim: --keep expects none, failing or all, got \"" << a.keep_text << "\"\n";
    return kExitInput;
  }
  if (!out_option(*a.command, a.out)) return kExitInput;
  fencesim::Shard shard;
  if (a.command->count("--shard") > 0) {
    const std::optional<fencesim::Shard> sh =
        a.shard_text == "auto" ? fencesim::shard_from_environment([](const char* name) { return getenv(name); }, error)
                               : fencesim::parse_shard(a.shard_text, error);
    if (!sh || !fencesim::check_shard(*sh, *seeds, error)) {
      std::cerr << "fencesim: " << error << "\n";
      return kExitInput;
    }
    shard = *sh;
  }
  return cmd_sweep(a.file, *seeds, shard, jobs, a.out, *keep, a.junit);
}

struct ShrinkArgs {
  CLI::App* command = nullptr;
  std::string file;
  std::string seed_text;
  std::string property;
  std::string out;
  std::string max_runs_text;
};

void add_shrink_command(CLI::App& app, ShrinkArgs& a) {
  CLI::App* shrink = app.add_subcommand(
      "shrink",
      "Shrink a failing run to the smallest scenario that still fails; write DIR/<scenario>-seed<N>-shrunk.json");
  shrink->add_option("file", a.file, "Scenario file (JSON)")->required();
  shrink->add_option("--seed", a.seed_text, "The failing run's seed, 0 to 2^64-1 (kept fixed)")->required();
  shrink->add_option("--property", a.property,
                     "The property to keep violated (default: the first whose expectation the run missed by "
                     "violating it, else the first violated)");
  shrink->add_option("--out", a.out, "Folder for the shrunk file and its report folder (default: out)");
  shrink->add_option(
      "--max-runs", a.max_runs_text,
      "Candidate runs at most, 1 to 1000000 (default " + std::to_string(fencesim::kDefaultShrinkRuns) + ")");
  a.command = shrink;
}

/// `shrink` after parsing: checks --seed, --property, --max-runs and --out, then shrinks.
int start_shrink(const ShrinkArgs& a) {
  std::optional<std::uint64_t> seed;
  if (!seed_option(*a.command, a.seed_text, seed)) return kExitInput;
  fencesim::ShrinkOptions opt;
  opt.seed = *seed;
  if (a.command->count("--property") > 0) {
    opt.property = fencesim::property_from_string(a.property);
    if (!opt.property) {
      std::vector<std::string> names;
      for (fencesim::Property p : fencesim::all_properties()) names.emplace_back(fencesim::to_string(p));
      const std::string hint = fencesim::suggest_nearest(a.property, names);
      std::cerr << "fencesim: --property: unknown property " << fencesim::quote_text(a.property) << " ("
                << (hint.empty() ? "" : hint + " ") << "the properties are " << fencesim::join_names(names) << ")\n";
      return kExitInput;
    }
  }
  if (a.command->count("--max-runs") > 0) {
    const std::optional<std::uint64_t> m = fencesim::parse_seed(a.max_runs_text);
    if (!m || *m == 0 || *m > 1'000'000) {
      std::cerr << "fencesim: --max-runs expects a number of runs from 1 to 1000000, got \"" << a.max_runs_text
                << "\"\n";
      return kExitInput;
    }
    opt.max_runs = static_cast<std::size_t>(*m);
  }
  if (!out_option(*a.command, a.out)) return kExitInput;
  return cmd_shrink(a.file, opt, a.out);
}

struct ValidateArgs {
  CLI::App* command = nullptr;
  std::vector<std::string> files;
};

void add_validate_command(CLI::App& app, ValidateArgs& a) {
  CLI::App* validate = app.add_subcommand("validate", "Check scenario files without running them");
  validate->add_option("files", a.files, "Scenario files (JSON)")->required();
  a.command = validate;
}

struct WriteArgs {
  CLI::App* command = nullptr;
  std::string file;
  std::string seed_text;
  bool materialize = false;
};

void add_write_command(CLI::App& app, WriteArgs& a) {
  CLI::App* write =
      app.add_subcommand("write", "Print a scenario file as fencesim writes it (defaults left out, counts kept)");
  write->add_option("file", a.file, "Scenario file (JSON)")->required();
  write->add_flag("--materialize-nemesis", a.materialize,
                  "Replace the nemesis with the faults it draws for the seed (faults[] entries)");
  write->add_option("--seed", a.seed_text, "Write this seed instead of the file's, 0 to 2^64-1 (draws with it)");
  a.command = write;
}

/// `write` after parsing: checks --seed, then writes.
int start_write(const WriteArgs& a) {
  std::optional<std::uint64_t> seed;
  if (!seed_option(*a.command, a.seed_text, seed)) return kExitInput;
  return cmd_write(a.file, a.materialize, seed);
}

/// The commands, in the order --help lists them, and "run, sweep, … and matrix".
const std::vector<std::string>& command_names() {
  static const std::vector<std::string> kCommands = {"run", "sweep", "merge", "shrink", "validate", "write", "matrix"};
  return kCommands;
}
std::string command_list() {
  const std::vector<std::string>& c = command_names();
  std::string list;
  for (std::size_t i = 0; i < c.size(); ++i) list += (i == 0 ? "" : i + 1 == c.size() ? " and " : ", ") + c[i];
  return list;
}

/// No command, a first word that is no command, or an option the top level
/// does not have: named, rather than CLI11's "A subcommand is required".
/// The exit code if the first word is wrong. One line each (cli/usage.hpp).
std::optional<int> check_first_word(int argc, char** argv) {
  const std::string more = "; `fencesim --help` says more)";
  if (argc < 2)
    return fencesim::cli::fail("fencesim", "a command is required (the commands are " + command_list() + more);
  const std::string first = argv[1];
  if (first.empty()) {
    return fencesim::cli::fail("fencesim", "the command is empty (the commands are " + command_list() + more);
  }
  if (first[0] == '-') {
    if (first != "--help" && first != "-h" && first != "--version" && first != "--help-all") {
      return fencesim::cli::fail("fencesim", "unknown option " + fencesim::quote_text(first) +
                                                 " before the command (the commands are " + command_list() +
                                                 "; options go after them" + more);
    }
    return std::nullopt;
  }
  const std::vector<std::string>& commands = command_names();
  if (std::find(commands.begin(), commands.end(), first) != commands.end()) return std::nullopt;
  std::string hint;
  if (first.ends_with(".json")) {
    hint = "to run a scenario file: fencesim run " + fencesim::shell_word(first) + "; ";
  } else {
    std::string lower = first;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string nearest = fencesim::suggest_nearest(lower, commands);
    if (!nearest.empty()) hint = nearest + " ";
  }
  return fencesim::cli::fail("fencesim", "unknown command " + fencesim::quote_text(first) + " (" + hint +
                                             "the commands are " + command_list() + more);
}

/// Each command's usage (as in the header comment), for the usage errors.
fencesim::cli::Usage usage_of(const std::string& command) {
  static const std::map<std::string, std::string> kUsage = {
      {"run",
       "fencesim run FILE... [--seed N] [--out DIR] [--quiet] [--no-color] [--full-timeline] [--history edn,porcupine] "
       "[--junit FILE]"},
      {"validate", "fencesim validate FILE..."},
      {"write", "fencesim write FILE [--materialize-nemesis] [--seed N]"},
      {"matrix", "fencesim matrix FILE [--seeds N] [--jobs J] [--out DIR] [--quiet] [--junit FILE]"},
      {"sweep",
       "fencesim sweep FILE --seeds A..B [--jobs J] [--shard I/N|auto] [--out DIR] [--keep none|failing|all] [--junit "
       "FILE]"},
      {"merge", "fencesim merge SWEEP.json... [--out DIR]"},
      {"shrink", "fencesim shrink FILE --seed N [--property P] [--out DIR] [--max-runs M]"}};
  const auto it = kUsage.find(command);
  fencesim::cli::Usage u;
  u.program = "fencesim";
  u.command = command;
  u.line = it == kUsage.end() ? "fencesim " + command : it->second;
  u.thing = command == "merge" ? "sweep.json file" : command == "matrix" ? "matrix file" : "scenario file";
  u.many = command == "run" || command == "validate" || command == "merge";
  return u;
}

/// An option the command does not have, named before CLI11 parses (which
/// would report a missing file first, or "The following argument was not
/// expected"): one line with the nearest option and the usage.
std::optional<int> check_options(CLI::App& app, int argc, char** argv) {
  if (argc < 3) return std::nullopt;
  CLI::App* command = nullptr;
  try {
    command = app.get_subcommand(argv[1]);
  } catch (const CLI::OptionNotFound&) {
    return std::nullopt;
  }
  if (const auto what = fencesim::cli::unknown_option(*command, 2, argc, argv, usage_of(argv[1]))) {
    return fencesim::cli::fail("fencesim", *what);
  }
  return std::nullopt;
}

/// Parses the command line; the exit code if the command ends here (help,
/// version, or a usage error, in one line naming the command's usage).
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  return fencesim::cli::parse(app, argc, argv, [&app] {
    std::string command = "run";
    for (const CLI::App* sub : app.get_subcommands()) command = sub->get_name();
    return usage_of(command);
  });
}

}  // namespace

int main(int argc, char** argv) {
  // `run` with many files, `matrix`, `sweep` and `shrink` run simulations one after another.
  sim::keep_heap_between_runs();
  CLI::App app{"fencesim: a deterministic fault-injection simulator for distributed locks", "fencesim"};
  app.set_version_flag("--version", std::string("fencesim ") + fencesim::version());
  app.set_help_all_flag("--help-all", "Print this help message and every command's, and exit");
  app.require_subcommand(1);
  RunArgs run;
  add_run_command(app, run);
  MatrixArgs matrix;
  add_matrix_command(app, matrix);
  SweepArgs sweep;
  add_sweep_command(app, sweep);
  MergeArgs merge;
  add_merge_command(app, merge);
  ShrinkArgs shrink;
  add_shrink_command(app, shrink);
  ValidateArgs validate;
  add_validate_command(app, validate);
  WriteArgs write;
  add_write_command(app, write);

  if (const std::optional<int> code = check_first_word(argc, argv)) return *code;
  if (const std::optional<int> code = check_options(app, argc, argv)) return *code;
  if (const std::optional<int> code = parse(app, argc, argv)) return *code;
  try {
    if (run.command->parsed()) return start_run(run);
    if (validate.command->parsed()) return cmd_validate(validate.files);
    if (write.command->parsed()) return start_write(write);
    if (matrix.command->parsed()) return start_matrix(matrix);
    if (sweep.command->parsed()) return start_sweep(sweep);
    if (merge.command->parsed()) return start_merge(merge);
    if (shrink.command->parsed()) return start_shrink(shrink);
  } catch (const std::exception& e) {
    std::cerr << "fencesim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitInput;
}
