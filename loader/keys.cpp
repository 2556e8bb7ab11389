// loader/keys.cpp — the keys of each block (keys.hpp) and format_keys.
#include "loader/keys.hpp"

#include "loader/loader.hpp"
#include "models/lock_service.hpp"

namespace fencesim::loading {

const Keys kTopKeys = {"version", "scenario", "description", "seed",   "duration", "settle", "network",
                       "lock",    "resource", "clients",     "faults", "nemesis",  "expect"};
const Keys kNetworkKeys = {"latency", "loss"};
const Keys kRangeKeys = {"min", "max"};
const Keys kLockCommonKeys = {"service", "ttl", "key", "keys"};
const Keys kResourceKeys = {
    "kind",    "check",           "fence_reads", "idempotent", "initial", "replicas", "replication_delay",
    "program", "compare_versions"};
const Keys kClientKeys = {"name", "count", "start", "fencing", "renew", "renew_interval", "renew_clock",
                          "retry_interval", "command_timeout", "resource", "workload",
                          // client policies (docs/FORMAT.md "Client policies")
                          "check_lease_before_write", "on_lease_loss", "lease_loss_after",
                          // per-client lease TTL and etcd client library (docs/FORMAT.md "Clients")
                          "ttl", "library", "library_version", "retry_strategy", "tries", "connection_policy",
                          // the lock it takes (docs/FORMAT.md "More than one lock")
                          "lock",
                          // the user's program (docs/FORMAT.md "Program clients")
                          "program"};
const Keys kProgramKeys = {"command", "env", "cwd", "yield_timeout"};
const Keys kWorkloadKeys = {"kind", "block", "work", "iterations", "think", "retries", "retry_backoff"};
const Keys kMetricBoundKeys = {"min", "max"};
const Keys kNemesisKeys = {"kinds", "targets", "groups", "interval", "max_duration", "swarm"};

std::string elsewhere(const std::string& key, const std::string& where) {
  static const std::vector<std::pair<std::string, const Keys*>> kBlocks = {
      {"the top level", &kTopKeys}, {"network", &kNetworkKeys}, {"lock", &kLockCommonKeys}};
  static const std::vector<std::pair<std::string, const Keys*>> kAfter = {{"resource", &kResourceKeys},
                                                                          {"a client", &kClientKeys},
                                                                          {"a workload", &kWorkloadKeys},
                                                                          {"a program", &kProgramKeys},
                                                                          {"nemesis", &kNemesisKeys}};
  for (const auto& [block, keys] : kBlocks) {
    if (block != where && contains(*keys, key)) return quote(key) + " belongs in " + block;
  }
  // Every lock service's own keys belong in lock (a lock-table key as much
  // as a Redis one), before the blocks that share a word with them
  // ("replicas" is the resource's too).
  if (where != "lock") {
    for (const ServiceDescriptor* d : service_registry()) {
      if (contains(d->lock_keys(), key)) return quote(key) + " belongs in lock";
    }
  }
  for (const auto& [block, keys] : kAfter) {
    if (block != where && contains(*keys, key)) return quote(key) + " belongs in " + block;
  }
  return "";
}

}  // namespace fencesim::loading

namespace fencesim {

std::vector<std::string> format_keys(const std::string& section) {
  using namespace loading;
  static const std::vector<std::pair<std::string_view, const Keys*>> kSections = {
      {"top", &kTopKeys},       {"network", &kNetworkKeys},   {"lock", &kLockCommonKeys}, {"resource", &kResourceKeys},
      {"client", &kClientKeys}, {"workload", &kWorkloadKeys}, {"nemesis", &kNemesisKeys}, {"program", &kProgramKeys}};
  for (const auto& [name, keys] : kSections) {
    if (name == section) return std::vector<std::string>(keys->begin(), keys->end());
  }
  // A lock service's sections ("redis", "cluster", "etcd", "queue", "table").
  for (const ServiceDescriptor* d : service_registry()) {
    for (auto& [name, keys] : d->key_sections()) {
      if (name == section) return keys;
    }
  }
  return {};
}

}  // namespace fencesim
