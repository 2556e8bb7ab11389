// The JSON Schema (scenarios/schema/scenario.schema.json) and the loader
// accept the same keys and the same words: every enum of the schema equals
// its words table (models/words.hpp), the service names are the registry's,
// the fault kinds the fault table's, and every section's `properties` are
// the loader's keys (format_keys). A key or word added on one side only
// fails here with the difference.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "loader/loader.hpp"
#include "models/etcd/versions.hpp"
#include "models/faults.hpp"
#include "models/lock_service.hpp"
#include "models/words.hpp"

namespace fencesim {
namespace {

using nlohmann::json;
using Set = std::set<std::string>;

const json& schema() {
  static const json kSchema = [] {
    std::ifstream in(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/schema/scenario.schema.json");
    return json::parse(in);
  }();
  return kSchema;
}

/// The schema node at a JSON pointer such as "/$defs/redisLock/properties/token/enum".
Set schema_set(const std::string& pointer) {
  const json& node = schema().at(json::json_pointer(pointer));
  Set out;
  if (node.is_array()) {
    for (const json& w : node) out.insert(w.get<std::string>());
  } else {
    for (auto it = node.begin(); it != node.end(); ++it) out.insert(it.key());
  }
  return out;
}

template <class E>
Set words() {
  const std::vector<std::string> w = word_list<E>();
  return Set(w.begin(), w.end());
}

Set keys(std::initializer_list<const char*> sections) {
  Set out;
  for (const char* s : sections) {
    for (const std::string& k : format_keys(s)) out.insert(k);
  }
  return out;
}

TEST(WordsAndSchema, EveryEnumOfTheSchemaIsItsWordsTable) {
  EXPECT_EQ(schema_set("/$defs/redisLock/properties/token/enum"), words<RedisToken>());
  EXPECT_EQ(schema_set("/$defs/redisLock/properties/expiry_clock/enum"), words<sim::ClockKind>());
  EXPECT_EQ(schema_set("/$defs/redisLock/properties/persistence/enum"), words<RedisPersistence>());
  EXPECT_EQ(schema_set("/$defs/etcdLock/properties/token/enum"), words<EtcdToken>());
  EXPECT_EQ(schema_set("/$defs/tableLock/properties/expiry/enum"), words<TableExpiry>());
  EXPECT_EQ(schema_set("/$defs/tableLock/properties/token/enum"), words<TableToken>());
  EXPECT_EQ(schema_set("/$defs/resource/properties/kind/enum"), words<ResourceKind>());
  EXPECT_EQ(schema_set("/$defs/resource/properties/check/enum"), words<FenceCheck>());
  EXPECT_EQ(schema_set("/$defs/client/properties/renew_clock/enum"), words<sim::ClockKind>());
  EXPECT_EQ(schema_set("/$defs/client/properties/on_lease_loss/enum"), words<LeaseLossPolicy>());
  EXPECT_EQ(schema_set("/$defs/client/properties/library/enum"), words<ClientLibrary>());
  EXPECT_EQ(schema_set("/$defs/client/properties/connection_policy/enum"), words<ConnectionPolicy>());
  EXPECT_EQ(schema_set("/$defs/zookeeperLock/properties/token/enum"), words<ZkToken>());
  EXPECT_EQ(schema_set("/$defs/workload/properties/kind/enum"), words<WorkloadKind>());
  EXPECT_EQ(schema_set("/$defs/workload/properties/retry_backoff/enum"), words<RetryBackoff>());
  EXPECT_EQ(schema_set("/$defs/clock_jumpFault/properties/clock/enum"), words<ClockSelect>());
  EXPECT_EQ(schema_set("/$defs/verdict/enum"), words<Expectation>());
}

TEST(WordsAndSchema, ServicesVersionsAndFaultKindsComeFromTheirOwners) {
  Set services;
  for (const ServiceDescriptor* d : service_registry()) services.insert(d->name());
  EXPECT_EQ(schema_set("/$defs/lock/properties/service/enum"), services);
  Set versions;
  for (std::string_view v : etcd::known_versions()) versions.insert(std::string(v));
  EXPECT_EQ(schema_set("/$defs/etcdLock/properties/version/enum"), versions);
  Set kinds, nemesis;
  for (const FaultKindInfo& k : fault_kinds()) kinds.insert(k.name);
  for (FaultKind k : nemesis_fault_kinds()) nemesis.insert(fault_info(k).name);
  EXPECT_EQ(schema_set("/$defs/fault/properties/kind/enum"), kinds);
  EXPECT_EQ(schema_set("/$defs/nemesis/properties/kinds/items/enum"), nemesis);
}

TEST(WordsAndSchema, EverySectionHasTheLoadersKeys) {
  EXPECT_EQ(schema_set("/properties"), keys({"top"}));
  EXPECT_EQ(schema_set("/$defs/redisLock/properties"), keys({"lock", "redis"}));
  EXPECT_EQ(schema_set("/$defs/redisLock/properties/cluster/properties"), keys({"cluster"}));
  EXPECT_EQ(schema_set("/$defs/etcdLock/properties"), keys({"lock", "etcd"}));
  EXPECT_EQ(schema_set("/$defs/queueLock/properties"), keys({"queue"}));
  // lock.keys reaches validation for every service, which refuses it for the
  // table with a pointed message (one lock only); the schema leaves it out.
  Set table = keys({"lock", "table"});
  table.erase("keys");
  EXPECT_EQ(schema_set("/$defs/tableLock/properties"), table);
  EXPECT_EQ(schema_set("/$defs/resource/properties"), keys({"resource"}));
  EXPECT_EQ(schema_set("/$defs/client/properties"), keys({"client"}));
  EXPECT_EQ(schema_set("/$defs/workload/properties"), keys({"workload"}));
  EXPECT_EQ(schema_set("/$defs/program/properties"), keys({"program"}));
  EXPECT_EQ(schema_set("/$defs/nemesis/properties"), keys({"nemesis"}));
  EXPECT_EQ(schema_set("/properties/network/properties"), keys({"network"}));
}

}  // namespace
}  // namespace fencesim
