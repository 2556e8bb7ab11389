// tests/models/etcd/raft/cluster.hpp — a Raft cluster in a few lines, so a
// test reads like the story it checks.
//
//   rafttest::Cluster c(3);                    // etcd-0 … etcd-2, etcd-0 leads term 1
//   c.at(1s, [&] { c.isolate({0}); });          // faults are scheduled on true time
//   c.at(1100ms, [&] { c.propose(0, "x"); });
//   c.run_until(5s);
//   EXPECT_EQ(c.raft(0).role(), raft::Role::kFollower);
//   EXPECT_TRUE(c.check().holds);
//   // c.log holds lines such as "2.3s etcd-1 became leader of term 2"
//
// Each member is a `Member` behaviour: a RaftNode (attached through the
// member, as an etcd server would embed it), a state machine that is just the
// list of applied commands (volatile: rebuilt by re-application after a
// restart), and a tiny client protocol — ProposeRequest / ReadRequest — so a
// client process on another node can drive the cluster over the network.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/etcd/raft/raft.hpp"
#include "models/etcd/raft/safety.hpp"
#include "sim/simulation.hpp"

namespace rafttest {

using namespace std::chrono_literals;
namespace raft = fencesim::raft;

struct ProposeRequest final : sim::Payload {
  std::string command;
  std::string describe() const override { return "propose " + command; }
};
struct ProposeReply final : sim::Payload {
  bool ok = false;
  raft::Index index = 0;
  sim::NodeId leader = sim::kNoNode;
  std::string describe() const override { return ok ? "proposed" : "not leader"; }
};
struct ReadRequest final : sim::Payload {
  std::string describe() const override { return "read"; }
};
struct ReadReply final : sim::Payload {
  raft::ReadResult result;
  std::string describe() const override { return result.ok ? "read ok" : "read failed: " + result.error; }
};

struct Options {
  std::uint64_t seed = 1;
  int members = 3;
  sim::Duration election_timeout = 1s;
  sim::Duration heartbeat = 100ms;
  bool pre_vote = true;
  std::size_t max_entries_per_append = 64;
  sim::Duration wal_fsync{0};
  raft::Mutations mutations;
  sim::Duration latency_min = 1ms;
  sim::Duration latency_max = 1ms;
  /// Log every Raft vote reply a member receives ("etcd-2 got MsgVoteResp reject from etcd-0").
  bool log_votes = false;
  bool trace = true;

  // Fluent setters, so a test says what differs from the defaults.
  Options& with_seed(std::uint64_t s) {
    seed = s;
    return *this;
  }
  Options& with_members(int n) {
    members = n;
    return *this;
  }
  Options& with_timeouts(sim::Duration election, sim::Duration hb) {
    election_timeout = election;
    heartbeat = hb;
    return *this;
  }
  Options& without_pre_vote() {
    pre_vote = false;
    return *this;
  }
  Options& with_max_entries_per_append(std::size_t n) {
    max_entries_per_append = n;
    return *this;
  }
  Options& with_wal_fsync(sim::Duration d) {
    wal_fsync = d;
    return *this;
  }
  Options& with_mutations(raft::Mutations m) {
    mutations = m;
    return *this;
  }
  Options& with_latency(sim::Duration lo, sim::Duration hi) {
    latency_min = lo;
    latency_max = hi;
    return *this;
  }
  Options& logging_votes() {
    log_votes = true;
    return *this;
  }
  Options& without_trace() {
    trace = false;
    return *this;
  }
};

class Cluster;

class Member final : public sim::NodeBehaviour {
 public:
  Member(Cluster& c, sim::Node& node, const raft::Config& cfg, raft::RaftHistory& h);
  void on_message(const sim::Message& m) override;
  void on_crash() override { raft.on_crash(); }
  void on_restart() override { raft.on_restart(); }

  Cluster& cluster;
  sim::Node& node;
  raft::RaftNode raft;
  std::vector<std::string> state;  ///< applied commands (the empty entries included as "")
};

class Cluster {
 public:
  explicit Cluster(int members) : Cluster(Options().with_members(members)) {}
  explicit Cluster(Options o) : opts(o), sim(o.seed) {
    sim.trace().set_enabled(o.trace);
    sim.set_network(sim::NetworkConfig{o.latency_min, o.latency_max, 0});
    raft::Config cfg;
    for (int i = 0; i < o.members; ++i) cfg.members.push_back(sim.add_node("etcd-" + std::to_string(i)).id());
    cfg.election_timeout = o.election_timeout;
    cfg.heartbeat = o.heartbeat;
    cfg.pre_vote = o.pre_vote;
    cfg.wal_fsync = o.wal_fsync;
    cfg.max_entries_per_append = o.max_entries_per_append;
    cfg.mutations = o.mutations;
    for (int i = 0; i < o.members; ++i) {
      members.push_back(std::make_unique<Member>(*this, sim.node(cfg.members[i]), cfg, history));
    }
    for (auto& m : members) m->raft.start();
  }

