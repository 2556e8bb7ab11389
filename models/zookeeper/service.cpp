// models/zookeeper/service.cpp — ZooKeeper as a lock service
// (models/lock_service.hpp): its descriptor (keys, defaults, rules, reports,
// node group, role) and ZooKeeperService's LockService methods.
#include <fmt/format.h>

#include "models/checkers/raft_safety.hpp"
#include "models/client/client.hpp"
#include "models/etcd/raft/safety.hpp"
#include "models/fingerprint.hpp"
#include "models/rules.hpp"
#include "models/words.hpp"
#include "models/zookeeper/zookeeper.hpp"

namespace fencesim::zookeeper {

std::unique_ptr<client::LockClient> make_client(ZooKeeperService& svc, sim::Node& node, History& h,
                                                const ClientSpec& spec, const LockSpec& lock, ClientLibrary library,
                                                std::vector<NodeId> servers, std::size_t index);

Duration min_session_timeout(const ZooKeeperSpec& z) {
  return z.min_session_timeout > Duration{0} ? z.min_session_timeout : 2 * z.tick_time;
}
Duration max_session_timeout(const ZooKeeperSpec& z) {
  return z.max_session_timeout > Duration{0} ? z.max_session_timeout : 20 * z.tick_time;
}
Duration negotiated_timeout(const ZooKeeperSpec& z, Duration asked) {
  return std::clamp(asked, min_session_timeout(z), std::max(min_session_timeout(z), max_session_timeout(z)));
}
std::string lock_path(const std::string& key) { return !key.empty() && key[0] == '/' ? key : "/" + key; }

std::optional<std::int64_t> token_of(ZkToken token, const std::string& path, const Stat& stat) {
  if (token == ZkToken::kCzxid) return stat.czxid;
  if (token == ZkToken::kSequence && path.size() >= 10) return std::stoll(path.substr(path.size() - 10));
  return std::nullopt;
}

namespace {

using namespace rules;

/// Curator's DEFAULT_SESSION_TIMEOUT_MS (CuratorFrameworkFactory.java) and
/// kazoo's KazooClient(timeout=10.0).
Duration library_session_timeout(ClientLibrary lib) {
  return lib == ClientLibrary::kKazoo ? Duration{std::chrono::seconds(10)} : Duration{std::chrono::seconds(60)};
}

/// A ZooKeeper path: "/" and names separated by single "/", no trailing
/// "/" (PathUtils.validatePath), none of them "." or "..".
Problem lock_path_problem(const std::string& json_path, const std::string& key) {
  const std::string p = lock_path(key);
  bool bad = p.size() > 1 && p.back() == '/';
  for (std::size_t at = 1; !bad && at < p.size();) {
    const std::size_t next = std::min(p.find('/', at), p.size());
    const std::string part = p.substr(at, next - at);
    bad = part.empty() || part == "." || part == "..";
    at = next + 1;
  }
  if (p == "/") bad = true;
  if (!bad && (p == "/zookeeper" || p.rfind("/zookeeper/", 0) == 0)) {
    return problem(json_path, "the lock path " + quote_text(p) + " is in /zookeeper, ZooKeeper's own subtree",
                   "e.g. \"/locks/orders\"");
  }
  if (!bad) {
    // PathUtils.validatePath refuses these UTF-16 units: U+007F–U+009F,
    // U+D800–U+F8FF (so every character beyond U+FFFF, written as a
    // surrogate pair) and U+FFF0–U+FFFF (controls below U+0020 are refused
    // for every lock key).
    for (std::size_t i = 0; i < p.size();) {
      const auto c = static_cast<unsigned char>(p[i]);
      const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
      for (int k = 1; k < len && i + k < p.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(p[i + k]) & 0x3F);
      if ((cp >= 0x7F && cp <= 0x9F) || (cp >= 0xD800 && cp <= 0xF8FF) || cp >= 0xFFF0) {
        return problem(json_path,
                       "the lock path " + quote_text(p) + " has a character ZooKeeper refuses in a path (U+" +
                           fmt::format("{:04X}", cp) +
                           "; PathUtils.validatePath: U+007F–U+009F, U+D800–U+F8FF and U+FFF0 and above)",
                       "use other characters, e.g. \"/locks/orders\"");
      }
      i += static_cast<std::size_t>(len);
    }
    return std::nullopt;
  }
  return problem(json_path,
                 "the ZooKeeper lock path " + quote_text(p) +
                     " is not a valid znode path: names separated by single \"/\", none empty, \".\" or \"..\", "
                     "and not the root",
                 "e.g. \"/locks/orders\"");
}

/// Curator and kazoo do not see each other's lock nodes: kazoo counts only
/// children named …__lock__<10 digits> (lock.py _get_predecessor), and
/// Curator sorts by the part after "lock-" (fixForSorting), so on one lock
/// path each would hold the lock beside the other. Refused, not modelled.
Problem one_library_per_lock(const Scenario& s) {
  std::map<std::string, std::pair<ClientLibrary, std::size_t>> seen;  // lock → first client's library, index
  for (std::size_t i = 0; i < s.clients.size(); ++i) {
    const ClientSpec& c = s.clients[i];
    const ClientLibrary lib = library_of(s, c);
    const auto [it, fresh] = seen.emplace(lock_of(s.lock, c), std::make_pair(lib, i));
    if (fresh || it->second.first == lib) continue;
    return problem("clients[" + std::to_string(i) + "].library",
                   "client " + c.name + " uses " + quote_text(word(lib)) + " and client " +
                       s.clients[it->second.second].name + " " + quote_text(word(it->second.first)) +
                       " on the same lock: the two recipes do not see each other's lock nodes (kazoo counts only "
                       "nodes named …__lock__<sequence>, Curator sorts by the part after \"lock-\"), so both "
                       "could hold it; fencesim does not model a lock path shared by the two",
                   "give both clients the same \"library\", or each library its own lock (lock.keys and "
                   "clients[].lock)");
  }
  return std::nullopt;
}

Problem validate_zookeeper(const Scenario& s) {
  const ZooKeeperSpec& z = s.lock.zookeeper();
  FENCESIM_CHECK(in_range("lock.nodes", z.nodes, Ranges::kEtcdNodes));
  if (z.nodes % 2 == 0) {
    return problem(
        "lock.nodes",
        "the model runs an odd number of ZooKeeper servers (1, 3, 5, …): an even ensemble tolerates no more failed "
        "servers than the odd one below it; got " +
            std::to_string(z.nodes),
        "did you mean " + std::to_string(z.nodes + 1) + "?");
  }
  FENCESIM_CHECK(positive("lock.tick_time", z.tick_time, std::chrono::milliseconds(10)));
  if (z.tick_time % std::chrono::milliseconds(2) != Duration::zero()) {
    return problem("lock.tick_time",
                   "tickTime is whole milliseconds, and the model needs an even number of them (a follower hands "
                   "its touches to the leader every tickTime / 2), got " +
                       fmt_d(z.tick_time),
                   "e.g. \"2s\" (ZooKeeper's default)");
  }
  FENCESIM_CHECK(in_range("lock.sync_limit", z.sync_limit, IntRange{1, 1000}));
  FENCESIM_CHECK(non_negative("lock.min_session_timeout", z.min_session_timeout));
  FENCESIM_CHECK(non_negative("lock.max_session_timeout", z.max_session_timeout));
  if (max_session_timeout(z) < min_session_timeout(z)) {
    const bool max_default = z.max_session_timeout == Duration{0};
    return problem(max_default ? "lock.min_session_timeout" : "lock.max_session_timeout",
                   "maxSessionTimeout (" + fmt_d(max_session_timeout(z)) +
                       (max_default ? ", the default 20 × tick_time" : "") + ") is below minSessionTimeout (" +
                       fmt_d(min_session_timeout(z)) + ")",
                   max_default ? "lower min_session_timeout, or set max_session_timeout too"
                               : "raise max_session_timeout to at least " + fmt_d(min_session_timeout(z)));
  }
  FENCESIM_CHECK(positive("lock.container_check_interval", z.container_check_interval, std::chrono::milliseconds(100)));
  FENCESIM_CHECK(lock_path_problem("lock.key", s.lock.key));
  if (s.lock.ttl != Duration{0} && s.lock.ttl != negotiated_timeout(z, s.lock.requested_ttl)) {
    return problem("lock.ttl", "lock.ttl (" + fmt_d(s.lock.ttl) +
                                   ") is not the session timeout ZooKeeper negotiates for " +
                                   fmt_d(s.lock.requested_ttl) + "; call resolve_scenario (fencesim/builder.hpp does)");
  }
  return std::nullopt;
}

class ZooKeeperDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kZooKeeper; }
  std::string name() const override { return "zookeeper"; }
  std::string display_name() const override { return "ZooKeeper"; }

