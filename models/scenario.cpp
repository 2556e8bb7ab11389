#include "models/scenario.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/lock_service.hpp"
#include "models/words.hpp"

namespace fencesim {

const char* to_string(ServiceKind k) {
  switch (k) {
    case ServiceKind::kRedis: return "redis";
    case ServiceKind::kEtcd: return "etcd";
    case ServiceKind::kNone: return "none";
    case ServiceKind::kQueue: return "queue";
    case ServiceKind::kTable: return "table";
    case ServiceKind::kZooKeeper: return "zookeeper";
    case ServiceKind::kHazelcast: return "hazelcast";
  }
  return "?";
}
const char* to_string(RedisPersistence v) { return word(v); }
const char* to_string(TableExpiry v) { return word(v); }
namespace {
/// The ServiceKind of each alternative of ServiceSpec (OtherServiceSettings
/// carries its own).
struct KindOf {
  ServiceKind operator()(const std::monostate&) const { return ServiceKind::kNone; }
  ServiceKind operator()(const RedisSpec&) const { return ServiceKind::kRedis; }
  ServiceKind operator()(const EtcdSpec&) const { return ServiceKind::kEtcd; }
  ServiceKind operator()(const QueueSpec&) const { return ServiceKind::kQueue; }
  ServiceKind operator()(const TableSpec&) const { return ServiceKind::kTable; }
  ServiceKind operator()(const ZooKeeperSpec&) const { return ServiceKind::kZooKeeper; }
  ServiceKind operator()(const HazelcastSpec&) const { return ServiceKind::kHazelcast; }
  ServiceKind operator()(const OtherServiceSettings& o) const { return o.kind; }
};

ServiceSpec default_settings(ServiceKind k) {
  switch (k) {
    case ServiceKind::kNone: return std::monostate{};
    case ServiceKind::kRedis: return RedisSpec{};
    case ServiceKind::kEtcd: return EtcdSpec{};
    case ServiceKind::kQueue: return QueueSpec{};
    case ServiceKind::kTable: return TableSpec{};
    case ServiceKind::kZooKeeper: return ZooKeeperSpec{};
    case ServiceKind::kHazelcast: return HazelcastSpec{};
  }
  return OtherServiceSettings{k, nullptr};  // a registered service
}

// The settings of type Spec in `settings` (a ServiceSpec, const or not),
// or std::logic_error naming both services.
template <class Spec, class Settings>
auto& settings_of(Settings& settings, ServiceKind wanted) {
  if (auto* p = std::get_if<Spec>(&settings)) return *p;
  throw std::logic_error(std::string("LockSpec: the settings of lock.service \"") + to_string(wanted) +
                         "\" asked of a scenario whose lock.service is \"" + to_string(std::visit(KindOf{}, settings)) +
                         "\"");
}
}  // namespace

ServiceKind LockSpec::service() const { return std::visit(KindOf{}, settings); }
void LockSpec::set_service(ServiceKind k) {
  if (service() != k) settings = default_settings(k);
}
RedisSpec& LockSpec::redis() { return settings_of<RedisSpec>(settings, ServiceKind::kRedis); }
const RedisSpec& LockSpec::redis() const { return settings_of<RedisSpec>(settings, ServiceKind::kRedis); }
EtcdSpec& LockSpec::etcd() { return settings_of<EtcdSpec>(settings, ServiceKind::kEtcd); }
const EtcdSpec& LockSpec::etcd() const { return settings_of<EtcdSpec>(settings, ServiceKind::kEtcd); }
QueueSpec& LockSpec::queue() { return settings_of<QueueSpec>(settings, ServiceKind::kQueue); }
const QueueSpec& LockSpec::queue() const { return settings_of<QueueSpec>(settings, ServiceKind::kQueue); }
TableSpec& LockSpec::table() { return settings_of<TableSpec>(settings, ServiceKind::kTable); }
const TableSpec& LockSpec::table() const { return settings_of<TableSpec>(settings, ServiceKind::kTable); }
ZooKeeperSpec& LockSpec::zookeeper() { return settings_of<ZooKeeperSpec>(settings, ServiceKind::kZooKeeper); }
const ZooKeeperSpec& LockSpec::zookeeper() const {
  return settings_of<ZooKeeperSpec>(settings, ServiceKind::kZooKeeper);
}
HazelcastSpec& LockSpec::hazelcast() { return settings_of<HazelcastSpec>(settings, ServiceKind::kHazelcast); }
const HazelcastSpec& LockSpec::hazelcast() const {
  return settings_of<HazelcastSpec>(settings, ServiceKind::kHazelcast);
}
const ServiceSettings* LockSpec::other() const {
  const auto* o = std::get_if<OtherServiceSettings>(&settings);
  return o ? o->settings.get() : nullptr;
}
void LockSpec::set_other(std::shared_ptr<const ServiceSettings> s) {
  std::get<OtherServiceSettings>(settings).settings = std::move(s);
}

std::string redis_counter_key(const LockSpec& l) {
  const auto* redis = std::get_if<RedisSpec>(&l.settings);
  return redis && redis->counter_key ? *redis->counter_key : l.key + ":token";
}

std::string redis_counter_key_of(const LockSpec& l, const std::string& key) {
  return key == l.key ? redis_counter_key(l) : key + ":token";
}

const std::string& lock_of(const LockSpec& l, const ClientSpec& c) { return c.lock.empty() ? l.key : c.lock; }

LockSpec lock_for(const LockSpec& l, const ClientSpec& c) {
  LockSpec out = l;
  const std::string& key = lock_of(l, c);
  if (key != l.key) {
    out.key = key;
    if (l.service() == ServiceKind::kRedis) out.redis().counter_key = redis_counter_key_of(l, key);
  }
  return out;
}
const char* to_string(ResourceKind v) { return word(v); }
const char* to_string(WorkloadKind v) { return word(v); }
const char* to_string(Property v) { return word(v); }
const char* to_string(Expectation e) { return word(e); }
const char* to_string(RetryBackoff v) { return word(v); }

const std::vector<Property>& all_properties() {
  static const std::vector<Property> kAll(kAllProperties.begin(), kAllProperties.end());
  return kAll;
}

std::optional<Property> property_from_string(const std::string& s) {
  for (Property p : all_properties()) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

std::vector<std::string> NodeDirectory::all() const {
  std::vector<std::string> out;
  for (const NodeGroup& g : groups) {
    if (!g.alias) out.insert(out.end(), g.nodes.begin(), g.nodes.end());
  }
  return out;
}

std::optional<std::vector<std::string>> NodeDirectory::group(const std::string& name) const {
  for (const NodeGroup& g : groups) {
    if (g.name == name) return g.nodes;
  }
  return std::nullopt;
}

bool NodeDirectory::is_node(const std::string& name) const {
  for (const NodeGroup& g : groups) {
    if (std::find(g.nodes.begin(), g.nodes.end(), name) != g.nodes.end()) return true;
  }
  return false;
}

namespace {
const std::vector<std::string>& nodes_of(const std::vector<NodeGroup>& groups, const char* name) {
  static const std::vector<std::string> kNone;
  for (const NodeGroup& g : groups) {
    if (g.name == name) return g.nodes;
  }
  return kNone;
}
}  // namespace

const std::vector<std::string>& NodeDirectory::clients() const { return nodes_of(groups, "clients"); }
const std::vector<std::string>& NodeDirectory::resources() const { return nodes_of(groups, "resources"); }

std::vector<std::string> NodeDirectory::service_nodes() const {
  std::vector<std::string> out;
  for (const NodeGroup& g : groups) {
    if (g.name != "clients" && g.name != "resources" && !g.alias) out.insert(out.end(), g.nodes.begin(), g.nodes.end());
  }
  return out;
}

NodeDirectory directory(const Scenario& s) {
  NodeDirectory d;
  NodeGroup clients{"clients", {}};
  for (const ClientSpec& c : s.clients) clients.nodes.push_back(c.name);
  d.groups.push_back(std::move(clients));
  for (const ServiceDescriptor* svc : service_registry()) {
    if (svc->kind() == s.lock.service()) {
      for (NodeGroup& g : svc->groups(s)) d.groups.push_back(std::move(g));
      d.role_names = svc->roles(s);
    } else {
      for (const std::string& name : svc->group_names()) d.groups.push_back(NodeGroup{name, {}});
    }
  }
  NodeGroup resources{"resources", {"resource"}};
  for (int i = 0; i < s.resource.replicas; ++i) resources.nodes.push_back("resource-replica-" + std::to_string(i));
  d.groups.push_back(std::move(resources));
  return d;
}

}  // namespace fencesim
