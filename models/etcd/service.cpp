// models/etcd/service.cpp — etcd as a lock service (models/lock_service.hpp):
// its descriptor (node group, role, properties) and EtcdService's
// LockService methods, including the raft_safety verdict.
#include <fmt/format.h>

#include "models/checkers/raft_safety.hpp"
#include "models/client/client.hpp"
#include "models/etcd/etcd.hpp"
#include "models/etcd/keys.hpp"
#include "models/etcd/raft/safety.hpp"
#include "models/fingerprint.hpp"
#include "models/rules.hpp"

#include "models/etcd/versions.hpp"
#include "models/words.hpp"

namespace fencesim::etcd {

namespace {

using namespace rules;  // problem, key, positive, … (models/rules.hpp)

Problem validate_etcd(const Scenario& s, const ScenarioSource& src) {
  const EtcdSpec& e = s.lock.etcd();
  FENCESIM_CHECK(in_range("lock.nodes", e.nodes, Ranges::kEtcdNodes));
  if (e.nodes % 2 == 0) {
    return problem("lock.nodes",
                   "an etcd cluster needs an odd number of members (1, 3, 5, …), got " + std::to_string(e.nodes),
                   "did you mean " + std::to_string(e.nodes + 1) + "?");
  }
  if (!etcd::version_profile(e.version)) {
    std::string known;
    for (std::string_view v : etcd::known_versions()) known += (known.empty() ? "\"" : ", \"") + std::string(v) + "\"";
    return problem("lock.version", "unknown etcd version \"" + e.version + "\"; expected one of " + known);
  }
  FENCESIM_CHECK(positive("lock.heartbeat", e.heartbeat));
  FENCESIM_CHECK(positive("lock.election_timeout", e.election_timeout));
  if (e.election_timeout % e.heartbeat != Duration::zero()) {
    return problem(src.election_timeout_given ? "lock.election_timeout" : "lock.heartbeat",
                   "election_timeout (" + fmt_d(e.election_timeout) + ") must be a whole multiple of heartbeat (" +
                       fmt_d(e.heartbeat) + "): Raft counts the election timeout in heartbeat ticks");
  }
  // etcd leases have a TTL in whole seconds, and etcd raises a TTL below
  // its minimum, ceil(1.5 × election timeout) (lessor.go minLeaseTTL).
  const Duration asked = s.lock.requested_ttl;
  if (asked % std::chrono::seconds(1) != Duration::zero()) {
    const auto up = std::chrono::ceil<std::chrono::seconds>(asked);
    return problem("lock.ttl", "an etcd lease TTL must be a whole number of seconds, got " + fmt_d(asked),
                   "did you mean \"" + std::to_string(up.count()) + "s\"?");
  }
  const Duration min_ttl = etcd_min_ttl(e.election_timeout);
  if (min_ttl > Limits::kMaxDuration) {
    return problem("lock.election_timeout",
                   "with this election_timeout etcd's minimum lease TTL would be " + fmt_d(min_ttl) + ", above the " +
                       std::to_string(Limits::kMaxDuration / std::chrono::hours(1)) + "h limit of any duration",
                   "an election_timeout of at most 16h");
  }
  if (s.lock.ttl != std::max(asked, min_ttl)) {
    return problem("lock.ttl", "lock.ttl (" + fmt_d(s.lock.ttl) + ") is not the TTL etcd grants for a requested " +
                                   fmt_d(asked) + " (" + fmt_d(std::max(asked, min_ttl)) +
                                   "); set requested_ttl and call resolve_scenario (fencesim/builder.hpp does)");
  }
  return std::nullopt;
}

/// More than one lock: no lock key may be another's followed by "/".
Problem validate_etcd_locks(const std::vector<std::string>& all) {
  // etcd: no lock key may be another's followed by "/". The mutex of key
  // K is concurrency.NewMutex(s, K), whose prefix is K + "/"; Lock puts
  // the waiter key "K/<lease id>" and ranges over the prefix K + "/"
  // (tryAcquire's getOwner: OpGet(m.pfx, WithFirstCreate()...), which is
  // WithPrefix + sort by create revision + limit 1; waitDeletes the same
  // with WithLastCreate + WithMaxCreateRev). So the mutex of "/locks/a"
  // would count the waiters of "/locks/a/b" (keys "/locks/a/b/<lease>")
  // as its own: clientv3/concurrency/mutex.go and op.go (withTop) @
  // v3.4.3 and v3.4.34, client/v3/concurrency/mutex.go @ v3.5.0 and
  // v3.5.16, all alike. A lease id prints as hex, never with "/", so
  // keys that are not nested this way never share a waiter.
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < all.size(); ++j) {
      if (i == j || all[j].size() <= all[i].size() || all[j].compare(0, all[i].size() + 1, all[i] + "/") != 0) {
        continue;
      }
      const auto path_of = [](std::size_t k) {
        return k == 0 ? std::string("lock.key") : "lock.keys[" + std::to_string(k - 1) + "]";
      };
      return problem(path_of(j),
                     "the etcd lock " + quote_text(all[j]) + " is nested under the lock " + quote_text(all[i]) + " (" +
                         path_of(i) + "): the mutex of " + quote_text(all[i]) + " ranges over the prefix " +
                         quote_text(all[i] + "/") + " and would take the waiters of " + quote_text(all[j]) +
                         " for its own (etcd clientv3/concurrency/mutex.go, v3.4 and v3.5)",
                     "choose keys where none is another followed by \"/\", e.g. " +
                         quote_text(all[i] + "-" + all[j].substr(all[i].size() + 1)));
    }
  }
  return std::nullopt;
}

class EtcdDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kEtcd; }
  std::string name() const override { return "etcd"; }

  std::vector<std::string> lock_keys() const override { return etcd::lock_keys(); }
  void read(KeyReader& in, LockSpec& l, ScenarioSource& src) const override {
    read_lock(in, l, src.election_timeout_given);
  }
  void write(const LockSpec& l, KeyWriter& out) const override { write_lock(l, out); }
  std::string foreign_key(const std::string&, const ServiceDescriptor& in) const override {
    return " is an etcd setting; it does not apply to \"service\": \"" + in.name() + "\"";
  }
  /// clients[].library: etcd's Go client (clientv3/concurrency) or jetcd.
  std::vector<ClientLibrary> client_libraries() const override { return {ClientLibrary::kGo, ClientLibrary::kJetcd}; }

  /// etcd raises a whole-second TTL below its minimum, ceil(1.5 ×
  /// election timeout) (server/lease/lessor.go minLeaseTTL, v3.4 and v3.5).
  Duration granted_ttl(const LockSpec& l, Duration asked) const override {
    if (asked % std::chrono::seconds(1) != Duration::zero() || l.etcd().election_timeout <= Duration::zero()) {
      return asked;
    }
    const Duration min_ttl = etcd_min_ttl(l.etcd().election_timeout);
    return min_ttl <= Limits::kMaxDuration ? std::max(asked, min_ttl) : asked;
  }
  std::string why_ttl_raised(Duration granted) const override {
    return "etcd grants a lease at least ceil(1.5 × election_timeout) = " +
           std::to_string(granted / std::chrono::seconds(1)) + " seconds";
  }
  /// A lease TTL is whole seconds (LeaseGrantRequest's TTL is an int64 of seconds).
  std::optional<ScenarioProblem> client_ttl_problem(const std::string& path, Duration ttl) const override {
    if (ttl % std::chrono::seconds(1) == Duration::zero()) return std::nullopt;
    const auto up = std::chrono::ceil<std::chrono::seconds>(ttl);
    return problem(path, "an etcd lease TTL must be a whole number of seconds, got " + fmt_d(ttl),
                   "did you mean \"" + std::to_string(up.count()) + "s\"?");
  }
  bool takes_more_locks(const LockSpec&, std::string&, std::string&) const override { return true; }
  std::optional<ScenarioProblem> validate_locks(const Scenario&, const std::vector<std::string>& all) const override {
    return validate_etcd_locks(all);
  }

  std::vector<std::string> group_names() const override { return {"etcd"}; }
  /// "etcd": the members etcd-0 … etcd-{n-1}.
  std::vector<NodeGroup> groups(const Scenario& s) const override {
    NodeGroup members{"etcd", {}};
    for (int i = 0; i < s.lock.etcd().nodes; ++i) members.nodes.push_back("etcd-" + std::to_string(i));
    return {std::move(members)};
  }
  std::vector<std::string> role_names() const override { return {"etcd-leader"}; }

  bool hands_out_tokens(const Scenario& s) const override { return s.lock.etcd().token != EtcdToken::kNone; }
  std::vector<Property> own_properties() const override { return {Property::kRaftSafety}; }

  void report_settings(const Scenario& s, KeyWriter& out) const override {
    const EtcdSpec& e = s.lock.etcd();
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
    // Written only when false (3.4.3, or an override), so that the reports of
    // files from before the key are unchanged.
    if (!e.revoke_checks_leadership) out.boolean("revoke_checks_leadership", false);
    out.boolean("mutex_checks_own_key", e.mutex_checks_own_key);
    out.boolean("lock_fails_on_session_end", e.lock_fails_on_session_end);
  }
  std::string report_design(const Scenario& s) const override {
    std::string o;
    if (!s.lock.etcd().version.empty()) {
      std::string overrides;
      for (const std::string& k : version_overrides(s.lock.etcd())) overrides += (overrides.empty() ? "" : ", ") + k;
      o = " (version " + s.lock.etcd().version + ", overrides: " + (overrides.empty() ? "none" : overrides) + ")";
    }
    return o + ServiceDescriptor::report_design(s);
  }

  std::optional<ScenarioProblem> validate(const Scenario& s, const ScenarioSource& src) const override {
    return validate_etcd(s, src);
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

bool EtcdService::apply_fault(const FaultSpec& f, std::string& why) {
  if (f.kind != FaultKind::kDiskStall) return LockService::apply_fault(f, why);
  for (const auto& m : members_) {
    if (m->node().name() != f.target) continue;
    if (!m->node().up()) {
      why = f.target + " is down";
      return false;
    }
    const Duration d = f.duration.value_or(Duration{0});
    const auto running = m->stall_end();
    if (!m->stall(sim_.now() + d)) {
      history_.note(sim_.now(), f.target, "disk-stall",
                    fmt::format("WAL fsync blocks for {}: within the stall already running (until {})",
                                sim::format_duration(d), sim::format_duration(*running)));
      return true;
    }
    history_.note(sim_.now(), f.target, "disk-stall",
                  running ? fmt::format("WAL fsync blocks for {}: the stall already running goes on until {}",
                                        sim::format_duration(d), sim::format_duration(sim_.now() + d))
                          : fmt::format("WAL fsync blocks for {}: the Raft Ready loop stops (term {}, {})",
                                        sim::format_duration(d), m->raft().term(), raft::role_name(m->raft().role())));
    return true;
  }
  why = "no etcd member is named " + f.target;
  return false;
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
