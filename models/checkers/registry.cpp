#include "models/checkers/registry.hpp"

#include <algorithm>
#include <set>

#include "models/checkers/checkers.hpp"
#include "models/lock_service.hpp"
#include "sim/simulation.hpp"

namespace fencesim {

namespace {

const ServiceDescriptor& service_of(const Scenario& s) { return service_descriptor(s.lock.service()); }

bool takes_lock(const Scenario& s) { return service_of(s).takes_lock(); }
bool always(const Scenario&) { return true; }
bool is_queue(const Scenario& s) { return service_descriptor(s.lock.service()).per_message(); }
bool not_queue(const Scenario& s) { return !is_queue(s); }
bool hands_out_tokens(const Scenario& s) { return service_of(s).hands_out_tokens(s); }
bool service_checks_raft(const Scenario& s) {
  const auto own = service_of(s).own_properties();
  return std::find(own.begin(), own.end(), Property::kRaftSafety) != own.end();
}

std::string no_lock(const Scenario&) { return "the design takes no lock (\"service\": \"none\")"; }
std::string never_inapplicable(const Scenario&) { return "it does not apply to this design"; }
std::string no_messages(const Scenario& s) {
  return "the design has no messages (lock.service is \"" + service_of(s).name() + "\", not \"queue\")";
}
std::string no_register(const Scenario&) {
  return "the queue's ledger applies effects, it has no read-modify-write register to lose an update of";
}
std::string no_token(const Scenario& s) { return service_of(s).why_no_token(s); }
std::string not_raft(const Scenario& s) {
  // Every service that checks it itself, in registry order: "the etcd and
  // ZooKeeper services".
  std::vector<std::string> owners;
  for (const ServiceDescriptor* d : service_registry()) {
    const std::vector<Property> own = d->own_properties();
    if (std::find(own.begin(), own.end(), Property::kRaftSafety) != own.end()) owners.push_back(d->display_name());
  }
  std::string names;
  for (std::size_t i = 0; i < owners.size(); ++i) {
    names += (i == 0 ? "" : (i + 1 == owners.size() ? " and " : ", ")) + owners[i];
  }
  return "it is checked only for the " + (names.empty() ? std::string("Raft") : names) +
         (owners.size() > 1 ? " services" : " service") + "; this scenario's is " + service_of(s).name();
}

/// The verdict the service computed for `p` itself.
Verdict service_verdict(const CheckInput& in, Property p) {
  for (const Verdict& v : in.service_verdicts) {
    if (v.property == p) return v;
  }
  throw sim::ModelBug(std::string("the lock service gave no ") + to_string(p) + " verdict");
}

Verdict mutual_exclusion(const CheckInput& in) { return check_mutual_exclusion(in.history, in.context); }
Verdict no_stale_write(const CheckInput& in) { return check_no_stale_write(in.history); }
Verdict no_lost_update(const CheckInput& in) { return check_no_lost_update(in.history, in.scenario.resource.initial); }
Verdict token_monotonic(const CheckInput& in) { return check_token_monotonic(in.history); }
/// The `leader` workload's progress is about leadership (standbys wait by
/// design; leader_progress.cpp); every other client's, per iteration. With
/// both kinds of client, the first violation of either (leaders first).
Verdict progress(const CheckInput& in) {
  if (is_queue(in.scenario)) return check_queue_progress(in.history, in.context, in.scenario.settle);
  std::set<std::string> leaders;
  for (const ClientSpec& c : in.scenario.clients) {
    if (c.workload.kind == WorkloadKind::kLeader) leaders.insert(c.name);
  }
  if (leaders.empty()) return check_progress(in.history, in.context, in.scenario.settle);
  Verdict lv = check_leader_progress(in.history, in.context, in.scenario.settle, leaders);
  if (leaders.size() == in.scenario.clients.size()) return lv;
  History others = in.history;
  std::erase_if(others.iterations, [&](const IterationRecord& it) { return leaders.count(it.client) > 0; });
  Verdict ov = check_progress(others, in.context, in.scenario.settle);
  if (lv.status == Status::kViolated) return lv;
  if (ov.status == Status::kViolated) return ov;
  ov.checked += lv.checked;
  ov.summary = lv.summary + "; " + ov.summary;
  return ov;
}
Verdict no_duplicate_effect(const CheckInput& in) { return check_no_duplicate_effect(in.history); }
Verdict raft_safety(const CheckInput& in) { return service_verdict(in, Property::kRaftSafety); }

}  // namespace

const std::vector<Checker>& checker_registry() {
  static const std::vector<Checker> kCheckers = {
      {Property::kMutualExclusion, takes_lock, no_lock, mutual_exclusion},
      {Property::kNoStaleWrite, takes_lock, no_lock, no_stale_write},
      {Property::kNoLostUpdate, not_queue, no_register, no_lost_update},
      {Property::kTokenMonotonic, hands_out_tokens, no_token, token_monotonic},
      {Property::kProgress, always, never_inapplicable, progress},
      {Property::kRaftSafety, service_checks_raft, not_raft, raft_safety},
      {Property::kNoDuplicateEffect, is_queue, no_messages, no_duplicate_effect},
  };
  return kCheckers;
}

const Checker& checker_for(Property p) {
  for (const Checker& c : checker_registry()) {
    if (c.property == p) return c;
  }
  throw sim::ModelBug(std::string("no checker registered for ") + to_string(p));
}

bool property_applies(const Scenario& s, Property p) { return checker_for(p).applies(s); }

std::string why_not_applicable(const Scenario& s, Property p) { return checker_for(p).why_not(s); }

std::vector<Verdict> check_all(const Scenario& s, const History& h, const CheckContext& ctx,
                               const std::vector<Verdict>& service_verdicts) {
  const CheckInput in{s, h, ctx, service_verdicts};
  std::vector<Verdict> out;
  for (const Checker& c : checker_registry()) {
    Verdict v;
    if (!c.applies(s)) {
      v.property = c.property;
      v.status = Status::kNotApplicable;
      v.summary = "does not apply to this design";
    } else {
      v = c.check(in);
    }
    if (auto it = s.expect.find(c.property); it != s.expect.end()) {
      v.expected = it->second;
      v.met = (it->second == Expectation::kHolds && v.status == Status::kHolds) ||
              (it->second == Expectation::kViolated && v.status == Status::kViolated);
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace fencesim
