// The comparison itself: what makes a conformance test fail, and what does
// not. No server is needed.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "tests/conformance/conformance.hpp"

namespace fencesim::conformance {
namespace {

const std::vector<Deviation> kDevs = {
    {"dev-int", "an example", R"(bulk "\d+")", R"(int \d+)", "bulk", "int", nullptr},
};

Transcript one(const std::string& side, const std::string& name, const std::string& answer,
               const std::string& deviation = "") {
  Transcript t(side);
  t.add(name, answer, "", deviation);
  return t;
}

TEST(ConformanceComparison, EqualAnswersPass) {
  compare_transcripts(one("real", "GET k", "nil"), one("model", "GET k", "nil"), kDevs);
}

TEST(ConformanceComparison, DifferentAnswersFail) {
  EXPECT_NONFATAL_FAILURE(compare_transcripts(one("real", "GET k", "nil"), one("model", "GET k", "bulk \"v\""), kDevs),
                          "GET k");
}

TEST(ConformanceComparison, ADocumentedDeviationPasses) {
  compare_transcripts(one("real", "GET c", "bulk \"1\"", "dev-int"), one("model", "GET c", "int 1", "dev-int"), kDevs);
}

TEST(ConformanceComparison, ADeviationThatNoLongerOccursFails) {
  EXPECT_NONFATAL_FAILURE(compare_transcripts(one("real", "GET c", "bulk \"1\"", "dev-int"),
                                              one("model", "GET c", "bulk \"1\"", "dev-int"), kDevs),
                          "no longer occurs");
}

TEST(ConformanceComparison, ARealAnswerOtherThanTheDocumentedOneFails) {
  EXPECT_NONFATAL_FAILURE(
      compare_transcripts(one("real", "GET c", "nil", "dev-int"), one("model", "GET c", "int 1", "dev-int"), kDevs),
      "the real server answered");
}

TEST(ConformanceComparison, DivergingScriptsFail) {
  EXPECT_NONFATAL_FAILURE(compare_transcripts(one("real", "GET a", "nil"), one("model", "GET b", "nil"), kDevs),
                          "diverged");
}

TEST(ConformanceComparison, AnUnobservableStepIsReportedNotCompared) {
  Transcript real("real");
  real.add_timed("GET k before its TTL", false, "2500 ms passed, more than the 2000 ms window", "nil");
  compare_transcripts(real, one("model", "GET k before its TTL", "bulk \"v\""), kDevs);
}

}  // namespace
}  // namespace fencesim::conformance