  std::vector<std::string> lock_keys() const override {
    return {"nodes",      "tick_time", "min_session_timeout",     "max_session_timeout",
            "sync_limit", "token",     "container_check_interval"};
  }
  void read(KeyReader& in, LockSpec& l, ScenarioSource&) const override {
    ZooKeeperSpec& z = l.zookeeper();
    if (const auto x = in.integer("nodes", Ranges::kEtcdNodes)) z.nodes = static_cast<int>(*x);
    if (const auto x = in.duration("tick_time")) z.tick_time = *x;
    if (const auto x = in.duration("min_session_timeout")) z.min_session_timeout = *x;
    if (const auto x = in.duration("max_session_timeout")) z.max_session_timeout = *x;
    if (const auto x = in.integer("sync_limit", IntRange{1, 1000})) z.sync_limit = static_cast<int>(*x);
    if (const auto x = in.word<ZkToken>("token")) z.token = *x;
    if (const auto x = in.duration("container_check_interval")) z.container_check_interval = *x;
  }
  void write(const LockSpec& l, KeyWriter& out) const override {
    const ZooKeeperSpec& z = l.zookeeper();
    const ZooKeeperSpec zd;
    if (z.nodes != zd.nodes) out.integer("nodes", z.nodes);
    if (z.tick_time != zd.tick_time) out.duration("tick_time", z.tick_time);
    if (z.min_session_timeout != zd.min_session_timeout) out.duration("min_session_timeout", z.min_session_timeout);
    if (z.max_session_timeout != zd.max_session_timeout) out.duration("max_session_timeout", z.max_session_timeout);
    if (z.sync_limit != zd.sync_limit) out.integer("sync_limit", z.sync_limit);
    if (z.token != zd.token) out.text("token", word(z.token));
    if (z.container_check_interval != zd.container_check_interval) {
      out.duration("container_check_interval", z.container_check_interval);
    }
  }
  std::string foreign_key(const std::string&, const ServiceDescriptor& in) const override {
    return " is a ZooKeeper setting; it does not apply to \"service\": \"" + in.name() + "\"";
  }
  std::vector<ClientLibrary> client_libraries() const override {
    return {ClientLibrary::kCurator, ClientLibrary::kKazoo};
  }
  std::optional<Duration> default_ttl(ClientLibrary lib) const override { return library_session_timeout(lib); }
  /// The session timeout the servers negotiate (ZooKeeperServer
  /// .processConnectRequest): clamped into [min, max]_session_timeout.
  Duration granted_ttl(const LockSpec& l, Duration asked) const override {
    return asked > Duration{0} ? negotiated_timeout(l.zookeeper(), asked) : asked;
  }
  std::string why_ttl_raised(Duration granted) const override {
    return "ZooKeeper negotiates every session timeout into [min_session_timeout, max_session_timeout] (" +
           fmt_d(granted) + ")";
  }
  std::optional<ScenarioProblem> validate_client(const Scenario& s, const ClientSpec& c,
                                                 const std::string& path) const override {
    FENCESIM_CHECK(one_library_per_lock(s));
    return self_renewing_client_problem(c, path, "ZooKeeper",
                                        "use a built-in client (\"library\": \"curator\" or \"kazoo\" with a "
                                        "\"workload\")",
                                        "its session lives while it pings");
  }
  /// A ping after a third of the negotiated timeout without sending (half
  /// the readTimeout, client.cpp).
  std::optional<std::pair<Duration, std::string>> own_renewal(const Scenario& s, const ClientSpec& c) const override {
    const Duration every = client_ttl(s.lock, c) / 3;
    return std::make_pair(every, "the ping interval " + fmt_d(every) + " (a third of the session timeout)");
  }
  /// What a ZooKeeper client does not use: it pings on its monotonic clock
  /// every third of the negotiated session timeout (client.cpp).
  void notes(const Scenario& s, std::vector<std::string>& out) const override {
    self_renewing_notes(s, "a ZooKeeper client pings on its monotonic clock",
                        "a ZooKeeper client pings every third of its negotiated session timeout", out);
  }

