// fencesim/exit_codes.hpp — the exit codes of every fencesim program
// (`fencesim`, `fencesim-real`), one definition for all of them. The README
// ("Exit codes") and docs/REPORTS.md describe them to users.
#pragma once

namespace fencesim::exit_code {

/// Every expectation of the file's `expect` block met (or nothing to expect);
/// for `shrink`, the shrunk file was written.
inline constexpr int kOk = 0;
/// An expectation not met (the reproduce command is printed); for `shrink`,
/// the seed breaks no property, so there is nothing to shrink.
inline constexpr int kExpectation = 1;
/// Invalid input or usage: one clear line naming the file, the JSON path,
/// what was expected and a suggestion; or a run over its event budget.
inline constexpr int kInput = 2;
/// An internal error (a bug: report it with the scenario and seed), a run out
/// of memory, or a sweep whose determinism self-check failed.
inline constexpr int kInternal = 3;

}  // namespace fencesim::exit_code
