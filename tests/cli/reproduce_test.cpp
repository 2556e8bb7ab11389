// tests/cli/reproduce_test.cpp — the reproduce command is safe to paste into
// a shell: a file name with characters a shell treats specially is quoted.
#include <gtest/gtest.h>

#include "fencesim/run.hpp"

namespace fencesim {
namespace {

std::string reproduce(const std::string& source) {
  Scenario s;
  s.name = "x";
  RunResult r;
  r.seed = 7;
  return reproduce_command(s, r, ReportMeta{source, false});
}

TEST(ReproduceCommand, APlainFileNameStaysAsItIs) {
  EXPECT_EQ(reproduce("scenarios/gc-pause.json"), "fencesim run scenarios/gc-pause.json --seed 7");
  EXPECT_EQ(reproduce(""), "fencesim run x.json --seed 7");
}

TEST(ReproduceCommand, AFileNameAShellWouldSplitOrRunIsQuoted) {
  EXPECT_EQ(reproduce("my file;rm x.json"), "fencesim run 'my file;rm x.json' --seed 7");
  EXPECT_EQ(reproduce("it's.json"), "fencesim run 'it'\\''s.json' --seed 7");
  EXPECT_EQ(reproduce("$(boom).json"), "fencesim run '$(boom).json' --seed 7");
}

}  // namespace
}  // namespace fencesim
