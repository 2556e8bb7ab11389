#include "models/client/client.hpp"

#include <fmt/format.h>

#include "models/resource/resource.hpp"

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

ClientNode::ClientNode(sim::Node& node, History& h, const Scenario& sc, const ClientSpec& spec,
                       sim::NodeId resource_copy, std::unique_ptr<LockClient> lock)
    : node_(node),
      history_(h),
      spec_(spec),
      resource_(sc.resource),
      service_(sc.lock.service),
      resource_copy_(resource_copy),
      lock_(std::move(lock)) {
  node_.set_behaviour(this);
}

void ClientNode::start() {
  node_.sim().at(spec_.start, [this] {
    start_reached_ = true;
    if (node_.up()) node_.spawn("workload", [this](sim::Process& p) { workload(p); });
  });
}

void ClientNode::on_message(const sim::Message& m) {
  if (lock_) lock_->on_message(m);
}

void ClientNode::on_crash() {
  if (lock_) lock_->on_crash();
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
  node_.spawn("workload", [this](sim::Process& p) { workload(p); });
}

void ClientNode::workload(sim::Process& p) {
  if (lock_) lock_->init(p);
  const WorkloadSpec& w = spec_.workload;
  const bool fencing = spec_.fencing && resource_.kind == ResourceKind::kFenced;
  while (next_iteration_ < w.iterations) {
    const int index = next_iteration_++;
    history_.iterations.push_back(
        IterationRecord{spec_.name, index, node_.sim().now(), std::nullopt, std::nullopt, false, "started"});
    const std::size_t rec = history_.iterations.size() - 1;
    current_iteration_ = rec;
    Lease lease;
    if (lock_) lease = lock_->acquire(p);
    history_.iterations[rec].acquired = node_.sim().now();
    const std::optional<std::int64_t> token = fencing ? lease.token : std::nullopt;

    auto read = sim::make_payload<resource::ReadRequest>();
    if (resource_.fence_reads) read->token = token;
    read->lease_value = lease.value;
    read->iteration = index;
    auto read_reply = p.call(resource_copy_, read, spec_.command_timeout);
    const auto* rr = read_reply ? read_reply->as<resource::OpReply>() : nullptr;
    std::string outcome;
    if (rr == nullptr) {
      outcome = "read timed out";
    } else if (!rr->accepted) {
      outcome = "read rejected: " + rr->reason;
    } else {
      const std::int64_t seen = rr->value;
      const std::int64_t version = rr->version;
      p.sleep(w.work);
      auto write = sim::make_payload<resource::WriteRequest>();
      write->token = token;
      write->read_value = seen;
      write->value = w.kind == WorkloadKind::kSequenceAllocator ? seen + w.block : seen + 1;
      if (resource_.kind == ResourceKind::kCas) write->expected_version = version;
      write->lease_value = lease.value;
      write->iteration = index;
      auto write_reply = p.call(resource_copy_, write, spec_.command_timeout);
      const auto* wr = write_reply ? write_reply->as<resource::OpReply>() : nullptr;
      if (wr == nullptr) {
        outcome = "write timed out";
      } else if (!wr->accepted) {
        outcome = "write rejected: " + wr->reason;
      } else {
        outcome = w.kind == WorkloadKind::kSequenceAllocator
                      ? fmt::format("ok: claimed {}..{}", seen, seen + w.block - 1)
                      : "ok: wrote " + std::to_string(write->value);
        history_.iterations[rec].success = true;
        history_.iterations[rec].done = node_.sim().now();
      }
    }
    history_.iterations[rec].outcome = outcome;
    // "After every iteration — write accepted or rejected — the client
    // releases the lock."
    if (lock_) lock_->release(p);
    current_iteration_.reset();
    if (next_iteration_ < w.iterations) p.sleep(w.think);
  }
}

}  // namespace fencesim::client
