// The loader and the writer on the client policies, workload.retries, the
// leader workload and expect.metrics (docs/FORMAT.md "Client policies",
// "Metric expectations"): what each spelling loads to, and that writing it
// back loads to the same scenario.
#include <gtest/gtest.h>

#include <string>

#include "loader/loader.hpp"
#include "loader/writer.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;

std::string file_with(const std::string& client_extra, const std::string& expect = "{}",
                      const std::string& resource = R"({"kind": "fenced"})", const std::string& workload_extra = "") {
  return R"({"scenario": "p", "duration": "60s", "lock": {"service": "redis", "ttl": "10s", "replicas": 0,
            "sentinels": 0}, "resource": )" +
         resource + R"(, "clients": [{"name": "A")" + client_extra + R"(, "workload": {"kind": "counter")" +
         workload_extra + R"(}}], "expect": )" + expect + "}";
}

Scenario load_ok(const std::string& text) {
  const LoadResult r = load_scenario_text(text, "p.json");
  EXPECT_FALSE(r.error.has_value()) << (r.error ? r.error->to_string() : "");
  return r.scenario ? *r.scenario : Scenario{};
}

std::string load_error(const std::string& text) {
  const LoadResult r = load_scenario_text(text, "p.json");
  return r.error ? r.error->to_string() : "";
}

TEST(LoaderPolicies, DefaultsAreTheClientThatNeverLooks) {
  const Scenario s = load_ok(file_with(""));
  const ClientSpec& c = s.clients.at(0);
  EXPECT_FALSE(c.check_lease_before_write.has_value());
  EXPECT_EQ(c.on_lease_loss, LeaseLossPolicy::kContinue);
  EXPECT_FALSE(c.lease_loss_after.has_value());
  EXPECT_EQ(c.workload.retries, 10);
  EXPECT_TRUE(s.expect_metrics.empty());
}

TEST(LoaderPolicies, EachSpellingLoads) {
  Scenario s = load_ok(file_with(R"(, "check_lease_before_write": "0s", "on_lease_loss": "abort",
                                   "lease_loss_after": "8s")"));
  EXPECT_EQ(s.clients[0].check_lease_before_write, std::optional<Duration>(0s));
  EXPECT_EQ(s.clients[0].on_lease_loss, LeaseLossPolicy::kAbort);
  EXPECT_EQ(s.clients[0].lease_loss_after, std::optional<Duration>(8s));
  s = load_ok(file_with(R"(, "check_lease_before_write": false, "lease_loss_after": "none")"));
  EXPECT_FALSE(s.clients[0].check_lease_before_write.has_value());
  EXPECT_FALSE(s.clients[0].lease_loss_after.has_value());
  s = load_ok(file_with("", "{}", R"({"kind": "cas"})", R"(, "retries": 0)"));
  EXPECT_EQ(s.clients[0].workload.retries, 0);
}

TEST(LoaderPolicies, MetricBoundsLoadInTheirUnits) {
  const Scenario s =
      load_ok(file_with("", R"({"metrics": {"writes_rejected": {"min": 1}, "renewal_latency_p99": {"max": "3s"}}})"));
  ASSERT_EQ(s.expect_metrics.size(), 2u);
  EXPECT_EQ(s.expect_metrics.at("writes_rejected"), (MetricBound{1, std::nullopt}));
  EXPECT_EQ(s.expect_metrics.at("renewal_latency_p99"), (MetricBound{std::nullopt, 3'000'000'000}));
}

TEST(LoaderPolicies, WrongShapesAreOneClearError) {
  EXPECT_NE(load_error(file_with(R"(, "lease_loss_after": 5)")).find("expected \"none\" or a duration"),
            std::string::npos);
  EXPECT_NE(load_error(file_with(R"(, "check_lease_before_write": "-1s")")).find("check_lease_before_write"),
            std::string::npos);
  EXPECT_NE(load_error(file_with("", R"({"metrics": {"longest_overlap": {"max": 0}}})")).find("durations need a unit"),
            std::string::npos);
  EXPECT_NE(load_error(file_with("", R"({"metrics": {"lease_losses": {"max": 1, "maximum": 2}}})"))
                .find("unknown key \"maximum\" in a metric bound"),
            std::string::npos);
  EXPECT_NE(load_error(file_with("", "{}", R"({"kind": "cas"})", R"(, "retries": 1001)"))
                .find("at clients[0].workload.retries"),
            std::string::npos);
}

TEST(LoaderPolicies, TheWriterRoundTripsEveryPolicy) {
  const Scenario s = load_ok(file_with(R"(, "check_lease_before_write": "500ms", "on_lease_loss": "abort",
                                          "lease_loss_after": "8s")",
                                       R"({"metrics": {"writes_rejected": {"min": 1, "max": 4},
                                           "longest_overlap": {"max": "0s"}}})"));
  const std::string written = write_scenario(s);
  EXPECT_NE(written.find("\"lease_loss_after\": \"8s\""), std::string::npos) << written;
  EXPECT_NE(written.find("\"longest_overlap\": {\"max\": \"0s\"}"), std::string::npos) << written;
  const Scenario back = load_ok(written);
  EXPECT_EQ(back, s);
  EXPECT_EQ(write_scenario(back), written);
}

// Issue #35, defect 7: workload.retry_backoff — "jitter" by default and
// left out when written; "fixed" loads, is written back and loads again to
// the same scenario; a misspelling or a resource without versions is one
// clear error.
TEST(LoaderPolicies, RetryBackoffLoadsWritesBackAndIsCheckedForACasResource) {
  EXPECT_EQ(load_ok(file_with("", "{}", R"({"kind": "cas"})")).clients[0].workload.retry_backoff,
            RetryBackoff::kJitter);
  const Scenario s = load_ok(file_with("", "{}", R"({"kind": "cas"})", R"(, "retry_backoff": "fixed")"));
  EXPECT_EQ(s.clients[0].workload.retry_backoff, RetryBackoff::kFixed);
  const std::string written = write_scenario(s);
  EXPECT_NE(written.find("\"retry_backoff\": \"fixed\""), std::string::npos) << written;
  EXPECT_EQ(load_ok(written), s);
  EXPECT_EQ(write_scenario(load_ok(file_with("", "{}", R"({"kind": "cas"})"))).find("retry_backoff"),
            std::string::npos);
  EXPECT_NE(load_error(file_with("", "{}", R"({"kind": "cas"})", R"(, "retry_backoff": "fixd")"))
                .find("at clients[0].workload.retry_backoff: unknown value \"fixd\""),
            std::string::npos);
  EXPECT_NE(load_error(file_with("", "{}", R"({"kind": "fenced"})", R"(, "retry_backoff": "fixed")"))
                .find("\"retry_backoff\" applies only to a resource that compares versions"),
            std::string::npos);
}

}  // namespace
}  // namespace fencesim
