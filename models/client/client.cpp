#include "models/client/client.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "models/resource/resource.hpp"
#include "models/validate.hpp"
#include "sim/time.hpp"

namespace fencesim::client {

// ========================================================= LockClientBase ==

LockClientBase::LockClientBase(sim::Node& node, History& h, const ClientSpec& spec, const LockSpec& lock)
    : node_(node),
      history_(h),
      spec_(spec),
      lock_(lock),
      rng_(node.sim().rng("client/" + spec.name)),
      policy_(node, spec_) {
  // The client's own copy of the lock spec carries the TTL it asks for
  // (clients[].ttl, else lock.ttl): every SET PX, renewal, Redlock validity
  // and etcd lease grant of this client uses it.
  lock_.ttl = client_ttl(lock, spec);
}

void LockClientBase::sleep_until_renewal(sim::Process& p, sim::Time granted, sim::Time last, int renewals) {
  p.sleep_until(policy_.renew_clock(), policy_.next_renewal(RenewalFacts{lock_.ttl, granted, last, renewals}));
}

bool LockClientBase::renewal_failed(sim::Time first_sent, int failures) {
  const LeaseState st = lease_state();
  const LeaseFacts f{lock_.ttl, st.believes, st.lost, st.lost ? st.lost_reason : std::string(), st.confirmed_sent};
  if (policy_.on_renewal_failure(f, failures) == RenewalFailure::kRetry) return false;
  history_.renewals.push_back(RenewalRecord{spec_.name, first_sent, node_.sim().now(), false});
  lease_loss_deadline("renewal failed (" + policy_.name() + ")");
  return true;
}

void LockClientBase::begin_belief(const Lease& l) {
  end_belief("superseded");
  lost_ = false;
  lost_reason_.clear();
  belief_ = history_.begin_belief(node_.sim().now(), spec_.name, l.value, l.token, l.message_id);
}

void LockClientBase::lose_lease(const std::string& reason) {
  ++history_.lease_losses;
  if (belief_) {
    lost_ = true;
    lost_reason_ = reason;
  }
  end_belief(reason);
}

void LockClientBase::confirmed(sim::Time sent, bool arm_lease_loss) {
  confirmed_sent_ = sent;
  if (!policy_.lease_loss_after() || !arm_lease_loss) return;
  // "No acquire or renewal has succeeded for that long on its monotonic
  // clock", counted from the send of the request that succeeded last.
  node_.cancel(loss_timer_);
  const std::uint64_t gen = ++loss_gen_;
  const Duration after = *policy_.lease_loss_after();
  loss_timer_ = node_.at_clock(sim::ClockKind::kMonotonic, sent + after, [this, gen, after] {
    if (gen != loss_gen_) return;
    loss_timer_ = sim::TimerId{};
    lease_loss_deadline(
        fmt::format("no acquire or renewal succeeded for {} (lease_loss_after)", sim::format_duration(after)));
  });
}

void LockClientBase::arm_lease_loss_at(sim::Time reading, std::string reason) {
  if (!policy_.lease_loss_after()) return;
  node_.cancel(loss_timer_);
  const std::uint64_t gen = ++loss_gen_;
  loss_timer_ = node_.at_clock(sim::ClockKind::kMonotonic, reading, [this, gen, reason = std::move(reason)] {
    if (gen != loss_gen_) return;
    loss_timer_ = sim::TimerId{};
    lease_loss_deadline(reason);
  });
}

void LockClientBase::disarm_lease_loss() {
  if (!policy_.lease_loss_after()) return;
  ++loss_gen_;
  node_.cancel(loss_timer_);
  loss_timer_ = sim::TimerId{};
}

void LockClientBase::lease_loss_deadline(const std::string& reason) {
  if (!belief_) return;
  ++renew_gen_;  // the renewal stops: the client has given the lease up
  lose_lease(reason);
}

LeaseState LockClientBase::lease_state() const {
  return LeaseState{belief_.has_value(), lost_, lost_reason_, confirmed_sent_};
}

void LockClientBase::end_belief(const std::string& reason) {
  if (!belief_) return;
  history_.end_belief(*belief_, node_.sim().now(), reason);
  belief_.reset();
}

void LockClientBase::on_crash() {
  ++renew_gen_;
  end_belief("crash");
  lost_ = false;
  lost_reason_.clear();
  confirmed_sent_.reset();
  if (policy_.lease_loss_after()) {
    ++loss_gen_;
    node_.cancel(loss_timer_);
    loss_timer_ = sim::TimerId{};
  }
}

std::string LockClientBase::fresh_value() {
  // "{:016x}" by hand: ZooKeeper's clients draw two per lock node (its
  // uuid), and fmt's formatting was ~2 % of a ZooKeeper run.
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t v = rng_.next();
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = kHex[v & 0xF];
  return out;
}

// ============================================================= ClientNode ==

namespace {
workloads::WorkloadSetup setup_of(const Scenario& sc, const ClientSpec& spec, sim::NodeId resource_copy) {
  return workloads::WorkloadSetup{spec.name,     spec.workload,        sc.resource,
                                  resource_copy, spec.command_timeout, spec.retry_interval};
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
      service_(sc.lock.service()),
      resource_copy_(resource_copy),
      lock_(std::move(lock)),
      workload_(std::move(workload)),
      workload_rng_(node.sim().rng("client/" + spec.name + "/workload")) {
  if (!workload_) throw std::invalid_argument("ClientNode " + spec.name + ": no workload");
  if (lock_) {
    ClientPolicyRunner* runner = lock_->policy_runner();
    if (runner == nullptr) runner = (own_policy_ = std::make_unique<ClientPolicyRunner>(node_, spec_)).get();
    policies_ = std::make_unique<ClientPolicies>(client_ttl(sc.lock, spec_), *lock_, *runner);
  }
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
    // A leader that still holds the lock writes again `work` later.
    if (next_iteration_ < w.iterations) p.sleep(keeping_lock() ? draw(w.work, w.work_max) : draw(w.think, w.think_max));
  }
}

bool ClientNode::keeping_lock() const {
  if (!workload_->keeps_lock()) return false;
  return !lock_ || lock_->lease_state().believes;
}

void ClientNode::iterate(sim::Process& p, int index) {
  history_.iterations.push_back(IterationRecord{spec_.name, index, node_.sim().now(), std::nullopt, std::nullopt, false,
                                                "started", std::nullopt});
  const std::size_t rec = history_.iterations.size() - 1;
  current_iteration_ = rec;
  // A leader that still believes it holds the lock goes on under it.
  if (lock_ && !keeping_lock()) {
    history_.iterations[rec].acquire_sent = node_.sim().now();
    lease_ = lock_->acquire(p);
  }
  if (const std::string error = lock_ ? lock_->acquire_error() : std::string(); !error.empty()) {
    // A permanent error of the design (CROSSSLOT), or a library that gave
    // up: nothing was granted, so there is nothing to write under and
    // nothing to release.
    if (lock_->acquire_error_permanent()) {
      ++history_.service_errors[error];
      history_.iterations[rec].outcome = "acquire failed: " + error;
    } else {
      history_.iterations[rec].outcome = "acquire gave up: " + error;
    }
    lease_ = Lease{};
    current_iteration_.reset();
    return;
  }
  history_.iterations[rec].acquired = node_.sim().now();
  const bool fencing = spec_.fencing && resource::takes_tokens(resource_);
  workloads::IterationResult result = workload_->iterate(
      workloads::Iteration{p, index, lease_.value, fencing ? lease_.token : std::nullopt, lease_.message_id,
                           policies_.get(), draw(spec_.workload.work, spec_.workload.work_max)});
  IterationRecord& it = history_.iterations[rec];
  if (result.success) {
    it.success = true;
    it.done = node_.sim().now();
  }
  it.outcome = std::move(result.outcome);
  // "After every iteration — write accepted or rejected — the client
  // releases the lock." (The queue deletes only a message it is done with.)
  // A leader keeps it while it believes it holds it, until its last write.
  const bool last = next_iteration_ >= spec_.workload.iterations;
  if (lock_ && (last || !keeping_lock())) lock_->finish(p, result.success);
  current_iteration_.reset();
}

}  // namespace fencesim::client