  std::vector<std::string> group_names() const override { return {"zookeeper"}; }
  /// "zookeeper": the servers zk-0 … zk-{n-1}.
  std::vector<NodeGroup> groups(const Scenario& s) const override {
    NodeGroup servers{"zookeeper", {}};
    for (int i = 0; i < s.lock.zookeeper().nodes; ++i) servers.nodes.push_back("zk-" + std::to_string(i));
    return {std::move(servers)};
  }
  std::vector<std::string> role_names() const override { return {"zk-leader"}; }
  bool hands_out_tokens(const Scenario& s) const override { return s.lock.zookeeper().token != ZkToken::kNone; }
  std::vector<Property> own_properties() const override { return {Property::kRaftSafety}; }
  bool takes_more_locks(const LockSpec&, std::string&, std::string&) const override { return true; }
  std::optional<ScenarioProblem> validate_locks(const Scenario&, const std::vector<std::string>& all) const override {
    for (std::size_t i = 0; i < all.size(); ++i) {
      const std::string path = i == 0 ? std::string("lock.key") : "lock.keys[" + std::to_string(i - 1) + "]";
      FENCESIM_CHECK(lock_path_problem(path, all[i]));
      for (std::size_t j = 0; j < i; ++j) {
        if (lock_path(all[i]) == lock_path(all[j])) {
          const std::string other = j == 0 ? std::string("lock.key") : "lock.keys[" + std::to_string(j - 1) + "]";
          return problem(path,
                         "the lock path " + quote_text(lock_path(all[i])) + " is the lock path of " + other + " (" +
                             quote_text(all[j]) + "): a key without \"/\" is the path under \"/\"",
                         "choose another key, or name that lock " + quote_text(all[j]) + " in clients[].lock");
        }
      }
    }
    return std::nullopt;
  }

