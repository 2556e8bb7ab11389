// The ZooKeeper model (models/zookeeper) against a real ZooKeeper 3.8
// (Debian 12's `zookeeper`, driven by Debian's python3-kazoo through
// tests/conformance/zk_probe.py).
//
// The real side is one standalone server the test starts on 127.0.0.1 (a
// free port, tickTime 2000 as conf/zoo_sample.cfg, a temporary dataDir,
// stopped by RAII even on failure). The model side is a ZooKeeperService in
// a sim::Simulation with a tester node that sends the model's requests, or
// a whole scenario run. Compared:
//  * negotiated session timeouts (asked 1 s, 10 s, 60 s);
//  * sequence numbering under one parent across a delete (the suffix counts
//    child creates only), the parent's Stat.cversion (creates and deletes),
//    and the czxid steps of the nodes (a delete takes a zxid too);
//  * the time from a session's holder stopping (SIGSTOP, a paused process)
//    to its ephemeral's deletion: every real measurement must fall inside
//    the window the model gives for the same session timeout, widened by a
//    margin for the real machine (MarginMs).
// Standalone ZooKeeper counts zxids in epoch 0; an ensemble (and the
// model, whose bootstrap leader leads term 1) in epoch 1 and up: only the
// steps between czxids are compared.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "models/history.hpp"
#include "models/scenario.hpp"
#include "models/zookeeper/zookeeper.hpp"
#include "sim/simulation.hpp"
#include "tests/conformance/conformance.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::conformance {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using json = nlohmann::json;

/// How far a real measurement may fall outside the model's window (a JVM
/// and a Python client on a loaded 2-core machine: GC, scheduling).
constexpr std::int64_t kMarginMs = 1500;

class RealZooKeeper {
 public:
  RealZooKeeper() : dir_("zookeeper") {
    const std::string server = "/usr/share/zookeeper/bin/zkServer.sh";
    if (!fs::exists(server)) throw std::runtime_error(server + " is missing (Debian package zookeeper)");
    port_ = free_port();
    const fs::path cfg = dir_.path() / "zoo.cfg";
    fs::create_directories(dir_.path() / "data");
    std::ofstream(cfg) << fmt::format(
        "tickTime=2000\ndataDir={}\nclientPort={}\nadmin.enableServer=false\n4lw.commands.whitelist=cons,ruok\n",
        (dir_.path() / "data").string(), port_);
    process::ChildOptions opt;
    opt.out = dir_.path() / "stdout";
    opt.err = dir_.path() / "stderr";
    opt.env = {"ZOO_LOG_DIR=" + dir_.path().string()};
    child_ = std::make_unique<Child>(std::vector<std::string>{server, "start-foreground", cfg.string()}, opt);
    const auto end = Clock::now() + 60s;
    while (Clock::now() < end) {
      if (!child_->running()) break;
      const CommandResult r = run_command({"/usr/bin/python3", "-c",
                                           fmt::format("import socket;s=socket.create_connection(('127.0.0.1',{}),2);"
                                                       "s.sendall(b'ruok');print(s.recv(8).decode())",
                                                       port_)},
                                          Millis{5000});
      if (r.status == 0 && r.out.find("imok") != std::string::npos) return;
      std::this_thread::sleep_for(200ms);
    }
    throw std::runtime_error("zookeeper did not start; log:\n" + tail(dir_.path() / "stdout") +
                             tail(dir_.path() / "stderr"));
  }
  /// zk_probe.py's JSON for `args`.
  json probe(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/python3",
                                     std::string(FENCESIM_SOURCE_DIR) + "/tests/conformance/zk_probe.py", "--port",
                                     std::to_string(port_)};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = run_command(argv, Millis{120000});
    if (r.timed_out || r.status != 0) throw std::runtime_error("zk_probe.py failed: " + r.err);
    return json::parse(r.out);
  }

 private:
  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<Child> child_;
};

