#include "models/client/policies.hpp"

#include <fmt/format.h>

#include "models/client/client.hpp"
#include "sim/time.hpp"

namespace fencesim::client {

bool ClientPolicies::believes() const { return lock_.lease_state().believes; }

std::string ClientPolicies::lost_reason() const {
  const LeaseState st = lock_.lease_state();
  return st.lost ? st.lost_reason : std::string();
}

std::optional<std::string> ClientPolicies::stop_before_step() const {
  if (spec_.on_lease_loss != LeaseLossPolicy::kAbort) return std::nullopt;
  const LeaseState st = lock_.lease_state();
  if (!st.lost) return std::nullopt;
  return "stopped: the lease was lost (" + st.lost_reason + ")";
}

std::optional<std::string> ClientPolicies::stop_before_write() const {
  if (auto stop = stop_before_step()) return stop;
  if (!spec_.check_lease_before_write) return std::nullopt;
  const Duration margin = *spec_.check_lease_before_write;
  const LeaseState st = lock_.lease_state();
  const Duration limit = ttl_ - margin;
  if (!st.confirmed_sent) return "abandoned before the write: the lease was never confirmed";
  const Duration since = node_.monotonic() - *st.confirmed_sent;
  if (since < limit) return std::nullopt;
  return fmt::format(
      "abandoned before the write: {} since the last confirmed grant or renewal was sent, not below "
      "TTL {} - margin {}",
      sim::format_duration(since), sim::format_duration(ttl_), sim::format_duration(margin));
}

}  // namespace fencesim::client