  void report_settings(const Scenario& s, KeyWriter& out) const override {
    const ZooKeeperSpec& z = s.lock.zookeeper();
    out.duration("requested_ttl", s.lock.requested_ttl);
    out.integer("nodes", z.nodes);
    out.duration("tick_time", z.tick_time);
    out.duration("min_session_timeout", min_session_timeout(z));
    out.duration("max_session_timeout", max_session_timeout(z));
    out.integer("sync_limit", z.sync_limit);
    out.text("token", word(z.token));
    out.duration("container_check_interval", z.container_check_interval);
  }
  std::string report_design(const Scenario& s) const override {
    const ZooKeeperSpec& z = s.lock.zookeeper();
    static const char* const kToken[] = {"the lock node's czxid", "the lock node's sequence number", "none"};
    return fmt::format(" ({} servers, lock path {}, token {})", z.nodes, lock_path(s.lock.key),
                       kToken[static_cast<int>(z.token)]) +
           ", session timeout " + fmt_d(s.lock.ttl);
  }
  std::string summary_design(const Scenario& s) const override {
    return fmt::format(" session {} nodes {} token {}", fmt_d(s.lock.ttl), s.lock.zookeeper().nodes,
                       word(s.lock.zookeeper().token));
  }
  std::optional<ScenarioProblem> validate(const Scenario& s, const ScenarioSource&) const override {
    return validate_zookeeper(s);
  }
  std::unique_ptr<LockService> build(ServiceContext& ctx) const override {
    return std::make_unique<ZooKeeperService>(ctx.sim, ctx.history, ctx.scenario, ctx.groups.at(0));
  }
};

}  // namespace

const ServiceDescriptor& descriptor() {
  static const ZooKeeperDescriptor kZooKeeper;
  return kZooKeeper;
}

