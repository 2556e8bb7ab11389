#include "models/workloads/register_workload.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fencesim::workloads {

std::shared_ptr<const resource::OpReply> RegisterWorkload::ask(sim::Process& p, sim::PayloadPtr req) const {
  std::optional<sim::Message> reply = p.call(setup_.copy, std::move(req), setup_.command_timeout);
  if (!reply || reply->as<resource::OpReply>() == nullptr) return nullptr;
  return std::static_pointer_cast<const resource::OpReply>(reply->body);
}

std::optional<RegisterWorkload::Seen> RegisterWorkload::read(const Iteration& it, std::string& failure) const {
  auto req = sim::make_payload<resource::ReadRequest>();
  if (resource::fences_reads(setup_.resource)) req->token = it.token;
  req->lease_value = it.lease_value;
  req->iteration = it.index;
  const auto reply = ask(it.process, req);
  if (reply == nullptr) {
    failure = "read timed out";
    return std::nullopt;
  }
  if (!reply->accepted) {
    failure = "read rejected: " + reply->reason;
    return std::nullopt;
  }
  return Seen{reply->value, reply->version, reply->tag};
}

IterationResult RegisterWorkload::write(const Iteration& it, const Seen& seen, bool& conflict) const {
  conflict = false;
  auto req = sim::make_payload<resource::WriteRequest>();
  req->token = it.token;
  req->read_value = seen.value;
  req->value = next_value(seen);
  if (resource::compares_versions(setup_.resource)) req->expected_version = seen.version;
  req->tag = tag();
  req->lease_value = it.lease_value;
  req->iteration = it.index;
  const std::int64_t written = req->value;
  const auto reply = ask(it.process, req);
  if (reply == nullptr) return {false, "write timed out"};
  if (!reply->accepted) {
    conflict = resource::compares_versions(setup_.resource);
    return {false, "write rejected: " + reply->reason};
  }
  return {true, success_text(seen, written)};
}

IterationResult RegisterWorkload::attempt(const Iteration& it, bool& conflict) const {
  conflict = false;
  const auto stop = [&](bool before_write) {
    if (auto own = own_stop(it)) return own;
    return before_write ? it.stop_before_write() : it.stop_before_step();
  };
  if (auto why = stop(false)) return {false, std::move(*why)};
  std::string failure;
  const std::optional<Seen> seen = read(it, failure);
  if (!seen) return {false, std::move(failure)};
  if (const std::optional<Duration> work = work_between()) {
    if (auto why = stop(false)) return {false, std::move(*why)};
    it.process.sleep(it.work.value_or(*work));
  }
  if (auto why = stop(true)) return {false, std::move(*why)};
  return write(it, *seen, conflict);
}

// Why jitter and why growth: three identical clients with a fixed latency
// conflict at the same instants, and a fixed wait keeps them there, so the
// same one loses every tie until its retries run out (issue #35). Real OCC
// loops do not wait a fixed interval: client-go's retry.RetryOnConflict
// (k8s.io/client-go v0.26 util/retry/util.go) sleeps wait.Backoff steps with
// Jitter (DefaultRetry: 10 ms, Jitter 0.1; DefaultBackoff: Factor 5), and
// apimachinery's wait.Jitter adds rand.Float64() × factor × duration. The
// equal-jitter form is used here because its wait never drops below half
// the step (no immediate re-collision) and its growth moves a loser out of
// phase with clients whose cycle is shorter than its attempt.
Duration RegisterWorkload::retry_wait(sim::Process& p, int k) {
  // The arithmetic is shared with fencesim-real (models/workloads/arithmetic.hpp);
  // the draw is (step − half) + uniform(0, half) from this client's stream.
  return cas_retry_wait(setup_.spec, setup_.retry_interval, k, [&](Duration lo, Duration hi) {
    if (!retry_rng_) retry_rng_ = p.sim().rng("client/" + setup_.client + "/cas-retry");
    return lo + retry_rng_->uniform(Duration{0}, hi - lo);
  });
}

IterationResult RegisterWorkload::iterate(const Iteration& it) {
  bool conflict = false;
  IterationResult result = attempt(it, conflict);
  int retries = 0;
  while (conflict && retries < setup_.spec.retries) {
    it.process.sleep(retry_wait(it.process, retries));
    ++retries;
    result = attempt(it, conflict);
  }
  result.outcome += retries_suffix(retries);
  return result;
}

}  // namespace fencesim::workloads
