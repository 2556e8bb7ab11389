// tests/support/hang_watchdog.hpp — a test that hangs says where it hangs.
//
// CTest's TIMEOUT kills a hung test and reports only "Timeout". The tiers
// that start real servers (realstack, conformance) install this listener:
// a test still running `limit` after it started gets, on stderr (which
// CTest keeps with --output-on-failure),
//   * every process on the machine as a tree with its state and kernel wait
//     channel (`ps`), so a server or helper that stopped answering shows;
//   * every thread's stack of the test process (`gdb -batch`, if gdb is
//     installed: tools/deps.sh --test installs it),
// and then the process aborts: one failure with its cause, instead of a
// timeout with none.
//
// Install it once per test binary, with a limit below the tests' TIMEOUT:
//   static const bool kWatchdog = fencesim::testing::install_hang_watchdog(std::chrono::seconds(240));
#pragma once

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace fencesim::testing {

class HangWatchdog : public ::testing::EmptyTestEventListener {
 public:
  explicit HangWatchdog(std::chrono::seconds limit) : state_(new State{}), limit_(limit) {
    // The state outlives the listener (gtest deletes listeners at exit while
    // the detached thread may still wait on it): it is never freed.
    State* s = state_;
    std::thread([s] { watch(*s); }).detach();
  }
  void OnTestStart(const ::testing::TestInfo& t) override {
    {
      std::lock_guard<std::mutex> l(state_->m);
      state_->test = std::string(t.test_suite_name()) + "." + t.name();
      state_->limit = limit_;
      state_->deadline = std::chrono::steady_clock::now() + limit_;
      state_->armed = true;
    }
    state_->cv.notify_all();
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    {
      std::lock_guard<std::mutex> l(state_->m);
      state_->armed = false;
    }
    state_->cv.notify_all();
  }

 private:
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool armed = false;
    std::string test;
    std::chrono::seconds limit{0};
    std::chrono::steady_clock::time_point deadline;
  };

  static void watch(State& s) {
    std::unique_lock<std::mutex> l(s.m);
    for (;;) {
      if (!s.armed) {
        s.cv.wait(l);
        continue;
      }
      const auto deadline = s.deadline;
      s.cv.wait_until(l, deadline);
      if (s.armed && s.deadline == deadline && std::chrono::steady_clock::now() >= deadline) {
        report(s.test, s.limit);
        std::abort();
      }
    }
  }

  static void report(const std::string& test, std::chrono::seconds limit) {
    std::fprintf(stderr,
                 "\nHANG: %s is still running after %lld s (tests/support/hang_watchdog.hpp); the processes and "
                 "every thread's stack follow, then it aborts\n",
                 test.c_str(), static_cast<long long>(limit.count()));
    std::fflush(stdout);
    std::fflush(stderr);
#ifdef PR_SET_PTRACER
    (void)::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // lets gdb attach under Yama
#endif
    const std::string pid = std::to_string(::getpid());
    const std::string cmd =
        "ps -e --forest -o pid,ppid,stat,wchan:28,etimes,args | cut -c1-220 >&2; "
        "if command -v gdb >/dev/null; then gdb -p " +
        pid +
        " -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' </dev/null >&2 2>&1; "
        "else echo 'no stacks: gdb is not installed (Debian package gdb; tools/deps.sh --test)' >&2; fi";
    (void)!std::system(cmd.c_str());
    std::fflush(stderr);
  }

  State* state_;
  std::chrono::seconds limit_;
};

/// Appends a HangWatchdog to gtest's listeners; returns true (for a static
/// initializer).
inline bool install_hang_watchdog(std::chrono::seconds limit) {
  ::testing::UnitTest::GetInstance()->listeners().Append(new HangWatchdog(limit));
  return true;
}

}  // namespace fencesim::testing
