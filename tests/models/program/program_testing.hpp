// Helpers of the program tests (tests/models/program/): scenarios whose
// programs run in tests/programs/, and the ProgramError a run stops with.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "loader/loader.hpp"
#include "models/program/errors.hpp"
#include "models/world.hpp"

namespace fencesim::program_testing {

/// A scenario from JSON text whose programs run in tests/programs/.
inline Scenario from_text(const std::string& text) {
  LoadResult l = load_scenario_text(text, "program_test");
  if (!l.ok()) throw std::runtime_error(l.error->to_string());
  resolve_program_folders(*l.scenario, std::string(FENCESIM_SOURCE_DIR) + "/tests/programs/scenario.json");
  return *l.scenario;
}

/// The ProgramError `s`'s run stops with (a test failure when it does not).
inline program::ProgramError error_of(const Scenario& s) {
  try {
    run_scenario(s);
  } catch (const program::ProgramError& e) {
    return e;
  }
  ADD_FAILURE() << "the run did not stop with a ProgramError";
  return program::ProgramError(program::ProgramError::Kind::kFailure, "");
}

}  // namespace fencesim::program_testing
