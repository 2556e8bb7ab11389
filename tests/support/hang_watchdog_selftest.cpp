// The hang watchdog's own test program (tests/support/hang_watchdog_test.sh
// runs it): its one test outlives a 1 s limit in hang_here().
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/support/hang_watchdog.hpp"

namespace {

const bool kWatchdog = fencesim::testing::install_hang_watchdog(std::chrono::seconds(1));

[[gnu::noinline]] void hang_here() { std::this_thread::sleep_for(std::chrono::seconds(60)); }

TEST(HangWatchdogSelf, OutlivesItsLimit) { hang_here(); }

}  // namespace
