// models/client/policies.hpp — the client policies that careful lock users
// add on top of a lock library (docs/FORMAT.md "Client policies"), as the
// workload sees them (workloads::LeaseView).
//
//   check_lease_before_write (a margin): just before each write the client
//     reads its monotonic clock and writes only while the time since it
//     *sent* the request that last confirmed the lease (the grant, or the
//     last successful renewal; etcd: the session's lease grant or keepalive)
//     is below TTL − margin; otherwise the iteration is abandoned. Measuring
//     from the send, not the reply, is what careful libraries do: redsync
//     (github.com/go-redsync/redsync, mutex.go, v4) takes `start :=
//     time.Now()` before asking the primaries and computes the validity as
//     `until := now.Add(m.expiry - now.Sub(start) - drift)`, i.e. from the
//     send; Redlock's validity rule (redis.io "Distributed Locks with Redis")
//     is the same. A lease granted by a request sent at t cannot have started
//     before t at the service.
//   on_lease_loss "abort": once the client has learned that its lease is
//     lost (its belief ended by a refused renewal, an ended session, or
//     lease_loss_after — not by its own release), the iteration stops at its
//     next step, as Go code selecting on concurrency.Session.Done() does.
//   lease_loss_after (models/client/client.cpp, LockClientBase::confirmed):
//     the lock client ends its belief itself when no acquire or renewal has
//     succeeded for that long on its monotonic clock.
//
// These rules are BuiltinClientPolicy (models/client/policy.hpp), one
// implementation of ClientPolicy (models/policy.hpp); ClientSpec::policy
// replaces it with a policy of the user's, asked the same way.
//
// The check and the write's send happen at one instant of the model; what
// comes between them in a real process is modelled by what delays the
// write after the check (a pause during a `slow` send, network latency):
// the check narrows the race but cannot close it.
#pragma once

#include <optional>
#include <string>

#include "models/client/policy.hpp"
#include "models/scenario.hpp"
#include "models/workloads/workload.hpp"
#include "sim/node.hpp"

namespace fencesim::client {

class LockClient;

class ClientPolicies final : public workloads::LeaseView {
 public:
  /// `ttl` is the lease TTL in effect (LockSpec::ttl). `lock` and `policy`
  /// outlive the policies.
  ClientPolicies(Duration ttl, const LockClient& lock, ClientPolicyRunner& policy)
      : ttl_(ttl), lock_(lock), policy_(policy) {}

  bool believes() const override;
  std::string lost_reason() const override;
  /// "stopped: the lease was lost (renewal refused)".
  std::optional<std::string> stop_before_step() const override;
  /// "abandoned before the write: 9.5s since the last confirmed grant or
  /// renewal was sent, not below TTL 10s − margin 1s". A re-check waits on
  /// `p` and asks again (stop_before_step first).
  std::optional<std::string> stop_before_write(sim::Process& p) const override;

 private:
  LeaseFacts facts() const;
  Duration ttl_;
  const LockClient& lock_;
  ClientPolicyRunner& policy_;
};

}  // namespace fencesim::client
