// The History → operations mapping of `run --history` and the JUnit XML
// renderer, on hand-made records (issue #35): the cases no shipped scenario
// reaches (a grant the client never handled, a crash, a refused write) and
// the escaping of every XML-special and control character.
#include <gtest/gtest.h>

#include <string>

#include "fencesim/history_export.hpp"
#include "fencesim/junit.hpp"

namespace fencesim {
namespace {

using namespace std::chrono_literals;

Scenario two_clients() {
  Scenario s;
  s.name = "hand-made";
  s.resource.initial = 7;
  s.clients.resize(2);
  s.clients[0].name = "A";
  s.clients[1].name = "B";
  return s;
}

bool has_line(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(HistoryExport, AGrantTheClientNeverHandledIsAnInfoAcquire) {
  const Scenario s = two_clients();
  RunResult r;
  r.history.grant(Time(1ms), "A", "v1", 1, "redis-0");  // A was paused: no belief
  const std::string edn = render_history_edn(s, r);
  EXPECT_TRUE(
      has_line(edn, "{:type :invoke, :f :acquire, :value nil, :process 0, :time 1000000, :index 0, :client \"A\"}"))
      << edn;
  EXPECT_TRUE(
      has_line(edn, "{:type :info, :f :acquire, :value nil, :process 0, :time 1000000, :index 1, :client \"A\"}"))
      << edn;
}

TEST(HistoryExport, ACrashedHolderReleasesInfoAndComesBackAsANewProcess) {
  const Scenario s = two_clients();
  RunResult r;
  r.history.grant(Time(1ms), "A", "v1", 1, "redis-0");
  const std::size_t b = r.history.begin_belief(Time(1ms), "A", "v1", 1);
  r.history.end_belief(b, Time(5ms), "crash");
  r.history.grant(Time(9ms), "A", "v2", 2, "redis-0");
  r.history.begin_belief(Time(9ms), "A", "v2", 2);
  const std::string edn = render_history_edn(s, r);
  EXPECT_TRUE(
      has_line(edn, "{:type :info, :f :release, :value nil, :process 0, :time 5000000, :index 3, :client \"A\"}"))
      << edn;
  // Clients are processes 0 and 1; A after its :info is process 2.
  EXPECT_TRUE(has_line(edn, "{:type :ok, :f :acquire, :value nil, :process 2, :time 9000000, :index 5, :client \"A\"}"))
      << edn;
  EXPECT_NE(edn.find("with initial value 7"), std::string::npos) << edn;
}

TEST(HistoryExport, ARefusedWriteIsAFailedCasInBothFiles) {
  const Scenario s = two_clients();
  RunResult r;
  ResourceOpRecord w;
  w.kind = ResourceOpKind::kWrite;
  w.write = true;
  w.client = "B";
  w.sent = Time(2ms);
  w.at = Time(3ms);
  w.read_value = 7;
  w.value = 8;
  w.accepted = false;
  r.history.resource_ops.push_back(w);
  const std::string edn = render_history_edn(s, r);
  EXPECT_TRUE(has_line(edn, "{:type :fail, :f :cas, :value [7 8], :process 1, :time 3000000, :index 1, :client \"B\"}"))
      << edn;
  const std::string json = render_history_porcupine(s, r);
  EXPECT_NE(json.find("{\"client_id\": 1, \"client\": \"B\", \"input\": {\"op\": \"cas\", \"from\": 7, \"to\": 8}, "
                      "\"call\": 2000000, \"output\": {\"ok\": false}, \"return\": 3000000}"),
            std::string::npos)
      << json;
}

TEST(JUnit, EveryXmlSpecialAndControlCharacterIsEscaped) {
  JUnitCase c;
  c.classname = "fencesim.run";
  c.name = "a&b<c>\"d'e";
  c.result = JUnitCase::Result::kFailed;
  c.message = std::string("bell\x07here");
  c.detail = "x < y && z\n";
  const std::string xml = render_junit("suite & co", {c});
  EXPECT_NE(xml.find("name=\"a&amp;b&lt;c&gt;&quot;d&apos;e\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("message=\"bell\\u0007here\""), std::string::npos) << xml;
  EXPECT_NE(xml.find(">x &lt; y &amp;&amp; z\n</failure>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"suite &amp; co\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">"),
            std::string::npos)
      << xml;
}

}  // namespace
}  // namespace fencesim
