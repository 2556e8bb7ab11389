// Durations as the scenario format writes them (docs/FORMAT.md "Values").
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace {

using namespace std::chrono_literals;
using sim::Duration;

Duration parsed(std::string_view text, bool allow_negative = false) {
  const sim::DurationParse p = sim::parse_duration(text, allow_negative);
  EXPECT_TRUE(p.value.has_value()) << "\"" << text << "\": " << p.error;
  EXPECT_TRUE(p.error.empty()) << "\"" << text << "\"";
  return p.value.value_or(Duration{-424242});
}

std::string error_of(std::string_view text, bool allow_negative = false) {
  const sim::DurationParse p = sim::parse_duration(text, allow_negative);
  EXPECT_FALSE(p.value.has_value()) << "\"" << text << "\" parsed as " << p.value->count() << "ns";
  EXPECT_FALSE(p.error.empty()) << "\"" << text << "\" has no error text";
  return p.error;
}

TEST(DurationParse, ADecimalNumberWithAUnitIsReadExactly) {
  EXPECT_EQ(parsed("1.5s"), 1500ms);
  EXPECT_EQ(parsed("250ms"), 250ms);
  EXPECT_EQ(parsed("10s"), 10s);
  EXPECT_EQ(parsed("0s"), 0s);
  EXPECT_EQ(parsed("3ns"), 3ns);
  EXPECT_EQ(parsed("7us"), 7us);
  EXPECT_EQ(parsed("1.5ms"), 1500us);
  EXPECT_EQ(parsed("0.001ms"), 1us);
  EXPECT_EQ(parsed("2m"), 120s);
  EXPECT_EQ(parsed("1.25h"), 75min);
  EXPECT_EQ(parsed("0.000000001s"), 1ns);
  EXPECT_EQ(parsed("12.200s"), 12200ms);
  EXPECT_EQ(parsed("007s"), 7s);
  EXPECT_EQ(parsed("+5s"), 5s);
}

TEST(DurationParse, ANegativeValueIsReadWhereTheCallerAllowsIt) {
  EXPECT_EQ(parsed("-5s", /*allow_negative=*/true), -5s);
  EXPECT_EQ(parsed("-1.5ms", true), -1500us);
  EXPECT_EQ(parsed("-0s", true), 0s);
}

TEST(DurationParse, ANegativeValueIsRefusedWhereItIsNotAllowed) {
  EXPECT_NE(error_of("-5s").find("negative"), std::string::npos);
  EXPECT_NE(error_of("-1ns").find("negative"), std::string::npos);
}

TEST(DurationParse, ABareNumberIsRefusedWithAHintToAddAUnit) {
  for (const char* bare : {"10", "1.5", "0", "-5"}) {
    const std::string e = error_of(bare, true);
    EXPECT_NE(e.find("unit"), std::string::npos) << bare << ": " << e;
  }
}

TEST(DurationParse, AUnitWithoutANumberOrAnUnknownUnitIsRefused) {
  EXPECT_NE(error_of("s").find("number"), std::string::npos);
  EXPECT_NE(error_of("").find("number"), std::string::npos);
  EXPECT_NE(error_of("10sec").find("unknown unit"), std::string::npos);
  EXPECT_NE(error_of("10 s").find("unknown unit"), std::string::npos);
  EXPECT_NE(error_of("10S").find("unknown unit"), std::string::npos);
  error_of(".5s");
  error_of("5.s");
  error_of("1e3ms");
  error_of("--5s", true);
  error_of(" 5s");
}

TEST(DurationParse, AValueFinerThanOneNanosecondIsRefused) {
  EXPECT_NE(error_of("1.5ns").find("1ns"), std::string::npos);
  EXPECT_NE(error_of("0.0000000001s").find("1ns"), std::string::npos);
  EXPECT_NE(error_of("1.0001us").find("1ns"), std::string::npos);
  // Trailing zeros do not make a value finer.
  EXPECT_EQ(parsed("1.000000000000000000000s"), 1s);
}

TEST(DurationParse, AValueBeyondTheInt64RangeIsRefused) {
  EXPECT_NE(error_of("10000000h").find("too large"), std::string::npos);
  EXPECT_NE(error_of("9223372036854775808ns").find("too large"), std::string::npos);
  EXPECT_NE(error_of("99999999999999999999999s").find("too large"), std::string::npos);
  EXPECT_EQ(parsed("9223372036854775807ns"), Duration{INT64_MAX});
  // The negative range is one larger.
  EXPECT_EQ(parsed("-9223372036854775808ns", true), Duration{INT64_MIN});
  EXPECT_NE(error_of("-9223372036854775809ns", true).find("too large"), std::string::npos);
}

TEST(DurationFormat, ADurationIsPrintedInTheLargestUnitThatKeepsItExact) {
  EXPECT_EQ(sim::format_duration(1500ms), "1.5s");
  EXPECT_EQ(sim::format_duration(250ms), "250ms");
  EXPECT_EQ(sim::format_duration(60s), "60s");
  EXPECT_EQ(sim::format_duration(12200ms), "12.2s");
  EXPECT_EQ(sim::format_duration(0s), "0s");
  EXPECT_EQ(sim::format_duration(-5s), "-5s");
  EXPECT_EQ(sim::format_duration(1ns), "1ns");
  EXPECT_EQ(sim::format_duration(1001ns), "1.001us");
  EXPECT_EQ(sim::format_duration(1500us), "1.5ms");
  EXPECT_EQ(sim::format_duration(1s + 1ns), "1.000000001s");
  EXPECT_EQ(sim::format_duration(-999ns), "-999ns");
  EXPECT_EQ(sim::format_duration(Duration{INT64_MAX}), "9223372036.854775807s");
  EXPECT_EQ(sim::format_duration(Duration{INT64_MIN}), "-9223372036.854775808s");
}

TEST(DurationFormat, FormattingThenParsingGivesBackEveryValue) {
  std::vector<Duration> values = {0ns,
                                  1ns,
                                  -1ns,
                                  999ns,
                                  1us,
                                  1001ns,
                                  1ms,
                                  1s,
                                  -5s,
                                  60s,
                                  3600s,
                                  1500ms,
                                  1s + 1ns,
                                  Duration{INT64_MAX},
                                  Duration{INT64_MIN},
                                  Duration{INT64_MIN + 1}};
  sim::Rng rng(2024);
  for (int i = 0; i < 20000; ++i) {
    // Mix magnitudes so that every unit and fraction length is exercised.
    const int digits = static_cast<int>(rng.uniform(0, 18));
    std::int64_t bound = 1;
    for (int d = 0; d < digits; ++d) bound *= 10;
    values.push_back(Duration{rng.uniform(-bound, bound)});
  }
  for (Duration d : values) {
    const std::string text = sim::format_duration(d);
    const sim::DurationParse p = sim::parse_duration(text, /*allow_negative=*/true);
    ASSERT_TRUE(p.value.has_value()) << d.count() << "ns printed as \"" << text << "\": " << p.error;
    EXPECT_EQ(*p.value, d) << "\"" << text << "\"";
  }
}

}  // namespace
