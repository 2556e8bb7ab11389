#include "models/client/client.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace fencesim::client {

// ========================================================= LockClientBase ==

LockClientBase::LockClientBase(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock)
    : node_(node), history_(h), spec_(spec), lock_(lock), rng_(node.sim().rng("client/" + spec.name)) {}

void LockClientBase::begin_belief(const Lease& l) {
  end_belief("superseded");
  belief_ = history_.begin_belief(node_.sim().now(), spec_.name, l.value, l.token);
}

void LockClientBase::end_belief(const std::string& reason) {
  if (!belief_) return;
  history_.end_belief(*belief_, node_.sim().now(), reason);
  belief_.reset();
}

void LockClientBase::on_crash() {
  ++renew_gen_;
  end_belief("crash");
}

std::string LockClientBase::fresh_value() { return fmt::format("{:016x}", rng_.next()); }

// ============================================================= ClientNode ==

namespace {
workloads::WorkloadSetup setup_of(const Scenario& sc, const ClientSpec& spec, sim::NodeId resource_copy) {
  return workloads::WorkloadSetup{spec.name, spec.workload, sc.resource, resource_copy, spec.command_timeout};
}
}  // namespace

ClientNode::ClientNode(sim::Node& node, History& h, const Scenario& sc, const ClientSpec& spec,
                       sim::NodeId resource_copy, std::unique_ptr<LockClient> lock)
    : ClientNode(node, h, sc, spec, resource_copy, std::move(lock),
                 workloads::make_workload(setup_of(sc, spec, resource_copy))) {}

ClientNode::ClientNode(sim::Node& node, History& h, const Scenario& sc, const ClientSpec& spec,
                       sim::NodeId resource_copy, std::unique_ptr<LockClient> lock,
                       std::unique_ptr<workloads::Workload> workload)
    : node_(node),
      history_(h),
      spec_(spec),
      resource_(sc.resource),
      service_(sc.lock.service),
      resource_copy_(resource_copy),
      lock_(std::move(lock)),
      workload_(std::move(workload)),
      workload_rng_(node.sim().rng("client/" + spec.name + "/workload")) {
  if (!workload_) throw std::invalid_argument("ClientNode " + spec.name + ": no workload");
  node_.set_behaviour(this);
}

Duration ClientNode::draw(Duration lo, const std::optional<Duration>& hi) {
  // A fixed value draws nothing, so a file without ranges keeps its stream.
  return hi && *hi > lo ? workload_rng_.uniform(lo, *hi) : lo;
}

void ClientNode::start() {
  node_.sim().at(spec_.start, [this] {
    start_reached_ = true;
    if (node_.up()) node_.spawn("workload", [this](sim::Process& p) { run(p); });
  });
}

void ClientNode::on_message(const sim::Message& m) {
  if (lock_) lock_->on_message(m);
}

void ClientNode::on_crash() {
  if (lock_) lock_->on_crash();
  workload_->on_crash();
  if (current_iteration_) {
    IterationRecord& it = history_.iterations[*current_iteration_];
    if (!it.success) it.outcome = "crashed";
    current_iteration_.reset();
  }
}

void ClientNode::on_restart() {
  // "If it restarts, it continues its remaining iterations as a new session
  // with new values."
  // Before the start, start() will spawn it. Not `now < start`: a restart
  // is a fault, and faults run before the other events of their instant, so
  // a restart exactly at the start time would start a second workload
  // beside the one start() is about to spawn.
  if (!start_reached_) return;
  node_.spawn("workload", [this](sim::Process& p) { run(p); });
}

void ClientNode::run(sim::Process& p) {
  if (lock_) lock_->init(p);
  const WorkloadSpec& w = spec_.workload;
  while (next_iteration_ < w.iterations) {
    iterate(p, next_iteration_++);
    if (next_iteration_ < w.iterations) p.sleep(draw(w.think, w.think_max));
  }
}

void ClientNode::iterate(sim::Process& p, int index) {
  history_.iterations.push_back(
      IterationRecord{spec_.name, index, node_.sim().now(), std::nullopt, std::nullopt, false, "started"});
  const std::size_t rec = history_.iterations.size() - 1;
  current_iteration_ = rec;
  client::Lease lease;
  if (lock_) lease = lock_->acquire(p);
  history_.iterations[rec].acquired = node_.sim().now();
  const bool fencing = spec_.fencing && resource_.kind == ResourceKind::kFenced;
  workloads::IterationResult result = workload_->iterate(workloads::Iteration{
      p, index, lease.value, fencing ? lease.token : std::nullopt, draw(spec_.workload.work, spec_.workload.work_max)});
  IterationRecord& it = history_.iterations[rec];
  if (result.success) {
    it.success = true;
    it.done = node_.sim().now();
  }
  it.outcome = std::move(result.outcome);
  // "After every iteration — write accepted or rejected — the client
  // releases the lock."
  if (lock_) lock_->release(p);
  current_iteration_.reset();
}

}  // namespace fencesim::client
