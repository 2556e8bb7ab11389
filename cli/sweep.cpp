// cli/sweep.cpp — `fencesim sweep FILE --seeds A..B`: one scenario over a range
// of seeds (or one shard of it), into DIR/<scenario>-sweep/.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fencesim/junit.hpp"
#include "fencesim/run.hpp"
#include "fencesim/sweep.hpp"

namespace fencesim::cli {

namespace {

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

}  // namespace

std::string sweep_folder(const std::string& out, const std::string& scenario, const fencesim::Shard& shard) {
  std::string dir = (out.empty() ? std::string(kDefaultOut) : out) + "/" + scenario + "-sweep";
  if (shard.count > 1) dir += "-shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count);
  return dir;
}

void print_sweep_written(const fencesim::SweepResult& r, const std::string& file, const std::string& dir) {
  std::cout << fencesim::render_sweep_summary(r, file);
  std::size_t kept = 0;
  for (const fencesim::SweepRun& run : r.runs) kept += run.kept ? 1 : 0;
  std::cout << "  written: " << dir << "/sweep.json and summary.md (" << kept << " run report" << (kept == 1 ? "" : "s")
            << " kept";
  if (kept > 0) std::cout << ", in " << dir << "/seed<N>/";
  std::cout << ")\n";
}

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
  if (!junit_option(*a.command, a.junit)) return kExitInput;
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

}  // namespace fencesim::cli
