// models/hazelcast/service.cpp — Hazelcast as a lock service
// (models/lock_service.hpp): its descriptor (keys, defaults, rules, reports,
// node group, role) and HazelcastService's LockService methods.
#include <fmt/format.h>

#include "models/checkers/raft_safety.hpp"
#include "models/client/client.hpp"
#include "models/etcd/raft/safety.hpp"
#include "models/fingerprint.hpp"
#include "models/hazelcast/hazelcast.hpp"
#include "models/rules.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"

namespace fencesim::hazelcast {

std::unique_ptr<client::LockClient> make_client(HazelcastService& svc, sim::Node& node, History& h,
                                                const ClientSpec& spec, const LockSpec& lock,
                                                std::vector<NodeId> members, std::size_t index);

namespace {

using namespace rules;

/// CPSubsystemConfig.DEFAULT_SESSION_TTL_SECONDS.
constexpr Duration kDefaultSessionTtl = std::chrono::seconds(300);

Problem whole_seconds(const std::string& path, Duration d, const char* config_key) {
  if (d % std::chrono::seconds(1) == Duration::zero()) return std::nullopt;
  return problem(path, std::string("Hazelcast configures it in whole seconds (") + config_key + "), got " + fmt_d(d),
                 "e.g. \"" +
                     fmt_d(std::max<Duration>(std::chrono::seconds(1), std::chrono::floor<std::chrono::seconds>(d))) +
                     "\"");
}

Problem validate_hazelcast(const Scenario& s) {
  const HazelcastSpec& h = s.lock.hazelcast();
  if (h.cp_member_count != 3 && h.cp_member_count != 5 && h.cp_member_count != 7) {
    return problem("lock.cp_member_count",
                   "a CP group has 3, 5 or 7 CP members (CPSubsystemConfig: \"Group size must be an odd value "
                   "between 3 and 7\"), got " +
                       std::to_string(h.cp_member_count),
                   "use 3, 5 or 7");
  }
  FENCESIM_CHECK(positive("lock.session_heartbeat_interval", h.session_heartbeat_interval, std::chrono::seconds(1)));
  FENCESIM_CHECK(whole_seconds("lock.session_heartbeat_interval", h.session_heartbeat_interval,
                               "session-heartbeat-interval-seconds"));
  // 0: left out, and not resolved yet (resolve_defaults gives it 300 s).
  const bool ttl_given = s.lock.requested_ttl != Duration{0};
  const Duration ttl = ttl_given ? s.lock.requested_ttl : kDefaultSessionTtl;
  if (ttl_given) {
    FENCESIM_CHECK(positive("lock.ttl", ttl, std::chrono::seconds(1)));
    FENCESIM_CHECK(whole_seconds("lock.ttl", ttl, "session-time-to-live-seconds"));
  }
  if (ttl <= h.session_heartbeat_interval) {
    if (!ttl_given) {
      return problem("lock.session_heartbeat_interval",
                     "the session heartbeat interval (" + fmt_d(h.session_heartbeat_interval) +
                         ") must be shorter than the CP session TTL (lock.ttl, left out: 300s): Hazelcast refuses the "
                         "configuration",
                     "lower it (the default is 5s), or set lock.ttl above it");
    }
    return problem("lock.ttl",
                   "the CP session TTL (" + fmt_d(ttl) + ") must be longer than the session heartbeat interval (" +
                       fmt_d(h.session_heartbeat_interval) + "): Hazelcast refuses the configuration",
                   "raise lock.ttl, or lower lock.session_heartbeat_interval (e.g. \"1s\")");
  }
  FENCESIM_CHECK(in_range("lock.lock_acquire_limit", h.lock_acquire_limit, IntRange{0, 2147483647}));
  FENCESIM_CHECK(positive("lock.leader_heartbeat_period", h.leader_heartbeat_period, std::chrono::milliseconds(1)));
  FENCESIM_CHECK(
      in_range("lock.max_missed_leader_heartbeat_count", h.max_missed_leader_heartbeat_count, IntRange{1, 1000}));
  return std::nullopt;
}

class HazelcastDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kHazelcast; }
  std::string name() const override { return "hazelcast"; }
  std::string display_name() const override { return "Hazelcast"; }