// ====================================================== ZooKeeperService ==

ZooKeeperService::ZooKeeperService(sim::Simulation& s, History& h, const Scenario& sc, std::vector<NodeId> servers)
    : sim_(s), history_(h), lock_(sc.lock), spec_(sc.lock.zookeeper()), server_ids_(std::move(servers)) {
  lock_paths_.insert(lock_path(lock_.key));
  for (const std::string& k : lock_.keys) lock_paths_.insert(lock_path(k));
  raft::Config cfg;
  cfg.members = server_ids_;
  // A follower gives its leader up after syncLimit ticks without hearing
  // from it; Raft counts heartbeats of tickTime / 2 (the leader's ping).
  cfg.heartbeat = spec_.tick_time / 2;
  cfg.election_timeout = spec_.sync_limit * spec_.tick_time;
  cfg.pre_vote = true;
  for (std::size_t i = 0; i < server_ids_.size(); ++i) {
    servers_.push_back(
        std::make_unique<ZkServer>(*this, sim_.node(server_ids_[i]), static_cast<int>(i), cfg, &raft_history_));
  }
}

ZooKeeperService::~ZooKeeperService() = default;

void ZooKeeperService::start() {
  for (auto& s : servers_) s->start();
}

std::optional<NodeId> ZooKeeperService::leader() const {
  return raft::highest_term_leader(servers_, [](const auto& s) -> const raft::RaftNode& { return s->raft(); });
}

std::optional<NodeId> ZooKeeperService::resolve_role(const std::string& role, std::string& why) const {
  if (role != "zk-leader") return LockService::resolve_role(role, why);
  auto l = leader();
  if (!l) why = "there is no ZooKeeper leader";
  return l;
}

std::unique_ptr<client::LockClient> ZooKeeperService::make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                                  std::size_t index) {
  const ClientLibrary lib = c.library.value_or(ClientLibrary::kCurator);
  return zookeeper::make_client(*this, node, h, c, lock_for(lock_, c), lib, server_ids_, index);
}

std::vector<Verdict> ZooKeeperService::own_verdicts() const {
  return {raft_safety_verdict(raft::check_raft_safety(raft_history_))};
}

std::optional<std::uint64_t> ZooKeeperService::fingerprint() const { return raft_fingerprint(raft_history_); }

bool ZooKeeperService::is_lock_node(const std::string& path) const {
  const auto slash = last_slash(path);
  return slash != std::string::npos && slash > 0 && lock_paths_.count(std::string_view(path).substr(0, slash)) != 0;
}

void ZooKeeperService::on_owner(NodeId client, const std::string& path, const Stat& stat, NodeId server) {
  if (!granted_.insert(path).second) return;  // the same hold taken again
  history_.grant(sim_.now(), sim_.node(client).name(), path, token_of(spec_.token, path, stat),
                 sim_.node(server).name());
  // A client that took its node from a lagging server's answer may hold a
  // node the leader has deleted already: its lease at the service is over.
  const auto l = leader();
  if (!l) return;
  for (const auto& s : servers_) {
    if (s->node().id() == *l && s->tree().count(path) == 0 && history_.lease_ends.count(path) == 0) {
      history_.lease_end(sim_.now(), path, "deleted at the service before the client took it", LeaseEndCause::kDeleted);
    }
  }
}

void ZooKeeperService::on_lock_node_deleted(ZkServer& s, const std::string& path, std::string_view why,
                                            LeaseEndCause cause) {
  // A lock node's lease ends at the service when the leader applies the
  // transaction that deletes it; a node nobody held (a waiter's) has none.
  if (!s.raft().is_leader() || granted_.count(path) == 0) return;
  history_.lease_end(sim_.now(), path, std::string(why), cause);
}

void ZooKeeperService::on_leader(ZkServer& s) {
  for (const std::string& path : granted_) {
    if (history_.lease_ends.count(path) != 0 || s.tree().count(path) != 0) continue;
    history_.lease_end(sim_.now(), path, "deleted before " + s.node().name() + " took over as leader",
                       LeaseEndCause::kDeleted);
  }
}

}  // namespace fencesim::zookeeper
