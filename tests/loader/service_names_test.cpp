// The loader's node, group and role names and the service-specific faults,
// now taken from the lock services (models/lock_service.hpp): the whole
// messages, as the loader printed them before the seam.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "loader/loader.hpp"

namespace fencesim {
namespace {

using nlohmann::json;

json scenario(const json& lock) {
  json j = json::parse(R"({
    "scenario": "t", "duration": "60s", "resource": {"kind": "fenced"},
    "clients": [{"name": "A", "workload": {"kind": "counter"}}, {"name": "B", "workload": {"kind": "counter"}}]
  })");
  j["lock"] = lock;
  return j;
}
const json kRedis = {{"service", "redis"}, {"ttl", "9s"}, {"replicas", 1}};
const json kEtcd = {{"service", "etcd"}, {"ttl", "3s"}};
const json kNone = {{"service", "none"}};

std::string error_of(const json& j) {
  LoadResult r = load_scenario_text(j.dump(), "t.json");
  EXPECT_FALSE(r.ok());
  return r.error ? r.error->message : "";
}

json with_fault(json j, const json& f) {
  j["faults"] = json::array({f});
  return j;
}

TEST(LoaderServiceNames, ARoleOfAnotherServiceNamesItsService) {
  EXPECT_EQ(error_of(with_fault(scenario(kEtcd),
                                {{"at", "1s"}, {"kind", "pause"}, {"target", "redis-primary"}, {"duration", "1s"}})),
            "the role \"redis-primary\" needs the Redis service; this scenario's lock service is etcd");
  EXPECT_EQ(error_of(with_fault(scenario(kNone), {{"at", "1s"}, {"kind", "crash"}, {"target", "etcd-leader"}})),
            "the role \"etcd-leader\" needs the etcd service; this scenario's lock service is none");
}

// The groups listed are those with nodes in this scenario: never the empty
// groups of another lock service ("etcd" in a Redis scenario).
TEST(LoaderServiceNames, UnknownNodesListNodesRolesAndTheGroupsWithNodes) {
  EXPECT_EQ(error_of(with_fault(scenario(kRedis), {{"at", "1s"}, {"kind", "partition"}, {"isolate", {"nodez"}}})),
            "unknown node \"nodez\"; nodes in this scenario are A, B, redis-0, redis-1, sentinel-0, sentinel-1, "
            "sentinel-2, resource, roles redis-primary, groups clients, redis, sentinels, resources");
  EXPECT_EQ(error_of(with_fault(scenario(kEtcd), {{"at", "1s"}, {"kind", "partition"}, {"isolate", {"nodez"}}})),
            "unknown node \"nodez\"; nodes in this scenario are A, B, etcd-0, etcd-1, etcd-2, resource, roles "
            "etcd-leader, groups clients, etcd, resources");
  // No suggestion of a group that is empty here, however near the typo.
  const std::string none =
      error_of(with_fault(scenario(kNone), {{"at", "1s"}, {"kind", "partition"}, {"isolate", {"sentinelz"}}}));
  EXPECT_EQ(none.find("sentinels"), std::string::npos) << none;
  EXPECT_NE(none.find("groups clients, resources"), std::string::npos) << none;
  EXPECT_EQ(error_of(with_fault(scenario(kNone), {{"at", "1s"}, {"kind", "partition"}, {"isolate", {"etcd"}}})),
            "the group \"etcd\" has no nodes in this scenario (lock service none)");
  EXPECT_EQ(error_of(with_fault(scenario(kRedis),
                                {{"at", "1s"}, {"kind", "pause"}, {"target", "sentinels"}, {"duration", "1s"}})),
            "\"sentinels\" is a group; a target is a single node or a role (redis-primary, etcd-leader, zk-leader, "
            "hz-leader)");
}

TEST(LoaderServiceNames, RedlockPoolsNameEachPoolsReplicasAndSentinels) {
  const json pools = {{"service", "redis"}, {"ttl", "9s"}, {"redlock", 2}, {"replicas", 1}, {"sentinels", 1}};
  json j = scenario(pools);
  j["resource"] = {{"kind", "unfenced"}};
  EXPECT_EQ(error_of(with_fault(j, {{"at", "1s"}, {"kind", "partition"}, {"isolate", {"nodez"}}})),
            "unknown node \"nodez\"; nodes in this scenario are A, B, redis-0, redis-0-r1, redis-1, redis-1-r1, "
            "sentinel-0-0, sentinel-1-0, resource, roles redis-primary, groups clients, redis, sentinels, redis-p0, "
            "redis-p1, resources");
  // The pool groups are aliases: a node list may name one pool.
  const LoadResult r = load_scenario_text(
      with_fault(j, {{"at", "1s"}, {"kind", "partition"}, {"isolate", {"redis-p1"}}}).dump(), "t.json");
  EXPECT_TRUE(r.ok()) << (r.error ? r.error->message : "");
}

TEST(LoaderServiceNames, GroupAndRoleNamesAreReservedForClients) {
  json j = scenario(kEtcd);
  j["clients"][0]["name"] = "sentinels";
  EXPECT_EQ(error_of(j), "the client name \"sentinels\" is reserved: it is a group name in node lists");
  j["clients"][0]["name"] = "redis-primary";
  EXPECT_EQ(error_of(j), "the client name \"redis-primary\" is reserved: it is a role name in node lists");
}

TEST(LoaderServiceNames, ServiceFaultsAskTheirService) {
  const json failover = {{"at", "1s"}, {"kind", "failover"}, {"target", "redis"}};
  const json reset = {{"at", "1s"}, {"kind", "counter_reset"}, {"target", "redis"}};
  EXPECT_EQ(error_of(with_fault(scenario(kEtcd), failover)),
            "failover needs the Redis service (Sentinel promotes a replica); this scenario's lock service is etcd");
  EXPECT_EQ(error_of(with_fault(scenario(kNone), reset)),
            "counter_reset of \"redis\" needs the Redis service; this scenario's lock service is none");
  json no_replica = kRedis;
  no_replica["replicas"] = 0;
  EXPECT_EQ(error_of(with_fault(scenario(no_replica), failover)),
            "failover needs a replica to promote: set lock.replicas to 1 or more");
  const json redlock = {{"service", "redis"}, {"ttl", "9s"}, {"redlock", 3}};
  EXPECT_EQ(error_of(with_fault(scenario(redlock), reset)),
            "counter_reset of \"redis\" needs the token counter: lock.token must be \"incr\" (Redlock hands out no "
            "token)");
  EXPECT_EQ(error_of(with_fault(scenario(kRedis), {{"at", "1s"}, {"kind", "failover"}, {"target", "etcd"}})),
            "unknown value \"etcd\"; expected one of \"redis\"");
  LoadResult ok = load_scenario_text(with_fault(scenario(kRedis), failover).dump(), "t.json");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.scenario->faults.at(0).target, "redis");
}

TEST(LoaderServiceNames, PropertiesThatDoNotApplySayWhy) {
  json j = scenario(kRedis);
  j["expect"] = {{"raft_safety", "holds"}};
  EXPECT_EQ(error_of(j),
            "cannot expect raft_safety: it does not apply to this design, because it is checked only for the etcd, "
            "ZooKeeper and Hazelcast services; this scenario's is redis (it would be reported not_applicable)");
}

}  // namespace
}  // namespace fencesim
