// models/client/policy.hpp — the client's ClientPolicy (models/policy.hpp)
// and how the lock clients and the workload call it.
//
// BuiltinClientPolicy is the knobs of docs/FORMAT.md "Clients" and "Client
// policies" as a ClientPolicy (the rules: models/client/policies.hpp):
//   renew, renew_interval, renew_clock  next_renewal = the last reply (the
//       grant's time before any) + renew_interval, on renew_clock
//   check_lease_before_write, on_lease_loss  before_write / stop_before_step
//   lease_loss_after                    lease_loss_after()
//   on_renewal_failure                  always kRetry: every client library
//       modelled retries a renewal that got no answer.
// ClientPolicyRunner holds the client's policy (ClientSpec::policy, or the
// built-in one) with its PolicyHost (clocks, stream "policy/<client>"), and
// makes each call a policy call (models/policy_runtime.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "models/policy.hpp"
#include "models/policy_runtime.hpp"
#include "models/scenario.hpp"

namespace fencesim::client {

class BuiltinClientPolicy final : public ClientPolicy {
 public:
  explicit BuiltinClientPolicy(const ClientSpec& spec);
  std::string name() const override { return "built-in"; }
  bool renews() const override { return renew_; }
  sim::ClockKind renew_clock() const override { return clock_; }
  sim::Time next_renewal(const PolicyContext& ctx, const RenewalFacts& f) const override;
  std::optional<std::string> stop_before_step(const PolicyContext& ctx, const LeaseFacts& f) const override;
  WriteDecision before_write(const PolicyContext& ctx, const LeaseFacts& f) const override;
  std::optional<sim::Duration> lease_loss_after() const override { return loss_after_; }

 private:
  bool renew_;
  sim::Duration interval_;
  sim::ClockKind clock_;
  std::optional<sim::Duration> margin_;
  bool abort_;
  std::optional<sim::Duration> loss_after_;
};

class ClientPolicyRunner {
 public:
  ClientPolicyRunner(const sim::Node& node, const ClientSpec& spec);
  const ClientPolicy& policy() const { return *policy_; }
  const std::string& name() const { return name_; }
  bool custom() const { return custom_; }
  /// Fixed for the run: asked once, when the client is built.
  bool renews() const { return renews_; }
  sim::ClockKind renew_clock() const { return clock_; }
  const std::optional<sim::Duration>& lease_loss_after() const { return loss_after_; }

  sim::Time next_renewal(const RenewalFacts& f);
  RenewalFailure on_renewal_failure(const LeaseFacts& f, int failures);
  std::optional<std::string> stop_before_step(const LeaseFacts& f);
  WriteDecision before_write(const LeaseFacts& f);

 private:
  std::shared_ptr<const ClientPolicy> policy_;
  std::string name_;
  bool custom_;
  bool renews_;
  sim::ClockKind clock_;
  std::optional<sim::Duration> loss_after_;
  policy_detail::PolicyHost host_;
};

}  // namespace fencesim::client
