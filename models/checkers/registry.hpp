// models/checkers/registry.hpp — the property checkers, registered in one
// place.
//
// One entry per property, in report order (all_properties()): whether it
// applies to a scenario (docs/FORMAT.md "Properties") and
// how it is checked. A property the lock service checks itself (raft_safety
// for etcd) takes the service's verdict from CheckInput::service_verdicts.
//
//   std::vector<Verdict> v = check_all(s, history, ctx, service->own_verdicts());
//
// check_all applies each expectation of `s.expect` (Verdict::expected, met);
// a property that does not apply is reported kNotApplicable with the summary
// "does not apply to this design". Errors: sim::ModelBug when a property the
// service checks itself applies but the service gave no verdict for it.
#pragma once

#include <string>
#include <vector>

#include "models/checkers/verdict.hpp"

namespace fencesim {

/// What a checker reads.
struct CheckInput {
  const Scenario& scenario;
  const History& history;
  const CheckContext& context;
  /// Verdicts the lock service computed itself (LockService::own_verdicts).
  const std::vector<Verdict>& service_verdicts;
};

struct Checker {
  Property property;
  bool (*applies)(const Scenario& s);
  /// Why it does not apply (after "because "), when `applies` is false.
  std::string (*why_not)(const Scenario& s);
  /// The verdict, expectation not yet applied; called only if it applies.
  Verdict (*check)(const CheckInput& in);
};

/// Every checker, in report order.
const std::vector<Checker>& checker_registry();
/// The checker of `p`.
const Checker& checker_for(Property p);

/// Every property's verdict, in report order, with `s.expect` applied.
std::vector<Verdict> check_all(const Scenario& s, const History& h, const CheckContext& ctx,
                               const std::vector<Verdict>& service_verdicts = {});

/// Why `p` does not apply to `s` (the loader's message after "because ").
std::string why_not_applicable(const Scenario& s, Property p);

}  // namespace fencesim
