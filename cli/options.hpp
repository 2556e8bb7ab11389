// cli/options.hpp — what the `fencesim` commands share: the exit codes,
// the default output folder, and the checks of the options several commands
// take (--out, --seed, --jobs, --junit). Each check prints its one-line
// message on stderr itself ("fencesim: --seed expects …") and returns false
// (or nullopt); the caller then exits with kExitInput. The commands
// themselves are one file each (cli/commands.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fencesim/exit_codes.hpp"
#include "fencesim/junit.hpp"
#include "fencesim/run.hpp"

namespace fencesim::cli {

/// The exit codes (include/fencesim/exit_codes.hpp; cli/main.cpp says what each means).
inline constexpr int kExitOk = fencesim::exit_code::kOk;
inline constexpr int kExitExpectation = fencesim::exit_code::kExpectation;
inline constexpr int kExitInput = fencesim::exit_code::kInput;
inline constexpr int kExitInternal = fencesim::exit_code::kInternal;

/// Where reports go without --out: `out/` (ignored by git), not `reports/`,
/// which holds the project's stored reference reports (issue #30: a run with
/// `--seed 42` used to write into the stored folder and break the golden test).
inline constexpr const char* kDefaultOut = fencesim::kDefaultOut;

/// The scenario file as reports name it: its file name without the folder,
/// so that a report depends on the file's content and the seed only, not on
/// where it was run from or how the path was spelled (and carries no path
/// of the machine). The terminal's reproduce line uses the path as given.
std::string report_source(const std::string& path);

/// --junit FILE of run, sweep and matrix: writes the cases (fencesim/junit.hpp)
/// when a file was asked for; false (after saying why) if it could not be written.
bool junit_written(const std::string& path, const std::string& suite, const std::vector<fencesim::JUnitCase>& cases);

/// --junit FILE, checked before anything runs: a file name (not a folder)
/// whose folder exists or can be created by this user. False, with one
/// line on stderr, otherwise; true when --junit was not given.
bool junit_option(const CLI::App& command, const std::string& path);

/// --out: a folder name (not ""), and one that can be a folder — checked
/// before anything runs, so that a long sweep or shrink does not fail at its
/// end: it must be a folder already, or the nearest part of it that exists
/// must be a folder this process can write in. False with the message.
bool out_option(const CLI::App& command, const std::string& out);

/// A subcommand's --seed, when given: false (after saying why) when it is
/// not a seed.
bool seed_option(const CLI::App& command, const std::string& text, std::optional<std::uint64_t>& seed);

/// --jobs of `sweep` and `matrix`: the number of cores when not given;
/// nullopt (with a message) when invalid.
std::optional<unsigned> jobs_option(const CLI::App* command, const std::string& text);

}  // namespace fencesim::cli
