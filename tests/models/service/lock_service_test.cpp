// The lock-service seam (models/lock_service.hpp): each built-in
// descriptor's node groups, roles, faults and properties, the registry, and
// the generic NodeDirectory built from them.
#include "models/lock_service.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "models/checkers/checkers.hpp"
#include "models/world.hpp"

namespace fencesim {
namespace {

using Names = std::vector<std::string>;

Scenario with_service(ServiceKind k) {
  Scenario s;
  s.name = "service";
  s.lock.set_service(k);
  ClientSpec a;
  a.name = "A";
  a.renew_interval = 3s;
  ClientSpec b;
  b.name = "B";
  b.renew_interval = 3s;
  s.clients = {a, b};
  return s;
}

Names group_names_of(const NodeDirectory& d) {
  Names out;
  for (const NodeGroup& g : d.groups) out.push_back(g.name);
  return out;
}

TEST(ServiceRegistry, HoldsTheBuiltInServicesInOrder) {
  ASSERT_GE(service_registry().size(), 3u);
  EXPECT_EQ(service_registry()[0]->name(), "redis");
  EXPECT_EQ(service_registry()[1]->name(), "etcd");
  EXPECT_EQ(service_registry()[2]->name(), "none");
  EXPECT_EQ(service_registry()[3]->name(), "queue");
  EXPECT_EQ(service_registry()[4]->name(), "table");
  EXPECT_EQ(&service_descriptor(ServiceKind::kTable), &table::descriptor());
  EXPECT_EQ(&service_descriptor(ServiceKind::kQueue), &queue::descriptor());
  EXPECT_EQ(&service_descriptor(ServiceKind::kRedis), &redis::descriptor());
  EXPECT_EQ(&service_descriptor(ServiceKind::kEtcd), &etcd::descriptor());
  EXPECT_EQ(&service_descriptor(ServiceKind::kNone), &none_descriptor());
  EXPECT_EQ(find_service("etcd"), &etcd::descriptor());
  EXPECT_EQ(service_registry()[5]->name(), "zookeeper");
  EXPECT_EQ(&service_descriptor(ServiceKind::kZooKeeper), &zookeeper::descriptor());
  EXPECT_EQ(service_registry()[6]->name(), "hazelcast");
  EXPECT_EQ(&service_descriptor(ServiceKind::kHazelcast), &hazelcast::descriptor());
  EXPECT_EQ(find_service("consul"), nullptr);
  EXPECT_THROW(service_descriptor(static_cast<ServiceKind>(77)), std::out_of_range);
}

TEST(ServiceRegistry, GroupAndRoleNamesAreThoseTheLoaderReserves) {
  EXPECT_EQ(all_group_names(), (Names{"clients", "redis", "sentinels", "etcd", "queues", "tables", "zookeeper",
                                      "hazelcast", "resources"}));
  EXPECT_EQ(all_role_names(), (Names{"redis-primary", "etcd-leader", "zk-leader", "hz-leader"}));
  EXPECT_EQ(role_owner("zk-leader"), &zookeeper::descriptor());
  EXPECT_EQ(role_owner("hz-leader"), &hazelcast::descriptor());
  EXPECT_EQ(role_owner("redis-primary"), &redis::descriptor());
  EXPECT_EQ(role_owner("etcd-leader"), &etcd::descriptor());
  EXPECT_EQ(role_owner("redis-0"), nullptr);
  EXPECT_EQ(property_owner(Property::kRaftSafety), &etcd::descriptor());
  EXPECT_EQ(property_owner(Property::kMutualExclusion), nullptr);
}

TEST(ServiceRegistry, RegisteringAKindTwiceIsRefused) {
  class Again final : public ServiceDescriptor {
   public:
    ServiceKind kind() const override { return ServiceKind::kEtcd; }
    std::string name() const override { return "etcd-again"; }
    std::unique_ptr<LockService> build(ServiceContext&) const override { return nullptr; }
  };
  EXPECT_THROW(register_service(std::make_unique<Again>()), std::invalid_argument);
  EXPECT_EQ(service_registry().size(), 7u);
}

TEST(ServiceRegistry, ARunOfAnUnregisteredKindIsUnsupported) {
  Scenario s = with_service(static_cast<ServiceKind>(77));
  EXPECT_THROW(run_scenario(s), UnsupportedScenario);
}

TEST(RedisDescriptor, PrimaryReplicasAndSentinels) {
  Scenario s = with_service(ServiceKind::kRedis);
  s.lock.redis().replicas = 2;
  s.lock.redis().sentinels = 3;
  const auto groups = redis::descriptor().groups(s);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "redis");
  EXPECT_EQ(groups[0].nodes, (Names{"redis-0", "redis-1", "redis-2"}));
  EXPECT_EQ(groups[1].name, "sentinels");
  EXPECT_EQ(groups[1].nodes, (Names{"sentinel-0", "sentinel-1", "sentinel-2"}));
  EXPECT_EQ(redis::descriptor().roles(s), (Names{"redis-primary"}));
  EXPECT_TRUE(redis::descriptor().hands_out_tokens(s));
  EXPECT_EQ(redis::descriptor().display_name(), "Redis");

