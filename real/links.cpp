// Which link faults fencesim-real can apply (real/links.hpp).
#include "real/links.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace fencesim::real {

namespace {

enum class NodeKind { kClient, kResource, kRedis, kSentinel, kEtcd, kRole, kOther };

NodeKind kind_of(const Scenario& s, const std::string& n) {
  for (const ClientSpec& c : s.clients) {
    if (c.name == n) return NodeKind::kClient;
  }
  if (n == "resource" || n.rfind("resource-replica-", 0) == 0) return NodeKind::kResource;
  if (n == "redis-primary" || n == "etcd-leader") return NodeKind::kRole;
  if (n.rfind("redis-", 0) == 0) return NodeKind::kRedis;
  if (n.rfind("sentinel-", 0) == 0) return NodeKind::kSentinel;
  if (n.rfind("etcd-", 0) == 0) return NodeKind::kEtcd;
  return NodeKind::kOther;
}

/// "" when the link between `a` and `b` is on a proxy or carries nothing;
/// otherwise why it cannot be cut.
std::string link_reason(const Scenario& s, const std::string& a, const std::string& b) {
  const NodeKind ka = kind_of(s, a), kb = kind_of(s, b);
  // Clients reach every server through their own proxies; clients do not
  // talk to each other, and the resource talks to no server.
  if (ka == NodeKind::kClient || kb == NodeKind::kClient) return "";
  if (ka == NodeKind::kResource || kb == NodeKind::kResource) return "";
  if (ka == NodeKind::kRedis && kb == NodeKind::kRedis && (a == "redis-0" || b == "redis-0")) return "";
  if (ka == NodeKind::kRole || kb == NodeKind::kRole) {
    return fmt::format(
        "the link {} <-> {}: a role between two servers (the runner proxies a server's links to "
        "clients and a replica's link to redis-0 only)",
        a, b);
  }
  if (ka == NodeKind::kRedis && kb == NodeKind::kRedis) {
    return fmt::format("the link {} <-> {}: only a replica's link to redis-0, the initial primary, is on a proxy", a,
                       b);
  }
  if (ka == NodeKind::kSentinel || kb == NodeKind::kSentinel) {
    return fmt::format(
        "the link {} <-> {}: Sentinel's links are not on a proxy (Sentinel learns one address per "
        "node from INFO and hello messages and shares it with every peer)",
        a, b);
  }
  if (ka == NodeKind::kEtcd && kb == NodeKind::kEtcd) {
    return fmt::format(
        "the link {} <-> {}: etcd's peer links are not on a proxy (a member advertises one peer URL "
        "to every member, and member IDs are hashed from those URLs)",
        a, b);
  }
  return fmt::format("the link {} <-> {} is not on a proxy", a, b);
}

}  // namespace

std::string link_fault_reason(const Scenario& s, const FaultSpec& f) {
  auto refuse = [&f](const std::string& why) {
    return fmt::format("{} ({}) needs {}", to_string(f.kind), f.origin, why);
  };
  if (f.kind == FaultKind::kHeal) return "";
  const NodeDirectory dir = directory(s);
  if (f.kind == FaultKind::kPartition) {
    // Every pair on two sides of the partition is a link to cut.
    std::vector<std::pair<std::string, std::string>> pairs;
    if (!f.isolate.empty()) {
      const std::set<std::string> in(f.isolate.begin(), f.isolate.end());
      std::vector<std::string> all = dir.all();
      for (const std::string& r : dir.roles()) all.push_back(r);
      for (const std::string& a : f.isolate) {
        for (const std::string& b : all) {
          if (!in.count(b)) pairs.emplace_back(a, b);
        }
      }
    } else {
      for (std::size_t i = 0; i < f.groups.size(); ++i) {
        for (std::size_t j = i + 1; j < f.groups.size(); ++j) {
          for (const std::string& a : f.groups[i]) {
            for (const std::string& b : f.groups[j]) pairs.emplace_back(a, b);
          }
        }
      }
    }
    for (const auto& [a, b] : pairs) {
      // An isolated role against the other roles or itself: only real nodes count.
      if (a == b) continue;
      if (kind_of(s, b) == NodeKind::kRole && kind_of(s, a) != NodeKind::kRole && !f.isolate.empty()) {
        // "isolate [redis-0]" against the role redis-primary: the role is
        // one of the listed nodes or another; the nodes themselves are checked.
        continue;
      }
      if (std::string why = link_reason(s, a, b); !why.empty()) return refuse(why);
    }
    return "";
  }
  if (f.kind == FaultKind::kSlow) {
    const NodeKind k = kind_of(s, f.target);
    if (k == NodeKind::kClient || k == NodeKind::kResource) return "";
    std::vector<std::string> all = dir.all();
    for (const std::string& b : all) {
      if (b == f.target) continue;
      if (k == NodeKind::kRole && kind_of(s, b) == NodeKind::kRedis && s.lock.redis().sentinels == 0) continue;
      if (std::string why = link_reason(s, f.target, b); !why.empty()) return refuse(why);
    }
    return "";
  }
  return "";
}

}  // namespace fencesim::real
