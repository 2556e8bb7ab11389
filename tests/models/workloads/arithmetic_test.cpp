// models/workloads/arithmetic.hpp: the arithmetic the model's register
// workloads and fencesim-real's client loop share.
#include "models/workloads/arithmetic.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace fencesim::workloads {
namespace {

using namespace std::chrono_literals;

WorkloadSpec spec(WorkloadKind k) {
  WorkloadSpec w;
  w.kind = k;
  w.block = 100;
  return w;
}

TEST(WorkloadArithmetic, ValuesAndOutcomesByKind) {
  EXPECT_EQ(next_register_value(spec(WorkloadKind::kCounter), 4), 5);
  EXPECT_EQ(next_register_value(spec(WorkloadKind::kWriter), 4), 5);
  EXPECT_EQ(next_register_value(spec(WorkloadKind::kSequenceAllocator), 1000), 1100);
  EXPECT_EQ(register_success_text(spec(WorkloadKind::kCounter), 4, "", 5), "ok: wrote 5");
  EXPECT_EQ(register_success_text(spec(WorkloadKind::kSequenceAllocator), 1000, "", 1100), "ok: claimed 1000..1099");
  EXPECT_EQ(register_success_text(spec(WorkloadKind::kWriter), 2, "B", 3), "ok: wrote version 3 over version 2 by B");
  EXPECT_EQ(register_success_text(spec(WorkloadKind::kWriter), 2, "", 3), "ok: wrote version 3 over version 2");
  EXPECT_EQ(retries_suffix(0), "");
  EXPECT_EQ(retries_suffix(1), " (after 1 retry)");
  EXPECT_EQ(retries_suffix(3), " (after 3 retries)");
}

TEST(WorkloadArithmetic, JitteredRetryWaitsDrawInTheUpperHalfOfACappedDoublingStep) {
  WorkloadSpec w = spec(WorkloadKind::kCounter);
  w.retry_backoff = RetryBackoff::kJitter;
  std::vector<std::pair<Duration, Duration>> asked;
  auto lowest = [&asked](Duration lo, Duration hi) {
    asked.emplace_back(lo, hi);
    return lo;
  };
  EXPECT_EQ(cas_retry_wait(w, Duration{100ms}, 0, lowest), Duration{50ms});
  EXPECT_EQ(cas_retry_wait(w, Duration{100ms}, 2, lowest), Duration{200ms});
  EXPECT_EQ(cas_retry_wait(w, Duration{100ms}, 9, lowest), Duration{800ms});  // capped at 16 × 100 ms
  const std::vector<std::pair<Duration, Duration>> want = {
      {Duration{50ms}, Duration{100ms}}, {Duration{200ms}, Duration{400ms}}, {Duration{800ms}, Duration{1600ms}}};
  EXPECT_EQ(asked, want);
  w.retry_backoff = RetryBackoff::kFixed;
  asked.clear();
  EXPECT_EQ(cas_retry_wait(w, Duration{100ms}, 3, lowest), Duration{100ms});
  EXPECT_TRUE(asked.empty()) << "a fixed wait draws nothing";
}

}  // namespace
}  // namespace fencesim::workloads
