// models/program/errors.hpp — why a run with a program client stopped
// (docs/PROTOCOL.md "Errors").
//
// A ProgramError leaves run_scenario (and every command built on it) as an
// exception: there is no report for such a run. `fencesim` prints what()
// — which names the client and quotes the offending line or the end of the
// program's stderr — and exits with exit_code() (fencesim/exit_codes.hpp):
//   kProtocol  the program broke the protocol: exit 2 (bad input)
//   kStart     the program could not be started: exit 2, with a suggestion
//   kFailure   the program exited or died while the run needed it, or sent
//              no yield within program.yield_timeout: exit 3
#pragma once

#include <stdexcept>
#include <string>

#include "fencesim/exit_codes.hpp"

namespace fencesim::program {

struct ProgramError : std::runtime_error {
  enum class Kind { kProtocol, kStart, kFailure };
  ProgramError(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
  Kind kind;
  int exit_code() const { return kind == Kind::kFailure ? exit_code::kInternal : exit_code::kInput; }
};

}  // namespace fencesim::program
