// models/program/program_client.hpp — a client whose behaviour is the
// user's program (clients[].program), run in lockstep with simulated time
// over the protocol of docs/PROTOCOL.md.
//
// Shape: one ProgramClient behaviour per program client's node. It starts
// the program (program::launch, a warm process when one is free) when the
// client's `start` comes, delivers `init`, and from then on turns what
// reaches the node into deliveries — a request's answer, a timer, the end
// of a request's timeout — and the program's requests into what the node
// does: a message on the simulated network to a service node or a resource
// copy, a node timer, a record in the History (beliefs, iterations, notes).
//
// Determinism: everything the program hears is a delivery made by node code
// at a simulated instant, and everything it says before its `yield` is
// acted on at that same instant, in the order it said it. So a program that
// is deterministic given its inputs makes the run a pure function of the
// scenario and seed, like a built-in client (the program's real-time limit
// only decides whether the run stops with a ProgramError).
//
// Faults: a pause freezes the node (deliveries wait: node timers and
// messages are held by the engine); a crash kills the process, ends the
// open belief ("crash") and the open iteration ("crashed"), and forgets
// its requests and timers; the restart starts a new process whose `init`
// says how many restarts there were. Clock faults show in every delivery's
// `time`.
//
// Errors: ProgramError (models/program/errors.hpp) out of the simulation's
// event loop: the run stops and no report is written.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/history.hpp"
#include "models/program/channel.hpp"
#include "models/program/codec.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"

namespace fencesim::program {

/// Where a program client's requests may go, by name.
struct ProgramTargets {
  std::vector<std::string> service_nodes;  ///< the lock service's nodes, in directory order
  std::vector<std::string> resources;      ///< the resource copies
  /// The scenario's groups but "clients", by name (init's "nodes").
  std::vector<NodeGroup> groups;
};

class ProgramClient final : public sim::NodeBehaviour {
 public:
  /// `index` is the client's position in the expanded client list;
  /// `label` names it in errors ("clients[0] (A)"); `copy` is its resource
  /// copy's node. `spec.program` must be set.
  ProgramClient(sim::Node& node, History& h, const Scenario& s, const ClientSpec& spec, std::size_t index,
                std::string label, sim::NodeId copy, ProgramTargets targets);
  ~ProgramClient() override;

  /// Schedules the program's start at `spec.start`.
  void start();
  /// The run is over: delivers `end` (a reusable program goes back to the
  /// pool) and keeps its stderr. Call once, before the world is torn down.
  void finish();
  /// What the program wrote to stderr during the run (each process's last
  /// 16 KiB; a restart's process follows its predecessor's).
  const std::string& output() const { return output_; }
  const std::string& name() const { return spec_.name; }

  void on_message(const sim::Message& m) override;
  bool receives_replies() const override { return true; }
  void on_crash() override;
  void on_restart() override;

 private:
  struct Pending {
    std::uint64_t message = 0;  ///< the message id sent
    const RequestKind* kind = nullptr;
    sim::TimerId timeout{};
    bool has_timeout = false;
  };

  void launch_program();
  json init_message() const;
  /// Writes `msg` (with the node's clocks) and acts on the program's lines
  /// up to its yield.
  void deliver(json msg);
  /// One line of the program; true for its yield.
  bool handle(const std::string& line);
  void handle_request(const RequestKind& kind, const json& j, std::int64_t id);
  /// A pushed message: the delivery of the request it answers, if any.
  void on_push(const sim::Message& m);
  void handle_timer(const json& j, std::int64_t id);
  void handle_cancel(const json& j);
  void handle_belief(const std::string& type, const json& j);
  void handle_iteration(const json& j);
  std::int64_t fresh_id(const json& j);
  sim::NodeId target_node(const RequestKind& kind, const json& j) const;
  json time_json() const;
  [[noreturn]] void protocol_error(const std::string& what) const;
  /// The process is gone (crash or end): its stderr kept, requests forgotten.
  void drop_process();

  sim::Node& node_;
  History& history_;
  const Scenario& scenario_;
  ClientSpec spec_;
  std::size_t index_;
  std::string label_;
  sim::NodeId copy_;
  ProgramTargets targets_;

  std::unique_ptr<Channel> channel_;
  bool start_reached_ = false;  ///< the true time `spec.start` has come
  bool exited_ = false;         ///< the program exited with status 0 (deliveries are dropped)
  int restarts_ = 0;
  std::set<std::int64_t> used_ids_;               ///< ids of this process since its init
  std::map<std::int64_t, Pending> pending_;       ///< by the program's id
  std::map<std::uint64_t, std::int64_t> by_msg_;  ///< message id -> the program's id
  std::map<std::int64_t, sim::TimerId> timers_;   ///< by the program's id
  struct Push {
    const RequestKind* kind = nullptr;
    sim::NodeId to = sim::kNoNode;
  };
  std::map<std::int64_t, Push> pushes_;  ///< requests answered by pushed messages (etcd watches), by id
  std::optional<std::size_t> belief_;
  std::optional<std::size_t> iteration_;  ///< the open iteration's record
  int iterations_ = 0;
  std::uint64_t generation_ = 0;  ///< bumps when the process goes: stale callbacks do nothing
  std::string current_line_;      ///< the line being handled, for error messages
  std::string output_;
};

}  // namespace fencesim::program
