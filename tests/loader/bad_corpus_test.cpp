// tests/loader/bad_corpus_test.cpp — every file in tests/loader/bad/ is refused,
// and its error line carries the key words listed in bad/expected.json
// (file name, JSON path, what was expected, the suggestion).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "loader/loader.hpp"
#include "tests/loader/test_paths.hpp"

namespace fencesim {
namespace {

using nlohmann::json;

json read_expected() {
  std::ifstream in(testing::loader_test_dir() / "bad" / "expected.json");
  return json::parse(in);
}

TEST(BadCorpus, EveryBadFileIsRefusedWithTheExpectedWords) {
  const json expected = read_expected();
  std::set<std::string> seen;
  for (const auto& f : testing::json_files(testing::loader_test_dir() / "bad")) {
    const std::string name = f.filename().string();
    if (name == "expected.json") continue;
    seen.insert(name);
    ASSERT_TRUE(expected.contains(name)) << name << " has no entry in bad/expected.json";
    const LoadResult r = load_scenario_file(f.string());
    ASSERT_TRUE(r.error.has_value()) << name << " loaded, but it is in the bad corpus";
    const std::string line = r.error->to_string();
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    for (const auto& want : expected.at(name).at("contains")) {
      EXPECT_NE(line.find(want.get<std::string>()), std::string::npos)
          << name << ": wanted \"" << want.get<std::string>() << "\" in\n  " << line;
    }
  }
  EXPECT_GE(seen.size(), 30u);
  for (const auto& [name, entry] : expected.items()) {
    EXPECT_TRUE(seen.count(name)) << "bad/expected.json lists " << name << ", which does not exist";
  }
}

TEST(BadCorpus, MalformedFilesReportLineAndColumn) {
  const json expected = read_expected();
  int malformed = 0;
  for (const auto& [name, entry] : expected.items()) {
    if (name.find("malformed") == std::string::npos) continue;
    ++malformed;
    const LoadResult r = load_scenario_file((testing::loader_test_dir() / "bad" / name).string());
    ASSERT_TRUE(r.error.has_value()) << name;
    EXPECT_GT(r.error->line, 0) << name;
    EXPECT_GT(r.error->column, 0) << name;
  }
  EXPECT_GE(malformed, 3);
}

}  // namespace
}  // namespace fencesim