  std::vector<std::string> lock_keys() const override {
    return {"cp_member_count", "session_heartbeat_interval", "lock_acquire_limit",
            "token",           "leader_heartbeat_period",    "max_missed_leader_heartbeat_count"};
  }
  void read(KeyReader& in, LockSpec& l, ScenarioSource&) const override {
    HazelcastSpec& h = l.hazelcast();
    if (const auto x = in.integer("cp_member_count", IntRange{3, 7})) h.cp_member_count = static_cast<int>(*x);
    if (const auto x = in.duration("session_heartbeat_interval")) h.session_heartbeat_interval = *x;
    if (const auto x = in.integer("lock_acquire_limit", IntRange{0, 2147483647})) {
      h.lock_acquire_limit = static_cast<int>(*x);
    }
    if (const auto x = in.word<HzToken>("token")) h.token = *x;
    if (const auto x = in.duration("leader_heartbeat_period")) h.leader_heartbeat_period = *x;
    if (const auto x = in.integer("max_missed_leader_heartbeat_count", IntRange{1, 1000})) {
      h.max_missed_leader_heartbeat_count = static_cast<int>(*x);
    }
  }
  void write(const LockSpec& l, KeyWriter& out) const override {
    const HazelcastSpec& h = l.hazelcast();
    const HazelcastSpec hd;
    if (h.cp_member_count != hd.cp_member_count) out.integer("cp_member_count", h.cp_member_count);
    if (h.session_heartbeat_interval != hd.session_heartbeat_interval) {
      out.duration("session_heartbeat_interval", h.session_heartbeat_interval);
    }
    if (h.lock_acquire_limit != hd.lock_acquire_limit) out.integer("lock_acquire_limit", h.lock_acquire_limit);
    if (h.token != hd.token) out.text("token", word(h.token));
    if (h.leader_heartbeat_period != hd.leader_heartbeat_period) {
      out.duration("leader_heartbeat_period", h.leader_heartbeat_period);
    }
    if (h.max_missed_leader_heartbeat_count != hd.max_missed_leader_heartbeat_count) {
      out.integer("max_missed_leader_heartbeat_count", h.max_missed_leader_heartbeat_count);
    }
  }
  std::string foreign_key(const std::string&, const ServiceDescriptor& in) const override {
    return " is a Hazelcast setting; it does not apply to \"service\": \"" + in.name() + "\"";
  }
  /// session-time-to-live-seconds' default, for every client.
  std::optional<Duration> default_ttl(ClientLibrary) const override { return kDefaultSessionTtl; }
  std::optional<ScenarioProblem> validate_client(const Scenario&, const ClientSpec& c,
                                                 const std::string& path) const override {
    if (!c.program && c.ttl) {
      return problem(key(path, "ttl"),
                     "a Hazelcast client has no TTL of its own: the CP session TTL is the CP subsystem's "
                     "(lock.ttl, session-time-to-live-seconds)",
                     "remove it, and set lock.ttl");
    }
    return self_renewing_client_problem(c, path, "Hazelcast", "use a built-in client (a \"workload\")",
                                        "its session manager heartbeats every session in use");
  }
  std::optional<std::pair<Duration, std::string>> own_renewal(const Scenario& s, const ClientSpec&) const override {
    const Duration every = s.lock.hazelcast().session_heartbeat_interval;
    return std::make_pair(every, "the session heartbeat interval " + fmt_d(every));
  }
  void notes(const Scenario& s, std::vector<std::string>& out) const override {
    self_renewing_notes(s, "a Hazelcast client heartbeats its CP session on its monotonic clock",
                        "a Hazelcast client heartbeats every lock.session_heartbeat_interval", out);
  }

  std::vector<std::string> group_names() const override { return {"hazelcast"}; }
  /// "hazelcast": the CP members hz-0 … hz-{n-1}.
  std::vector<NodeGroup> groups(const Scenario& s) const override {
    NodeGroup members{"hazelcast", {}};
    for (int i = 0; i < s.lock.hazelcast().cp_member_count; ++i) members.nodes.push_back("hz-" + std::to_string(i));
    return {std::move(members)};
  }
  std::vector<std::string> role_names() const override { return {"hz-leader"}; }
  bool hands_out_tokens(const Scenario& s) const override { return s.lock.hazelcast().token == HzToken::kFence; }
  std::string why_no_token(const Scenario&) const override {
    return "the holders write without the fence (lock.token is \"none\": lock() instead of lockAndGetFence())";
  }
  std::vector<Property> own_properties() const override { return {Property::kRaftSafety}; }
  bool takes_more_locks(const LockSpec&, std::string&, std::string&) const override { return true; }

