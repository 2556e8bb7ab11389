// tests/loader/test_paths.hpp — where the test data lives.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace fencesim::testing {

inline std::filesystem::path source_dir() { return FENCESIM_SOURCE_DIR; }
inline std::filesystem::path loader_test_dir() { return source_dir() / "tests" / "loader"; }
/// The acceptance cases beside the repository (shared/cases); may be absent.
inline std::filesystem::path shared_cases_dir() { return source_dir() / ".." / "shared" / "cases"; }

/// The *.json files of `dir`, sorted; empty if the folder does not exist.
inline std::vector<std::filesystem::path> json_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fencesim::testing
