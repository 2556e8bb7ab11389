#include "models/scenario.hpp"

#include <algorithm>

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
std::string redis_counter_key(const LockSpec& l) { return l.redis.counter_key.value_or(l.key + ":token"); }

std::string redis_counter_key_of(const LockSpec& l, const std::string& key) {
  return key == l.key ? redis_counter_key(l) : key + ":token";
}

const std::string& lock_of(const LockSpec& l, const ClientSpec& c) { return c.lock.empty() ? l.key : c.lock; }

LockSpec lock_for(const LockSpec& l, const ClientSpec& c) {
  LockSpec out = l;
  const std::string& key = lock_of(l, c);
  if (key != l.key) {
    out.key = key;
    out.redis.counter_key = redis_counter_key_of(l, key);
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
    if (svc->kind() == s.lock.service) {
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
