// cli/write.cpp — `fencesim write FILE`: the scenario as fencesim writes it.
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "fencesim/run.hpp"
#include "loader/writer.hpp"

namespace fencesim::cli {

namespace {

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

}  // namespace

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

}  // namespace fencesim::cli
