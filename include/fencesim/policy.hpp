// fencesim/policy.hpp — test your own lock logic: a storage rule
// (ResourceCheck) and a client library's decisions (ClientPolicy) of your
// own, run inside a simulated scenario. The interfaces, their units and the
// rules a policy must follow are in models/policy.hpp (installed with this
// header); docs/API.md walks through both with the examples of examples/.
//
//   // Per-row fencing: a write to a row needs a token above that row's last.
//   // The row is the client's lock (ResourceRequest::lock; more than one
//   // lock: builder.locks("row-1", {"row-2"}) and ClientSpec::lock).
//   struct PerRow final : fencesim::ResourceCheck {
//     std::string name() const override { return "per-row token"; }
//     fencesim::ResourceDecision decide(const fencesim::PolicyContext&, const fencesim::ResourceRequest& r,
//                                       fencesim::ResourceMarks& s) const override {
//       if (r.op == fencesim::ResourceOp::kRead) return {true, {}};
//       std::int64_t& last = s.marks[r.lock];
//       if (!r.token || *r.token <= last) return {false, "stale token for " + r.lock};
//       last = *r.token;
//       return {true, {}};
//     }
//   };
//   builder.resource_check(std::make_shared<PerRow>());
//
//   // A client that renews at TTL/2 with jitter from the run's own stream.
//   struct HalfTtlJitter final : fencesim::ClientPolicy {
//     std::string name() const override { return "half-ttl-jitter"; }
//     sim::Time next_renewal(const fencesim::PolicyContext& ctx, const fencesim::RenewalFacts& f) const override {
//       return f.last_reply + f.ttl / 2 - sim::Duration{ctx.rng().uniform(0, (f.ttl / 10).count())};
//     }
//   };
//   builder.client("A", allocator(100, 500ms), std::make_shared<HalfTtlJitter>());
//
// Every time is a sim::Time / sim::Duration (std::chrono nanoseconds) on the
// simulated clocks of the node the policy runs for. Errors: PolicyMisuse
// (the debug checks of models/policy.hpp); a scenario that gives a custom
// ClientPolicy and also a knob it replaces is refused by validate() with the
// client's path (e.g. "clients[0].check_lease_before_write").
#pragma once

#include "models/policy.hpp"
#include "models/world.hpp"
