// models/policy_runtime.hpp — how the models call a policy (models/policy.hpp):
// the debug checks and the self-check's record of every call.
//
//   PolicyHost   one per node that calls policies (a client, a resource
//                copy): its clocks and its named stream, created at the
//                first draw ("policy/<client>", "check/<copy>").
//   call_policy  one call: opens a CallScope (refused while another call
//                runs on this thread), hands the policy a PolicyContext
//                valid only inside it, and, while a RunScope records, adds
//                the call (policy, what, node, time, a hash of the
//                arguments and one of the answer) to the run's record.
//   RunScope     one per run (run_scenario): the record and the first
//                misuse, which run_scenario rethrows as PolicyMisuse (a
//                misuse inside a process would otherwise surface as a
//                sim::ModelBug).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/fingerprint.hpp"
#include "models/policy.hpp"
#include "sim/node.hpp"
#include "sim/simulation.hpp"

namespace fencesim::policy_detail {

struct CallRecord {
  std::string policy;
  const char* what = "";
  std::string node;
  sim::Time at{0};
  std::uint64_t in = 0, out = 0;
};

struct RunState {
  bool record = false;
  std::vector<CallRecord> calls;
  std::string misuse;  ///< the first PolicyMisuse of the run; empty: none
};

/// The run in progress on this thread (nested runs restore the outer one).
class RunScope {
 public:
  explicit RunScope(bool record);
  ~RunScope();
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;
  RunState& state() { return state_; }

 private:
  RunState state_;
  RunState* outer_;
};

/// Records `msg` as the run's misuse (the first one wins) and throws it.
[[noreturn]] void misuse(const std::string& msg);
/// True inside a policy call on this thread.
bool in_call();

class CallScope {
 public:
  CallScope(const std::string& policy, const char* what);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  std::uint64_t serial() const { return serial_; }
  /// The run records calls (RunOptions::self_check).
  static bool recording();
  static void add(CallRecord r);

 private:
  std::uint64_t serial_;
  std::uint64_t outer_;
  const std::string* outer_name_;
};

class PolicyHost final : public PolicyContext::Source {
 public:
  PolicyHost(const sim::Node& node, std::string stream) : node_(node), stream_(std::move(stream)) {}
  sim::Time clock(sim::ClockKind k) const override { return node_.clock(k); }
  sim::Rng& rng() override {
    if (!rng_) rng_ = node_.sim().rng(stream_);
    return *rng_;
  }
  const std::string& node() const override { return node_.name(); }
  sim::Time now() const { return node_.sim().now(); }

 private:
  const sim::Node& node_;
  std::string stream_;
  std::optional<sim::Rng> rng_;
};

/// Calls `f(ctx)` as one policy call. `in(fp)` and `out(fp, answer)` hash
/// the arguments and the answer; they run only while the run records.
template <class F, class In, class Out>
auto call_policy(PolicyHost& host, const std::string& policy, const char* what, F&& f, In&& in, Out&& out) {
  CallScope scope(policy, what);
  const PolicyContext ctx(host, scope.serial());
  if (!CallScope::recording()) return f(ctx);
  // The arguments are hashed before the call: a check changes its state.
  Fingerprint fi;
  in(fi);
  auto answer = f(ctx);
  Fingerprint fo;
  out(fo, answer);
  CallScope::add(CallRecord{policy, what, host.node(), host.now(), fi.value(), fo.value()});
  return answer;
}

}  // namespace fencesim::policy_detail
