#include "models/client/policies.hpp"

#include "models/client/client.hpp"
#include "sim/time.hpp"

namespace fencesim::client {

bool ClientPolicies::believes() const { return lock_.lease_state().believes; }

std::string ClientPolicies::lost_reason() const {
  const LeaseState st = lock_.lease_state();
  return st.lost ? st.lost_reason : std::string();
}

LeaseFacts ClientPolicies::facts() const {
  const LeaseState st = lock_.lease_state();
  return LeaseFacts{ttl_, st.believes, st.lost, st.lost ? st.lost_reason : std::string(), st.confirmed_sent};
}

std::optional<std::string> ClientPolicies::stop_before_step() const { return policy_.stop_before_step(facts()); }

std::optional<std::string> ClientPolicies::stop_before_write(sim::Process& p) const {
  for (;;) {
    if (auto stop = stop_before_step()) return stop;
    WriteDecision d = policy_.before_write(facts());
    switch (d.action) {
      case WriteAction::kGo: return std::nullopt;
      case WriteAction::kAbandon: return std::move(d.reason);
      case WriteAction::kRecheck: p.sleep(d.recheck_after); break;
    }
  }
}

}  // namespace fencesim::client
