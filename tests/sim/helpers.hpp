// tests/sim/helpers.hpp — a few lines to set up a world for an engine test.
//
// A test builds a `World`, names its nodes, and lets them write what happens
// into one `Log` as "<true time> <what>" lines, so the assertion reads like
// the story the test checks:
//
//   simtest::World w;
//   sim::Node& a = w.node("A");
//   sim::Node& b = w.listener("B");      // logs every message it receives
//   a.send(b.id(), simtest::text("ping"));
//   w.run();
//   EXPECT_THAT(w.log, ElementsAre("1ms B got ping from A"));
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/simulation.hpp"

namespace simtest {

using namespace std::chrono_literals;

/// A message body that is just text.
struct Text final : sim::Payload {
  explicit Text(std::string t) : text(std::move(t)) {}
  std::string describe() const override { return text; }
  std::string text;
};

inline sim::PayloadPtr text(std::string t) { return std::make_shared<Text>(std::move(t)); }

inline std::string text_of(const sim::Message& m) {
  const Text* t = m.as<Text>();
  return t != nullptr ? t->text : std::string("<not text>");
}

/// Node behaviour that logs every message it receives and, when `echo` is
/// set, answers it with "re:<text>".
class Listener final : public sim::NodeBehaviour {
 public:
  Listener(sim::Node& node, std::vector<std::string>& log, bool echo) : node_(node), log_(log), echo_(echo) {}
  void on_message(const sim::Message& m) override {
    log_.push_back(sim::format_duration(node_.sim().now()) + " " + node_.name() + " got " + text_of(m) + " from " +
                   node_.sim().node(m.from).name());
    if (echo_) node_.reply(m, text("re:" + text_of(m)));
  }
  void on_crash() override {
    log_.push_back(sim::format_duration(node_.sim().now()) + " " + node_.name() + " crash hook");
  }
  void on_restart() override {
    log_.push_back(sim::format_duration(node_.sim().now()) + " " + node_.name() + " restart hook");
    if (restart) restart(node_);
  }
  std::function<void(sim::Node&)> restart;

 private:
  sim::Node& node_;
  std::vector<std::string>& log_;
  bool echo_;
};

/// A simulation, its nodes by name, and one shared log.
struct World {
  explicit World(std::uint64_t seed = 1) : sim(seed) {}

  // Declared before `sim` so that they outlive it: destroying the simulation
  // unwinds its processes, whose destructors may still write to the log.
  std::vector<std::string> log;
  std::map<std::string, std::unique_ptr<Listener>> listeners;
  sim::Simulation sim;

  /// The node called `name`, created on first use.
  sim::Node& node(const std::string& name) {
    if (auto id = sim.find_node(name)) return sim.node(*id);
    return sim.add_node(name);
  }
  /// A node whose behaviour logs the messages it receives.
  sim::Node& listener(const std::string& name, bool echo = false) {
    sim::Node& n = node(name);
    auto l = std::make_unique<Listener>(n, log, echo);
    n.set_behaviour(l.get());
    listeners[name] = std::move(l);
    return n;
  }
  /// Appends "<now> <what>" to the log.
  void note(const std::string& what) { log.push_back(sim::format_duration(sim.now()) + " " + what); }
  /// Schedules `note(what)` as an observer at true time `t`.
  void note_at(sim::Time t, std::string what) {
    sim.at(t, [this, what = std::move(what)] { note(what); });
  }
  void run(sim::Time end = sim::kTimeMax) { sim.run_until(end); }
};

}  // namespace simtest
