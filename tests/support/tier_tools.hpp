// tests/support/tier_tools.hpp — a tier's real programs, or one clear line.
//
// The conformance and realstack tiers start real servers. When one is not
// installed, every test of the tier reports one line naming the program and
// the Debian package that ships it, and then
//   * fails, under tools/test.sh (and so .ci/run), which exports
//     FENCESIM_REQUIRE_TOOLS=1 after installing everything: a missing server
//     there is a broken install step, never a silent pass;
//   * is skipped (GTEST_SKIP, shown by CTest as "Skipped"), in a plain
//     developer build, so `ctest` without the servers still runs the rest.
//
// Register it once per test binary:
//   static auto* const kTools = ::testing::AddGlobalTestEnvironment(
//       new fencesim::testing::TierTools("conformance", {{"redis-server", "redis-server"}}));
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "real/process.hpp"

namespace fencesim::testing {

class TierTools : public ::testing::Environment {
 public:
  /// `programs`: (program on PATH, or an absolute path of a file that must
  /// exist — a script outside PATH, a Python module —, Debian package that
  /// ships it).
  TierTools(std::string tier, std::vector<std::pair<std::string, std::string>> programs)
      : tier_(std::move(tier)), programs_(std::move(programs)) {}

  void SetUp() override {
    std::string missing;
    for (const auto& [program, package] : programs_) {
      bool found = true;
      if (!program.empty() && program.front() == '/') {
        found = std::filesystem::exists(program);
      } else {
        try {
          process::require_program(program, package);
        } catch (const process::MissingProgram&) {
          found = false;
        }
      }
      if (!found) missing += (missing.empty() ? "" : ", ") + program + " (Debian package " + package + ")";
    }
    if (missing.empty()) return;
    // "SKIP: the <tier> tier needs" is what CTest's SKIP_REGULAR_EXPRESSION
    // (tests/CMakeLists.txt) matches to show the test as skipped; the
    // failing line must not match it.
    const std::string line = "the " + tier_ + " tier needs " + missing + ": tools/deps.sh --test installs it";
    const char* required = std::getenv("FENCESIM_REQUIRE_TOOLS");
    if (required != nullptr && std::string(required) == "1") {
      // Not GTEST_FAIL: gtest would then print each test as "[  SKIPPED ]",
      // which gtest_discover_tests' own skip expression turns into a skip.
      std::cerr << "FAIL: " << line << "\n";
      std::exit(1);
    }
    GTEST_SKIP() << "SKIP: " << line;
  }

 private:
  std::string tier_;
  std::vector<std::pair<std::string, std::string>> programs_;
};

}  // namespace fencesim::testing