  raft::RaftNode& raft(int i) { return members.at(i)->raft; }
  sim::NodeId id(int i) const { return members.at(i)->node.id(); }
  std::string name(int i) const { return members.at(i)->node.name(); }
  int index_of(sim::NodeId n) const {
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (members[i]->node.id() == n) return static_cast<int>(i);
    }
    return -1;
  }
  std::string now() const { return sim::format_duration(sim.now()); }
  void note(const std::string& what) { log.push_back(now() + " " + what); }

  // --- the script ---------------------------------------------------------
  void at(sim::Time t, std::function<void()> fn) { sim.at(t, std::move(fn), sim::EventClass::kFault); }
  void run_until(sim::Time t) { sim.run_until(t); }

  /// Cuts the listed members off from everybody else; returns the partition.
  std::uint64_t isolate(std::vector<int> who, bool one_way = false) {
    sim::Partition p;
    for (int i : who) p.isolate.push_back(id(i));
    p.one_way = one_way;
    return sim.add_partition(std::move(p));
  }
  std::uint64_t split(std::vector<std::vector<int>> groups) {
    sim::Partition p;
    for (const auto& g : groups) {
      p.groups.emplace_back();
      for (int i : g) p.groups.back().push_back(id(i));
    }
    return sim.add_partition(std::move(p));
  }
  void heal() { sim.heal(); }
  void crash(int i) { sim.crash(id(i)); }
  void restart(int i) { sim.restart(id(i)); }
  std::optional<raft::Index> propose(int i, std::string cmd) { return raft(i).propose(std::move(cmd)); }

  /// The member that is leader of the highest term right now, or -1.
  int leader() const {
    int best = -1;
    raft::Term best_term = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const raft::RaftNode& r = members[i]->raft;
      if (members[i]->node.up() && r.is_leader() && r.term() >= best_term) {
        best = static_cast<int>(i);
        best_term = r.term();
      }
    }
    return best;
  }
  /// Members that were ever leader of `term`, from the history.
  std::vector<std::string> leaders_of(raft::Term term) const {
    std::vector<std::string> out;
    for (const raft::RaftEvent& e : history.events) {
      if (e.kind == raft::EventKind::kBecameLeader && e.term == term) out.push_back(e.member);
    }
    return out;
  }
  bool ever_applied(const std::string& command) const {
    for (const raft::RaftEvent& e : history.events) {
      if (e.kind == raft::EventKind::kApply && e.command == command) return true;
    }
    return false;
  }
  raft::SafetyVerdict check() const { return raft::check_raft_safety(history); }
  /// Step-down events of member `i`, as "time:why".
  std::vector<std::string> step_downs(int i) const {
    std::vector<std::string> out;
    for (const raft::RaftEvent& e : history.events) {
      if (e.kind == raft::EventKind::kSteppedDown && e.member == name(i)) {
        out.push_back(sim::format_duration(e.at) + ":" + e.detail);
      }
    }
    return out;
  }
  bool log_has(const std::string& line) const {
    for (const std::string& l : log) {
      if (l.find(line) != std::string::npos) return true;
    }
    return false;
  }

  /// Called when a member becomes leader (after the note in `log`).
  std::function<void(int member, raft::Term term)> on_leader;

  Options opts;
  sim::Simulation sim;
  raft::RaftHistory history;
  std::vector<std::unique_ptr<Member>> members;
  std::vector<std::string> log;
};

inline Member::Member(Cluster& c, sim::Node& n, const raft::Config& cfg, raft::RaftHistory& h)
    : cluster(c), node(n), raft(n, cfg, &h, /*attach=*/false) {
  node.set_behaviour(this);
  raft.set_callbacks(raft::Callbacks{
      .apply = [this](raft::Index, raft::Term, const std::string& cmd) { state.push_back(cmd); },
      .became_leader =
          [this](raft::Term t) {
            cluster.note(node.name() + " became leader of term " + std::to_string(t));
            if (cluster.on_leader) cluster.on_leader(cluster.index_of(node.id()), t);
          },
      .stepped_down =
          [this](raft::Term t) { cluster.note(node.name() + " stepped down from term " + std::to_string(t)); },
      .restarted = [this] { state.clear(); },
  });
}

inline void Member::on_message(const sim::Message& m) {
  if (const auto* rm = m.as<raft::RaftMessage>()) {
    if (cluster.opts.log_votes &&
        (rm->type == raft::MessageType::kVoteResp || rm->type == raft::MessageType::kPreVoteResp)) {
      cluster.note(node.name() + " got " + raft::message_type_name(rm->type) + (rm->reject ? " reject" : " grant") +
                   " from " + node.sim().node(m.from).name());
    }
    raft.step(m);
    return;
  }
  if (const auto* p = m.as<ProposeRequest>()) {
    auto r = std::make_shared<ProposeReply>();
    if (auto idx = raft.propose(p->command)) {
      r->ok = true;
      r->index = *idx;
    }
    r->leader = raft.leader();
    node.reply(m, r);
    return;
  }
  if (m.as<ReadRequest>() != nullptr) {
    const sim::Message request = m;
    raft.read_index([this, request](const raft::ReadResult& res) {
      auto r = std::make_shared<ReadReply>();
      r->result = res;
      node.reply(request, r);
    });
  }
}

}  // namespace rafttest
