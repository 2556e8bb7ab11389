// tests/cli/timeline_text_test.cpp — the words on timeline.html's lease-end
// marks (report/timeline_text.hpp): a release reads as a release and a
// takeover as a takeover (issue #35: the labels said "lease not held" after
// a Redis DEL and "lease ctrl-2" after client-go's takeover by ctrl-2).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fencesim/run.hpp"
#include "report/timeline_text.hpp"

namespace fencesim {
namespace {

using timeline_text::lease_end_label;
using timeline_text::lease_end_word;

/// A lease's end as a service records it.
LeaseEndRecord end(LeaseEndCause cause, const std::string& who = "") {
  return LeaseEndRecord{"v", Time{0}, "the reason", cause, who};
}

TEST(TimelineText, TheHoldersOwnReleaseReadsAsARelease) {
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kReleased), false), "released");  // etcd unlock, ShedLock, client-go
  // Redis only sees that the key is gone: after the holder's DEL, a release.
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kNotOnPrimary, "redis-0"), true), "released");
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kNoMajority), true), "released");
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kDeleted), true), "released");
}

TEST(TimelineText, AnotherClientsReleaseOrTakeoverNamesIt) {
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kTakenOver, "ctrl-2"), false), "taken over by ctrl-2");
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kReleasedBy, "B"), false), "released by B");
  EXPECT_EQ(lease_end_label("ctrl-1", end(LeaseEndCause::kTakenOver, "ctrl-2"), false),
            "ctrl-1 lease taken over by ctrl-2");
}

TEST(TimelineText, ALeaseLostWithoutAReleaseSaysHow) {
  // A failover to a replica that missed the SET: not a release.
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kNotOnPrimary, "redis-1"), false), "not on redis-1");
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kNoMajority), false), "no majority");
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kExpired), false), "expired");
  // A release lost in the network, then the TTL: it expired.
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kExpired), true), "expired");
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kRevoked), false), "revoked");
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kServiceDown), false), "service down");
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kDeleted), false), "deleted");  // the queue's DeleteMessage
  EXPECT_EQ(lease_end_word(end(LeaseEndCause::kEnded), false), "ended");
  EXPECT_EQ(lease_end_label("", end(LeaseEndCause::kRevoked), false), "revoked");
}

/// Each service records the cause with its words: the reasons the shipped
/// services write, run by run, carry the cause the words above expect.
TEST(TimelineText, ShippedServicesRecordTheCauseTheirReasonSays) {
  for (const char* stem : {"worked-example-unfenced", "etcd-holder-paused-fenced", "redlock-clock-jump",
                           "sentinel-failover-token-reuse-strict", "table-k8s-paused-leader-unfenced",
                           "table-shedlock-gc-pause-db-clock", "queue-pause-unfenced"}) {
    const std::filesystem::path file =
        std::filesystem::path(FENCESIM_SOURCE_DIR) / "scenarios" / (std::string(stem) + ".json");
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const LoadResult loaded = load_scenario_text(ss.str(), file.string());
    ASSERT_TRUE(loaded.scenario) << stem;
    const RunResult run = run_scenario(*loaded.scenario);
    for (const auto& [value, e] : run.history.lease_ends) {
      const bool expired = e.reason.find("expire") != std::string::npos ||
                           e.reason.find("ran out") != std::string::npos ||
                           e.reason.find("lock_until passed") != std::string::npos;
      EXPECT_EQ(expired, e.cause == LeaseEndCause::kExpired) << stem << ": " << e.reason;
      if (e.cause == LeaseEndCause::kTakenOver || e.cause == LeaseEndCause::kReleasedBy ||
          e.cause == LeaseEndCause::kNotOnPrimary) {
        EXPECT_NE(e.reason.find(e.who), std::string::npos) << stem << ": " << e.reason;
        EXPECT_FALSE(e.who.empty()) << stem << ": " << e.reason;
      }
    }
  }
}

std::string timeline_of(const std::string& stem) {
  const std::filesystem::path file = std::filesystem::path(FENCESIM_SOURCE_DIR) / "scenarios" / (stem + ".json");
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const LoadResult loaded = load_scenario_text(ss.str(), file.string());
  if (!loaded.scenario) {
    ADD_FAILURE() << stem << " does not load";
    return "";
  }
  const RunResult run = run_scenario(*loaded.scenario);
  return render_timeline_html(*loaded.scenario, run, ReportMeta{stem + ".json", false});
}

// The shipped runs the labels came from, rendered whole.
TEST(TimelineText, ShippedRunsLabelReleasesAndTakeovers) {
  const std::string redis = timeline_of("worked-example-unfenced");
  EXPECT_NE(redis.find(">B lease released</text>"), std::string::npos);
  EXPECT_EQ(redis.find("lease not held"), std::string::npos);
  const std::string k8s = timeline_of("table-k8s-paused-leader-version-token");
  EXPECT_NE(k8s.find(">A lease taken over by B</text>"), std::string::npos);
  EXPECT_EQ(k8s.find(">A lease B</text>"), std::string::npos);
  const std::string split = timeline_of("split-brain-primary");  // the promoted replica lacks A's key
  EXPECT_NE(split.find(">A lease not on redis-1</text>"), std::string::npos);
}

// A rejection's label is who and why, short enough to sit between the
// accepted writes it is refused among (issue #35: "A's write rejected: token
// 1 < last seen 2" covered B's accepted write; tests/browser checks the boxes).
TEST(TimelineText, ARejectionsLabelIsWhoAndWhy) {
  const std::string fenced = timeline_of("worked-example-fenced");
  EXPECT_NE(fenced.find(">A: token 1 &lt; last seen 2</text>"), std::string::npos);
  EXPECT_EQ(fenced.find("A's write rejected"), std::string::npos);
}

// The terminal's text timeline names what the reason leaves unsaid.
TEST(TimelineText, TerminalTimelineNamesReleasesAndTakeovers) {
  auto terminal_of = [](const std::string& stem) {
    const std::filesystem::path file = std::filesystem::path(FENCESIM_SOURCE_DIR) / "scenarios" / (stem + ".json");
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const LoadResult loaded = load_scenario_text(ss.str(), file.string());
    if (!loaded.scenario) return std::string();
    TerminalTimeline whole;
    whole.whole = true;
    return render_terminal_timeline(*loaded.scenario, run_scenario(*loaded.scenario), whole);
  };
  const std::string redis = terminal_of("worked-example-unfenced");
  EXPECT_NE(redis.find("B's lease (released): redis-0, the current primary, does not hold it"), std::string::npos)
      << redis;
  EXPECT_NE(redis.find("A's lease: expired on redis-0 wall clock"), std::string::npos) << "no word the reason has";
  const std::string k8s = terminal_of("table-k8s-paused-leader-version-token");
  EXPECT_NE(k8s.find("A's lease (taken over by B): B took the record over at version 8"), std::string::npos) << k8s;
}

}  // namespace
}  // namespace fencesim
