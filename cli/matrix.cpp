// cli/matrix.cpp — `fencesim matrix FILE`: a matrix file over seeds, into
// MATRIX.md and MATRIX.json.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fencesim/junit.hpp"
#include "fencesim/matrix.hpp"

namespace fencesim::cli {

namespace {

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

}  // namespace

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
  if (!junit_option(*a.command, a.junit)) return kExitInput;
  return cmd_matrix(a.file, seeds, *jobs, a.out, a.quiet, a.junit);
}

}  // namespace fencesim::cli
