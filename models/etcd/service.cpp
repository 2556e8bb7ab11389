// models/etcd/service.cpp — etcd as a lock service (models/lock_service.hpp):
// its descriptor (node group, role, properties) and EtcdService's
// LockService methods, including the raft_safety verdict.
#include "models/checkers/raft_safety.hpp"
#include "models/client/client.hpp"
#include "models/etcd/etcd.hpp"
#include "models/etcd/raft/safety.hpp"
#include "models/fingerprint.hpp"

#include "models/etcd/versions.hpp"
#include "models/words.hpp"

namespace fencesim::etcd {

namespace {

class EtcdDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kEtcd; }
  std::string name() const override { return "etcd"; }

  std::vector<std::string> group_names() const override { return {"etcd"}; }
  /// "etcd": the members etcd-0 … etcd-{n-1}.
  std::vector<NodeGroup> groups(const Scenario& s) const override {
    NodeGroup members{"etcd", {}};
    for (int i = 0; i < s.lock.etcd.nodes; ++i) members.nodes.push_back("etcd-" + std::to_string(i));
    return {std::move(members)};
  }
  std::vector<std::string> role_names() const override { return {"etcd-leader"}; }

  bool hands_out_tokens(const Scenario& s) const override { return s.lock.etcd.token != EtcdToken::kNone; }
  std::vector<Property> own_properties() const override { return {Property::kRaftSafety}; }

  void report_settings(const Scenario& s, KeyWriter& out) const override {
    const EtcdSpec& e = s.lock.etcd;
    out.duration("requested_ttl", s.lock.requested_ttl);
    out.integer("nodes", e.nodes);
    out.duration("election_timeout", e.election_timeout);
    out.duration("heartbeat", e.heartbeat);
    out.text("token", word(e.token));
    // The version (null: the model's own combination) and every key that
    // overrides its profile (models/etcd/versions.hpp).
    if (e.version.empty()) {
      out.null_value("version");
    } else {
      out.text("version", e.version);
    }
    out.nodes("overrides", version_overrides(e));
    out.boolean("pre_vote", e.pre_vote);
    out.boolean("keepalive_checks_leadership", e.keepalive_checks_leadership);
    out.boolean("keepalive_skips_check_if_active", e.keepalive_skips_check_if_active);
    out.boolean("mutex_checks_own_key", e.mutex_checks_own_key);
    out.boolean("lock_fails_on_session_end", e.lock_fails_on_session_end);
  }
  std::string report_design(const Scenario& s) const override {
    std::string o;
    if (!s.lock.etcd.version.empty()) {
      std::string overrides;
      for (const std::string& k : version_overrides(s.lock.etcd)) overrides += (overrides.empty() ? "" : ", ") + k;
      o = " (version " + s.lock.etcd.version + ", overrides: " + (overrides.empty() ? "none" : overrides) + ")";
    }
    return o + ServiceDescriptor::report_design(s);
  }

  std::unique_ptr<LockService> build(ServiceContext& ctx) const override {
    return std::make_unique<EtcdService>(ctx.sim, ctx.history, ctx.scenario, ctx.groups.at(0));
  }
};

}  // namespace

const ServiceDescriptor& descriptor() {
  static const EtcdDescriptor kEtcd;
  return kEtcd;
}

std::optional<NodeId> EtcdService::resolve_role(const std::string& role, std::string& why) const {
  if (role != "etcd-leader") return LockService::resolve_role(role, why);
  auto l = leader();
  if (!l) why = "there is no etcd leader";
  return l;
}

std::unique_ptr<client::LockClient> EtcdService::make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                             std::size_t index) {
  return client::make_etcd_client(node, h, c, lock_for(lock_, c), member_ids_, index);
}

std::vector<Verdict> EtcdService::own_verdicts() const {
  return {raft_safety_verdict(raft::check_raft_safety(raft_history_))};
}

std::optional<std::uint64_t> EtcdService::fingerprint() const { return raft_fingerprint(raft_history_); }

}  // namespace fencesim::etcd
