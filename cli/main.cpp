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
//
// One file per command (cli/commands.hpp); this one registers them,
// catches a wrong first word or option before CLI11 parses, and dispatches.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/usage.hpp"
#include "fencesim/run.hpp"
#include "sim/heap.hpp"

namespace {

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
  namespace cli = fencesim::cli;
  cli::RunArgs run;
  cli::add_run_command(app, run);
  cli::MatrixArgs matrix;
  cli::add_matrix_command(app, matrix);
  cli::SweepArgs sweep;
  cli::add_sweep_command(app, sweep);
  cli::MergeArgs merge;
  cli::add_merge_command(app, merge);
  cli::ShrinkArgs shrink;
  cli::add_shrink_command(app, shrink);
  cli::ValidateArgs validate;
  cli::add_validate_command(app, validate);
  cli::WriteArgs write;
  cli::add_write_command(app, write);

  if (const std::optional<int> code = check_first_word(argc, argv)) return *code;
  if (const std::optional<int> code = check_options(app, argc, argv)) return *code;
  if (const std::optional<int> code = parse(app, argc, argv)) return *code;
  try {
    if (run.command->parsed()) return cli::start_run(run);
    if (validate.command->parsed()) return cli::start_validate(validate);
    if (write.command->parsed()) return cli::start_write(write);
    if (matrix.command->parsed()) return cli::start_matrix(matrix);
    if (sweep.command->parsed()) return cli::start_sweep(sweep);
    if (merge.command->parsed()) return cli::start_merge(merge);
    if (shrink.command->parsed()) return cli::start_shrink(shrink);
  } catch (const std::exception& e) {
    std::cerr << "fencesim: internal error: " << e.what() << "\n";
    return fencesim::cli::kExitInternal;
  }
  return fencesim::cli::kExitInput;
}
