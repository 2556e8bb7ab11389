// models/policy.cpp — PolicyContext and the debug checks of models/policy.hpp.
#include "models/policy.hpp"

#include "models/policy_runtime.hpp"

namespace fencesim {

namespace policy_detail {
namespace {
// Per thread: a run is single-threaded (a sweep's workers each run their
// own), so this is the state of the run on this thread.
thread_local RunState* tl_run = nullptr;
thread_local std::uint64_t tl_active = 0;  ///< the serial of the call running; 0: none
thread_local const std::string* tl_active_name = nullptr;
thread_local std::uint64_t tl_next = 0;
}  // namespace

RunScope::RunScope(bool record) : outer_(tl_run) {
  if (tl_active != 0) {
    throw PolicyMisuse("a scenario was run from inside a call to policy \"" + *tl_active_name +
                       "\": a policy must not run scenarios or call back into fencesim");
  }
  state_.record = record;
  tl_run = &state_;
}
RunScope::~RunScope() { tl_run = outer_; }

void misuse(const std::string& msg) {
  if (tl_run != nullptr && tl_run->misuse.empty()) tl_run->misuse = msg;
  throw PolicyMisuse(msg);
}

bool in_call() { return tl_active != 0; }

CallScope::CallScope(const std::string& policy, const char* what) : outer_(tl_active), outer_name_(tl_active_name) {
  if (tl_active != 0) {
    misuse("policy \"" + policy + "\" (" + what + ") was called while a call to policy \"" + *tl_active_name +
           "\" was running: policies must not call back into the run (re-entrancy)");
  }
  serial_ = ++tl_next;
  tl_active = serial_;
  tl_active_name = &policy;
}
CallScope::~CallScope() {
  tl_active = outer_;
  tl_active_name = outer_name_;
}

bool CallScope::recording() { return tl_run != nullptr && tl_run->record; }
void CallScope::add(CallRecord r) { tl_run->calls.push_back(std::move(r)); }

}  // namespace policy_detail

void PolicyContext::check() const {
  if (policy_detail::tl_active != serial_) {
    policy_detail::misuse(
        "a PolicyContext was used after the policy call it was given to returned (kept in a member or a global, "
        "or handed to another run or thread): a context is valid only during its call");
  }
}

sim::Time PolicyContext::clock(sim::ClockKind k) const {
  check();
  return src_.clock(k);
}
sim::Time PolicyContext::monotonic() const { return clock(sim::ClockKind::kMonotonic); }
sim::Time PolicyContext::wall() const { return clock(sim::ClockKind::kWall); }
sim::Rng& PolicyContext::rng() const {
  check();
  return src_.rng();
}
const std::string& PolicyContext::node() const {
  check();
  return src_.node();
}

}  // namespace fencesim
