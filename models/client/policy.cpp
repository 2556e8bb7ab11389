#include "models/client/policy.hpp"

#include <fmt/format.h>

#include "sim/time.hpp"

namespace fencesim::client {

BuiltinClientPolicy::BuiltinClientPolicy(const ClientSpec& spec)
    : renew_(spec.renew),
      interval_(spec.renew_interval),
      clock_(spec.renew_clock),
      margin_(spec.check_lease_before_write),
      abort_(spec.on_lease_loss == LeaseLossPolicy::kAbort),
      loss_after_(spec.lease_loss_after) {}

sim::Time BuiltinClientPolicy::next_renewal(const PolicyContext&, const RenewalFacts& f) const {
  // "A timer on a clock is a deadline on that clock": a step of the renew
  // clock moves the renewal.
  return f.last_reply + interval_;
}

std::optional<std::string> BuiltinClientPolicy::stop_before_step(const PolicyContext&, const LeaseFacts& f) const {
  if (!abort_ || !f.lost) return std::nullopt;
  return "stopped: the lease was lost (" + f.lost_reason + ")";
}

WriteDecision BuiltinClientPolicy::before_write(const PolicyContext& ctx, const LeaseFacts& f) const {
  if (!margin_) return {};
  const sim::Duration margin = *margin_;
  const sim::Duration limit = f.ttl - margin;
  if (!f.confirmed_sent_monotonic) {
    return {WriteAction::kAbandon, "abandoned before the write: the lease was never confirmed", {}};
  }
  const sim::Duration since = ctx.monotonic() - *f.confirmed_sent_monotonic;
  if (since < limit) return {};
  return {WriteAction::kAbandon,
          fmt::format("abandoned before the write: {} since the last confirmed grant or renewal was sent, not below "
                      "TTL {} - margin {}",
                      sim::format_duration(since), sim::format_duration(f.ttl), sim::format_duration(margin)),
          {}};
}

// ------------------------------------------------------------ the runner --

namespace {
void hash_lease(Fingerprint& fp, const LeaseFacts& f) {
  fp.number(f.ttl.count());
  fp.number(f.believes);
  fp.number(f.lost);
  fp.text(f.lost_reason);
  fp.maybe(f.confirmed_sent_monotonic);
}
}  // namespace

ClientPolicyRunner::ClientPolicyRunner(const sim::Node& node, const ClientSpec& spec)
    : policy_(spec.policy ? spec.policy : std::make_shared<BuiltinClientPolicy>(spec)),
      name_(policy_->name()),
      custom_(spec.policy != nullptr),
      renews_(policy_->renews()),
      clock_(policy_->renew_clock()),
      loss_after_(policy_->lease_loss_after()),
      host_(node, "policy/" + spec.name) {}

sim::Time ClientPolicyRunner::next_renewal(const RenewalFacts& f) {
  return policy_detail::call_policy(
      host_, name_, "next_renewal", [&](const PolicyContext& ctx) { return policy_->next_renewal(ctx, f); },
      [&](Fingerprint& fp) {
        fp.number(f.ttl.count());
        fp.time(f.granted);
        fp.time(f.last_reply);
        fp.number(f.renewals);
        fp.time(host_.clock(clock_));
      },
      [](Fingerprint& fp, sim::Time t) { fp.time(t); });
}

RenewalFailure ClientPolicyRunner::on_renewal_failure(const LeaseFacts& f, int failures) {
  return policy_detail::call_policy(
      host_, name_, "on_renewal_failure",
      [&](const PolicyContext& ctx) { return policy_->on_renewal_failure(ctx, f, failures); },
      [&](Fingerprint& fp) {
        hash_lease(fp, f);
        fp.number(failures);
      },
      [](Fingerprint& fp, RenewalFailure a) { fp.number(static_cast<int>(a)); });
}

std::optional<std::string> ClientPolicyRunner::stop_before_step(const LeaseFacts& f) {
  return policy_detail::call_policy(
      host_, name_, "stop_before_step", [&](const PolicyContext& ctx) { return policy_->stop_before_step(ctx, f); },
      [&](Fingerprint& fp) { hash_lease(fp, f); },
      [](Fingerprint& fp, const std::optional<std::string>& a) {
        fp.number(a.has_value());
        if (a) fp.text(*a);
      });
}

WriteDecision ClientPolicyRunner::before_write(const LeaseFacts& f) {
  WriteDecision d = policy_detail::call_policy(
      host_, name_, "before_write", [&](const PolicyContext& ctx) { return policy_->before_write(ctx, f); },
      [&](Fingerprint& fp) {
        hash_lease(fp, f);
        fp.time(host_.clock(sim::ClockKind::kMonotonic));
      },
      [](Fingerprint& fp, const WriteDecision& a) {
        fp.number(static_cast<int>(a.action));
        fp.text(a.reason);
        fp.number(a.recheck_after.count());
      });
  if (d.action == WriteAction::kRecheck && d.recheck_after <= sim::Duration{0}) {
    policy_detail::misuse("policy \"" + name_ + "\" asked to re-check before a write after " +
                          sim::format_duration(d.recheck_after) + ": recheck_after must be greater than zero");
  }
  if (d.action == WriteAction::kAbandon && d.reason.empty()) d.reason = "abandoned before the write (" + name_ + ")";
  return d;
}

}  // namespace fencesim::client
