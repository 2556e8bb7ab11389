// cli/run.cpp — `fencesim run FILE...`: each scenario run once, its reports
// written, its summary and text timeline printed.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "models/program/errors.hpp"

#include <unistd.h>

#include <cstdlib>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fencesim/junit.hpp"
#include "fencesim/run.hpp"

namespace fencesim::cli {

namespace {

/// One scenario file to run, and the folder its reports go to.
struct Job {
  std::string file;
  fencesim::Scenario scenario;
  std::string dir;
};

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
  } catch (const fencesim::program::ProgramError& e) {
    std::cerr << "fencesim: " << j.file << " (seed " << seed.value_or(j.scenario.seed) << "): " << e.what()
              << "\nNo report was written.\n";
    code = std::max(code, e.exit_code());
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

}  // namespace

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

/// `run` after parsing: checks --seed and --out, then runs.
int start_run(const RunArgs& a) {
  std::optional<std::uint64_t> seed;
  if (!seed_option(*a.command, a.seed_text, seed)) return kExitInput;
  if (!out_option(*a.command, a.out)) return kExitInput;
  if (!junit_option(*a.command, a.junit)) return kExitInput;
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

}  // namespace fencesim::cli
