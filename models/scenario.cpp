#include "models/scenario.hpp"

#include <algorithm>

namespace fencesim {

const char* to_string(ServiceKind k) {
  switch (k) {
    case ServiceKind::kRedis: return "redis";
    case ServiceKind::kEtcd: return "etcd";
    case ServiceKind::kNone: return "none";
  }
  return "?";
}
const char* to_string(ResourceKind k) {
  switch (k) {
    case ResourceKind::kUnfenced: return "unfenced";
    case ResourceKind::kFenced: return "fenced";
    case ResourceKind::kCas: return "cas";
  }
  return "?";
}
const char* to_string(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kSequenceAllocator: return "sequence_allocator";
    case WorkloadKind::kCounter: return "counter";
    case WorkloadKind::kWriter: return "writer";
  }
  return "?";
}
const char* to_string(Property p) {
  switch (p) {
    case Property::kMutualExclusion: return "mutual_exclusion";
    case Property::kNoStaleWrite: return "no_stale_write";
    case Property::kNoLostUpdate: return "no_lost_update";
    case Property::kTokenMonotonic: return "token_monotonic";
    case Property::kProgress: return "progress";
    case Property::kRaftSafety: return "raft_safety";
  }
  return "?";
}
const char* to_string(Expectation e) { return e == Expectation::kHolds ? "holds" : "violated"; }

const std::vector<Property>& all_properties() {
  static const std::vector<Property> kAll = {Property::kMutualExclusion, Property::kNoStaleWrite,
                                             Property::kNoLostUpdate,    Property::kTokenMonotonic,
                                             Property::kProgress,        Property::kRaftSafety};
  return kAll;
}

std::optional<Property> property_from_string(const std::string& s) {
  for (Property p : all_properties()) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

std::vector<std::string> NodeDirectory::all() const {
  std::vector<std::string> out = clients;
  for (const auto* v : {&redis, &sentinels, &etcd, &resources}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

std::optional<std::vector<std::string>> NodeDirectory::group(const std::string& name) const {
  if (name == "clients") return clients;
  if (name == "redis") return redis;
  if (name == "sentinels") return sentinels;
  if (name == "etcd") return etcd;
  if (name == "resources") return resources;
  return std::nullopt;
}

bool NodeDirectory::is_node(const std::string& name) const {
  const auto nodes = all();
  return std::find(nodes.begin(), nodes.end(), name) != nodes.end();
}

std::vector<std::string> NodeDirectory::roles() const {
  std::vector<std::string> out;
  if (!redis.empty()) out.push_back("redis-primary");
  if (!etcd.empty()) out.push_back("etcd-leader");
  return out;
}

NodeDirectory directory(const Scenario& s) {
  NodeDirectory d;
  for (const ClientSpec& c : s.clients) d.clients.push_back(c.name);
  if (s.lock.service == ServiceKind::kRedis) {
    const int primaries = s.lock.redis.redlock > 0 ? s.lock.redis.redlock : 1;
    const int nodes = primaries + (s.lock.redis.redlock > 0 ? 0 : s.lock.redis.replicas);
    for (int i = 0; i < nodes; ++i) d.redis.push_back("redis-" + std::to_string(i));
    for (int i = 0; i < s.lock.redis.sentinels; ++i) d.sentinels.push_back("sentinel-" + std::to_string(i));
  } else if (s.lock.service == ServiceKind::kEtcd) {
    for (int i = 0; i < s.lock.etcd.nodes; ++i) d.etcd.push_back("etcd-" + std::to_string(i));
  }
  d.resources.push_back("resource");
  for (int i = 0; i < s.resource.replicas; ++i) d.resources.push_back("resource-replica-" + std::to_string(i));
  return d;
}

bool property_applies(const Scenario& s, Property p) {
  switch (p) {
    case Property::kMutualExclusion:
    case Property::kNoStaleWrite: return s.lock.service != ServiceKind::kNone;
    case Property::kTokenMonotonic:
      if (s.lock.service == ServiceKind::kRedis) return s.lock.redis.token != RedisToken::kNone;
      if (s.lock.service == ServiceKind::kEtcd) return s.lock.etcd.token != EtcdToken::kNone;
      return false;
    case Property::kNoLostUpdate:
    case Property::kProgress: return true;
    case Property::kRaftSafety: return s.lock.service == ServiceKind::kEtcd;
  }
  return false;
}

}  // namespace fencesim