  const NodeDirectory d = directory(s);
  EXPECT_EQ(d.all(),
            (Names{"A", "B", "redis-0", "redis-1", "redis-2", "sentinel-0", "sentinel-1", "sentinel-2", "resource"}));
  EXPECT_EQ(group_names_of(d), (Names{"clients", "redis", "sentinels", "etcd", "queues", "tables", "zookeeper",
                                      "hazelcast", "resources"}));
  EXPECT_EQ(d.group("etcd"), Names{});
  EXPECT_EQ(d.group("nodes"), std::nullopt);
  EXPECT_EQ(d.roles(), (Names{"redis-primary"}));
  EXPECT_EQ(d.clients(), (Names{"A", "B"}));
  EXPECT_EQ(d.service_nodes(), (Names{"redis-0", "redis-1", "redis-2", "sentinel-0", "sentinel-1", "sentinel-2"}));
  EXPECT_TRUE(d.is_node("sentinel-2"));
  EXPECT_FALSE(d.is_node("sentinel-3"));
}

TEST(RedisDescriptor, WithoutSentinelsTheGroupIsEmpty) {
  Scenario s = with_service(ServiceKind::kRedis);
  s.lock.redis().replicas = 1;
  s.lock.redis().sentinels = 0;
  s.resource.replicas = 2;
  const NodeDirectory d = directory(s);
  EXPECT_EQ(d.group("sentinels"), Names{});
  EXPECT_EQ(d.all(), (Names{"A", "B", "redis-0", "redis-1", "resource", "resource-replica-0", "resource-replica-1"}));
  FaultSpec failover;
  failover.kind = FaultKind::kFailover;
  failover.target = "redis";
  EXPECT_EQ(redis::descriptor().fault_problem(s, failover), "");
  s.lock.redis().replicas = 0;
  EXPECT_EQ(redis::descriptor().fault_problem(s, failover),
            "failover needs a replica to promote: set lock.replicas to 1 or more");
  EXPECT_EQ(redis::descriptor().fault_needs(failover),
            "failover needs the Redis service (Sentinel promotes a replica)");
}

TEST(RedisDescriptor, RedlockHasIndependentPrimariesAndNoToken) {
  Scenario s = with_service(ServiceKind::kRedis);
  s.lock.redis().redlock = 5;
  s.lock.redis().replicas = 0;
  s.lock.redis().sentinels = 0;
  s.lock.redis().token = RedisToken::kNone;
  const auto groups = redis::descriptor().groups(s);
  EXPECT_EQ(groups[0].nodes, (Names{"redis-0", "redis-1", "redis-2", "redis-3", "redis-4"}));
  EXPECT_TRUE(groups[1].nodes.empty());
  EXPECT_FALSE(redis::descriptor().hands_out_tokens(s));
  EXPECT_EQ(redis::descriptor().why_no_token(s), "Redlock hands out no fencing token (lock.token is \"none\")");
  FaultSpec reset;
  reset.kind = FaultKind::kCounterReset;
  reset.target = "redis";
  EXPECT_EQ(redis::descriptor().fault_problem(s, reset),
            "counter_reset of \"redis\" needs the token counter: lock.token must be \"incr\" (Redlock hands out no "
            "token)");
  EXPECT_EQ(redis::descriptor().fault_needs(reset), "counter_reset of \"redis\" needs the Redis service");
  FaultSpec failover;
  failover.kind = FaultKind::kFailover;
  EXPECT_EQ(redis::descriptor().fault_problem(s, failover),
            "failover does not apply in Redlock mode: the primaries have no replicas");
  EXPECT_EQ(redis::descriptor().service_faults(),
            (std::vector<FaultKind>{FaultKind::kFailover, FaultKind::kCounterReset}));
}

TEST(EtcdDescriptor, MembersRoleAndRaftSafety) {
  Scenario s = with_service(ServiceKind::kEtcd);
  s.lock.etcd().nodes = 5;
  const NodeDirectory d = directory(s);
  EXPECT_EQ(d.all(), (Names{"A", "B", "etcd-0", "etcd-1", "etcd-2", "etcd-3", "etcd-4", "resource"}));
  EXPECT_EQ(d.group("redis"), Names{});
  EXPECT_EQ(d.group("sentinels"), Names{});
  EXPECT_EQ(d.roles(), (Names{"etcd-leader"}));
  EXPECT_EQ(etcd::descriptor().own_properties(), (std::vector<Property>{Property::kRaftSafety}));
  EXPECT_TRUE(etcd::descriptor().service_faults().empty());
  EXPECT_TRUE(etcd::descriptor().hands_out_tokens(s));
  s.lock.etcd().token = EtcdToken::kNone;
  EXPECT_FALSE(etcd::descriptor().hands_out_tokens(s));
  EXPECT_EQ(etcd::descriptor().why_no_token(s), "the lock service hands out no token (lock.token is \"none\")");
}

TEST(QueueDescriptor, OneDurableQueueNodeNoRolesNoTokenSequence) {
  Scenario s = with_service(ServiceKind::kQueue);
  const NodeDirectory d = directory(s);
  EXPECT_EQ(d.all(), (Names{"A", "B", "queue", "resource"}));
  EXPECT_EQ(d.group("queues"), (Names{"queue"}));
  EXPECT_TRUE(d.roles().empty());
  EXPECT_EQ(d.service_nodes(), (Names{"queue"}));
  EXPECT_TRUE(queue::descriptor().takes_lock());
  EXPECT_FALSE(queue::descriptor().hands_out_tokens(s));
  EXPECT_NE(queue::descriptor().why_no_token(s).find("per message"), std::string::npos);
  EXPECT_TRUE(queue::descriptor().service_faults().empty());
  EXPECT_TRUE(queue::descriptor().own_properties().empty());
}

TEST(TableDescriptor, OneDatabaseNodeNoRolesTheVersionTokenOnRequest) {
  Scenario s = with_service(ServiceKind::kTable);
  const NodeDirectory d = directory(s);
  EXPECT_EQ(d.all(), (Names{"A", "B", "db", "resource"}));
  EXPECT_EQ(d.group("tables"), (Names{"db"}));
  EXPECT_TRUE(d.roles().empty());
  EXPECT_EQ(d.service_nodes(), (Names{"db"}));
  EXPECT_TRUE(table::descriptor().takes_lock());
  EXPECT_FALSE(table::descriptor().hands_out_tokens(s));  // the libraries' default
  s.lock.table().token = TableToken::kVersion;
  EXPECT_TRUE(table::descriptor().hands_out_tokens(s));
  EXPECT_TRUE(table::descriptor().service_faults().empty());
  EXPECT_TRUE(table::descriptor().own_properties().empty());
}

TEST(NoneDescriptor, NoNodesNoRolesNoLock) {
  Scenario s = with_service(ServiceKind::kNone);
  const NodeDirectory d = directory(s);
  EXPECT_EQ(d.all(), (Names{"A", "B", "resource"}));
  EXPECT_TRUE(d.roles().empty());
  EXPECT_TRUE(d.service_nodes().empty());
  EXPECT_EQ(group_names_of(d), (Names{"clients", "redis", "sentinels", "etcd", "queues", "tables", "zookeeper",
                                      "hazelcast", "resources"}));
  EXPECT_FALSE(none_descriptor().takes_lock());
  EXPECT_FALSE(none_descriptor().hands_out_tokens(s));
  EXPECT_EQ(none_descriptor().why_no_token(s), "the design takes no lock, so it hands out no token");
}

}  // namespace
}  // namespace fencesim