  void report_settings(const Scenario& s, KeyWriter& out) const override {
    const HazelcastSpec& h = s.lock.hazelcast();
    out.integer("cp_member_count", h.cp_member_count);
    out.duration("session_heartbeat_interval", h.session_heartbeat_interval);
    out.integer("lock_acquire_limit", h.lock_acquire_limit);
    out.text("token", word(h.token));
    out.duration("leader_heartbeat_period", h.leader_heartbeat_period);
    out.integer("max_missed_leader_heartbeat_count", h.max_missed_leader_heartbeat_count);
  }
  std::string report_design(const Scenario& s) const override {
    const HazelcastSpec& h = s.lock.hazelcast();
    return fmt::format(" ({} CP members, FencedLock {}, token {})", h.cp_member_count, s.lock.key,
                       h.token == HzToken::kFence ? "the fence" : "none") +
           ", session TTL " + fmt_d(s.lock.ttl) + ", heartbeat " + fmt_d(h.session_heartbeat_interval);
  }
  std::string summary_design(const Scenario& s) const override {
    return fmt::format(" session {} cp_members {} token {}", fmt_d(s.lock.ttl), s.lock.hazelcast().cp_member_count,
                       word(s.lock.hazelcast().token));
  }
  std::optional<ScenarioProblem> validate(const Scenario& s, const ScenarioSource&) const override {
    return validate_hazelcast(s);
  }
  std::unique_ptr<LockService> build(ServiceContext& ctx) const override {
    return std::make_unique<HazelcastService>(ctx.sim, ctx.history, ctx.scenario, ctx.groups.at(0));
  }
};

}  // namespace

const ServiceDescriptor& descriptor() {
  static const HazelcastDescriptor kHazelcast;
  return kHazelcast;
}

// ====================================================== HazelcastService ==

HazelcastService::HazelcastService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> members)
    : sim_(s),
      history_(h),
      lock_(sc.lock),
      spec_(sc.lock.hazelcast()),
      ttl_(sc.lock.ttl),
      member_ids_(std::move(members)) {
  raft::Config cfg;
  cfg.members = member_ids_;
  // A follower gives its leader up after max-missed-leader-heartbeat-count
  // heartbeats of leader-heartbeat-period.
  cfg.heartbeat = spec_.leader_heartbeat_period;
  cfg.election_timeout = spec_.max_missed_leader_heartbeat_count * spec_.leader_heartbeat_period;
  cfg.pre_vote = true;
  for (std::size_t i = 0; i < member_ids_.size(); ++i) {
    members_.push_back(
        std::make_unique<CpMember>(*this, sim_.node(member_ids_[i]), static_cast<int>(i), cfg, &raft_history_));
  }
}

HazelcastService::~HazelcastService() = default;

void HazelcastService::start() {
  for (auto& m : members_) m->start();
}

std::optional<NodeId> HazelcastService::leader() const {
  return raft::highest_term_leader(members_, [](const auto& m) -> const raft::RaftNode& { return m->raft(); });
}

std::optional<NodeId> HazelcastService::resolve_role(const std::string& role, std::string& why) const {
  if (role != "hz-leader") return LockService::resolve_role(role, why);
  auto l = leader();
  if (!l) why = "there is no Hazelcast CP group leader";
  return l;
}

std::unique_ptr<client::LockClient> HazelcastService::make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                                  std::size_t index) {
  return hazelcast::make_client(*this, node, h, c, lock_for(lock_, c), member_ids_, index);
}

std::vector<Verdict> HazelcastService::own_verdicts() const {
  return {raft_safety_verdict(raft::check_raft_safety(raft_history_))};
}

std::optional<std::uint64_t> HazelcastService::fingerprint() const { return raft_fingerprint(raft_history_); }

void HazelcastService::on_owner(CpMember& m, const std::string& name, const CpMember::Invocation& inv, Fence fence) {
  // The grant is the leader's applying the LockOp (or the release that made
  // a waiter the owner); every member applies it, the leader first.
  const std::string value = hold_value(name, fence);
  if (!m.raft().is_leader() || !granted_.insert(value).second) return;
  history_.grant(sim_.now(), inv.client, value,
                 spec_.token == HzToken::kFence ? std::optional<std::int64_t>(fence) : std::nullopt, m.node().name());
}

void HazelcastService::on_owner_left(CpMember& m, const std::string& name, Fence fence, const std::string& why,
                                     LeaseEndCause cause) {
  const std::string value = hold_value(name, fence);
  if (!m.raft().is_leader() || granted_.count(value) == 0 || history_.lease_ends.count(value) != 0) return;
  history_.lease_end(sim_.now(), value, why, cause);
}

}  // namespace fencesim::hazelcast