/// The model's ensemble (3 servers: no fault runs, so the answers do not
/// depend on the size) and a tester node on zk-0, the leader.
class ModelZooKeeper {
 public:
  ModelZooKeeper() : sim_(1, 1 << 20) {
    sc_.name = "conformance-zookeeper";
    sc_.lock.set_service(ServiceKind::kZooKeeper);
    sc_.lock.ttl = sc_.lock.requested_ttl = 10s;
    std::vector<sim::NodeId> ids;
    for (int i = 0; i < 3; ++i) ids.push_back(sim_.add_node("zk-" + std::to_string(i)).id());
    server_ = ids.front();
    tester_ = sim_.add_node("tester").id();
    svc_ = std::make_unique<zookeeper::ZooKeeperService>(sim_, history_, sc_, ids);
    svc_->start();
  }
  /// The script of zk_probe.py's `basics` (without the negotiation).
  json basics() {
    json out;
    bool done = false;
    sim_.node(tester_).spawn("script", [&](sim::Process& p) {
      auto call = [&](zookeeper::Request r) {
        r.session = session_;
        auto m = p.call(server_, sim::make_payload<zookeeper::Request>(std::move(r)), 5s);
        if (!m || m->as<zookeeper::Response>() == nullptr) throw std::runtime_error("the model did not answer");
        return *m->as<zookeeper::Response>();
      };
      zookeeper::Request c;
      c.op = zookeeper::Op::kConnect;
      c.timeout = 10s;
      session_ = call(c).session;
      zookeeper::Request parent;
      parent.op = zookeeper::Op::kCreate;
      parent.path = "/p";
      call(parent);
      std::vector<std::string> names;
      std::vector<std::int64_t> czxids;
      auto create = [&] {
        zookeeper::Request n;
        n.op = zookeeper::Op::kCreate;
        n.path = "/p/n-";
        n.ephemeral = n.sequential = true;
        const zookeeper::Response r = call(n);
        names.push_back(r.path);
        czxids.push_back(r.stat->czxid);
      };
      for (int i = 0; i < 3; ++i) create();
      zookeeper::Request d;
      d.op = zookeeper::Op::kDelete;
      d.path = names[1];
      call(d);
      create();
      for (std::size_t i = 0; i < names.size(); ++i) {
        out["names"].push_back(names[i].substr(names[i].size() - 10));
        out["czxid_steps"].push_back(czxids[i] - czxids[0]);
      }
      zookeeper::Request ex;
      ex.op = zookeeper::Op::kExists;
      ex.path = "/p";
      const zookeeper::Response st = call(ex);
      out["parent_cversion"] = st.stat->cversion;
      zookeeper::Request gc;
      gc.op = zookeeper::Op::kGetChildren;
      gc.path = "/p";
      out["children"] = call(gc).children.size();
      done = true;
    });
    while (!done && sim_.now() < 600s) sim_.run_until(sim_.now() + 1s);
    if (!done) ADD_FAILURE() << "the model script did not finish within 600 s of simulated time";
    return out;
  }

 private:
  sim::Simulation sim_;
  Scenario sc_;
  History history_;
  std::unique_ptr<zookeeper::ZooKeeperService> svc_;
  sim::NodeId server_ = sim::kNoNode, tester_ = sim::kNoNode;
  zookeeper::SessionId session_ = 0;
};

/// The model's window from a kazoo holder's pause to its lock node's
/// deletion at the leader, for a session of `timeout`: pauses starting at
/// 40 points spread over two ping intervals.
std::pair<std::int64_t, std::int64_t> model_expiry_window(Duration timeout) {
  std::int64_t lo = INT64_MAX, hi = 0;
  for (int k = 0; k < 40; ++k) {
    const Duration at = 10s + k * (timeout * 2 / 3) / 40;
    const RunResult r =
        testing::ScenarioBuilder("expiry-window")
            .duration(60s)
            .zookeeper(timeout)
            .fenced()
            .client("A", testing::counter(50s), [](ClientSpec& c) { c.library = ClientLibrary::kKazoo; })
            .pause("A", at, 40s)
            .run();
    if (r.history.grants.empty()) continue;
    const auto end = r.history.lease_ends.find(r.history.grants.front().value);
    if (end == r.history.lease_ends.end()) continue;
    const std::int64_t ms = (end->second.at - sim::Time{at}) / 1ms;
    lo = std::min(lo, ms);
    hi = std::max(hi, ms);
  }
  return {lo, hi};
}

TEST(ZooKeeperConformance, SessionsSequencesAndZxidsAgree) {
  RealZooKeeper real;
  const json r = real.probe({"basics"});
  ModelZooKeeper model;
  json m = model.basics();
  const ZooKeeperSpec z;
  m["negotiated"] = json::array();
  for (Duration asked : {1000ms, 10000ms, 60000ms}) {
    m["negotiated"].push_back(zookeeper::negotiated_timeout(z, asked) / 1ms);
  }
  std::cout << "[conformance] zookeeper real:  " << r.dump() << "\n[conformance] zookeeper model: " << m.dump()
            << std::endl;
  EXPECT_EQ(r["negotiated"], m["negotiated"]);
  EXPECT_EQ(r["names"], m["names"]);
  EXPECT_EQ(r["czxid_steps"], m["czxid_steps"]);
  EXPECT_EQ(r["parent_cversion"], m["parent_cversion"]);
  EXPECT_EQ(r["children"], m["children"]);
}

TEST(ZooKeeperConformance, AStoppedHoldersEphemeralGoesWithinTheModelsWindow) {
  RealZooKeeper real;
  const auto [lo, hi] = model_expiry_window(4s);
  ASSERT_LE(lo, hi);
  std::cout << "[conformance] zookeeper: model window from a 4 s session's holder stopping to its ephemeral's "
            << "deletion: " << lo << "–" << hi << " ms (margin " << kMarginMs << " ms)" << std::endl;
  for (int i = 0; i < 3; ++i) {
    const json e = real.probe({"expiry", "--timeout-ms", "4000"});
    const std::int64_t ms = e["stopped_to_deleted_ms"];
    std::cout << "[conformance] zookeeper real: stopped to deleted " << ms << " ms" << std::endl;
    EXPECT_GE(ms, lo - kMarginMs);
    EXPECT_LE(ms, hi + kMarginMs);
  }
}

}  // namespace
}  // namespace fencesim::conformance
