// cli/commands.hpp — the subcommands of `fencesim`, one file each:
// cli/run.cpp, validate.cpp, write.cpp, matrix.cpp, sweep.cpp, merge.cpp,
// shrink.cpp. cli/main.cpp only registers them and dispatches.
//
// Each command has its parsed arguments (`<Command>Args`, the texts as
// CLI11 leaves them), `add_<command>_command`, which registers the
// subcommand, its options and their --help text with CLI11, and
// `start_<command>`, which checks the option values (one line on stderr and
// kExitInput for a bad one: cli/options.hpp) and runs the command, returning
// the process's exit code (cli/main.cpp's header comment lists them).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "fencesim/sweep.hpp"

namespace fencesim::cli {

// --- run (cli/run.cpp)

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
void add_run_command(CLI::App& app, RunArgs& a);
/// `run` after parsing: checks --seed and --out, then runs.
int start_run(const RunArgs& a);

// --- validate (cli/validate.cpp)

struct ValidateArgs {
  CLI::App* command = nullptr;
  std::vector<std::string> files;
};
void add_validate_command(CLI::App& app, ValidateArgs& a);
/// `validate`: each file loaded and checked, "ok FILE (scenario)" or its error.
int start_validate(const ValidateArgs& a);

// --- write (cli/write.cpp)

struct WriteArgs {
  CLI::App* command = nullptr;
  std::string file;
  std::string seed_text;
  bool materialize = false;
};
void add_write_command(CLI::App& app, WriteArgs& a);
/// `write` after parsing: checks --seed, then writes.
int start_write(const WriteArgs& a);

// --- matrix (cli/matrix.cpp)

struct MatrixArgs {
  CLI::App* command = nullptr;
  std::string file;
  std::string seeds_text;
  std::string jobs_text;
  std::string out;
  bool quiet = false;
  std::string junit;
};
void add_matrix_command(CLI::App& app, MatrixArgs& a);
/// `matrix` after parsing: checks --seeds, --jobs and --out, then runs the matrix.
int start_matrix(const MatrixArgs& a);

// --- sweep (cli/sweep.cpp)

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
void add_sweep_command(CLI::App& app, SweepArgs& a);
/// `sweep` after parsing: checks --seeds, --jobs, --keep and --out, then sweeps.
int start_sweep(const SweepArgs& a);
/// The sweep folder: DIR/<scenario>-sweep, or DIR/<scenario>-sweep-shard-I-of-N for a shard (so that shards
/// given the same --out never write into one another's folder).
std::string sweep_folder(const std::string& out, const std::string& scenario, const fencesim::Shard& shard);
/// The summary, then where it was written (sweep and merge alike).
void print_sweep_written(const fencesim::SweepResult& r, const std::string& file, const std::string& dir);

// --- merge (cli/merge.cpp)

struct MergeArgs {
  CLI::App* command = nullptr;
  std::vector<std::string> files;
  std::string out;
};
void add_merge_command(CLI::App& app, MergeArgs& a);
/// `merge` after parsing: checks --out, then merges.
int start_merge(const MergeArgs& a);

// --- shrink (cli/shrink.cpp)

struct ShrinkArgs {
  CLI::App* command = nullptr;
  std::string file;
  std::string seed_text;
  std::string property;
  std::string out;
  std::string max_runs_text;
};
void add_shrink_command(CLI::App& app, ShrinkArgs& a);
/// `shrink` after parsing: checks --seed, --property, --max-runs and --out, then shrinks.
int start_shrink(const ShrinkArgs& a);

}  // namespace fencesim::cli
