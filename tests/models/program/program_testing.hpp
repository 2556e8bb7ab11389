// Helpers of the program tests (tests/models/program/): scenarios whose
// programs run in tests/programs/, and the ProgramError a run stops with.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
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

/// .ci/run sets FENCESIM_REQUIRE_TOOLS=1: a missing tool fails a test there
/// instead of skipping it.
inline bool tools_required() {
  const char* required = std::getenv("FENCESIM_REQUIRE_TOOLS");
  return required != nullptr && std::string(required) == "1";
}

/// Whether node and the Node SDK's npm packages (tools/node-deps.sh) are here.
inline bool node_sdk_installed() {
  return std::system("node --version >/dev/null 2>&1") == 0 &&
         std::system("test -d " FENCESIM_SOURCE_DIR "/sdk/node/node_modules/@sinonjs/fake-timers") == 0;
}

/// Skips the test without node and sdk/node's npm packages in a developer
/// build; fails it under .ci/run (FENCESIM_REQUIRE_TOOLS).
#define REQUIRE_NODE_SDK()                                                                                            \
  do {                                                                                                                \
    if (!::fencesim::program_testing::node_sdk_installed()) {                                                         \
      if (::fencesim::program_testing::tools_required())                                                              \
        FAIL() << "the unit tier needs node and sdk/node's npm packages: tools/node-deps.sh";                         \
      GTEST_SKIP() << "SKIP: the unit tier needs node and sdk/node's npm packages: tools/node-deps.sh installs them"; \
    }                                                                                                                 \
  } while (false)

}  // namespace fencesim::program_testing
