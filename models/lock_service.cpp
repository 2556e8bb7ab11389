#include "models/lock_service.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/validate.hpp"

namespace fencesim {

std::string ServiceDescriptor::fault_needs(const FaultSpec& f) const {
  return std::string(to_string(f.kind)) + " of \"" + name() + "\" needs the " + display_name() + " service";
}

namespace {

struct ServiceRegistry {
  std::vector<const ServiceDescriptor*> all;
  std::vector<std::unique_ptr<ServiceDescriptor>> owned;  ///< registered at run time
};

ServiceRegistry& service_table() {
  static ServiceRegistry r{{&redis::descriptor(), &etcd::descriptor(), &none_descriptor(), &queue::descriptor(),
                            &table::descriptor(), &zookeeper::descriptor(), &hazelcast::descriptor()},
                           {}};
  return r;
}

}  // namespace

const std::vector<const ServiceDescriptor*>& service_registry() { return service_table().all; }

std::optional<ScenarioProblem> ServiceDescriptor::validate(const Scenario&, const ScenarioSource&) const {
  return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> ServiceDescriptor::refuse_key(const std::string& key) const {
  for (const ServiceDescriptor* o : service_registry()) {
    if (o == this) continue;
    const auto keys = o->lock_keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
    std::string why = o->foreign_key(key, *this);
    if (!why.empty()) return std::make_pair(quote_text(key) + why, std::string());
  }
  return std::nullopt;
}

std::optional<ScenarioProblem> ServiceDescriptor::client_ttl_problem(const std::string&, Duration) const {
  return std::nullopt;
}
std::optional<ScenarioProblem> ServiceDescriptor::validate_client(const Scenario&, const ClientSpec&,
                                                                  const std::string&) const {
  return std::nullopt;
}
std::optional<ScenarioProblem> ServiceDescriptor::validate_locks(const Scenario&,
                                                                 const std::vector<std::string>&) const {
  return std::nullopt;
}

std::string ServiceDescriptor::report_design(const Scenario& s) const {
  return takes_lock() ? ", TTL " + sim::format_duration(s.lock.ttl) : "";
}
std::string ServiceDescriptor::summary_design(const Scenario& s) const {
  return takes_lock() ? " ttl " + sim::format_duration(s.lock.ttl) : "";
}

const ServiceDescriptor& service_descriptor(ServiceKind kind) {
  for (const ServiceDescriptor* d : service_registry()) {
    if (d->kind() == kind) return *d;
  }
  throw std::out_of_range("no lock service registered for kind " + std::to_string(static_cast<int>(kind)));
}

std::vector<ClientLibrary> client_libraries_of(const Scenario& s) {
  for (const ServiceDescriptor* d : service_registry()) {
    if (d->kind() == s.lock.service()) return d->client_libraries();
  }
  return {};
}

ClientLibrary ServiceDescriptor::default_library(const Scenario&) const {
  const std::vector<ClientLibrary> all = client_libraries();
  return all.empty() ? ClientLibrary::kGo : all.front();
}

ClientLibrary default_library_of(const Scenario& s) {
  for (const ServiceDescriptor* d : service_registry()) {
    if (d->kind() == s.lock.service()) return d->default_library(s);
  }
  return ClientLibrary::kGo;
}

ClientLibrary library_of(const Scenario& s, const ClientSpec& c) {
  if (c.library) return *c.library;
  return default_library_of(s);
}

const ServiceDescriptor* find_service(const std::string& name) {
  for (const ServiceDescriptor* d : service_registry()) {
    if (d->name() == name) return d;
  }
  return nullptr;
}

void register_service(std::unique_ptr<ServiceDescriptor> d) {
  ServiceRegistry& r = service_table();
  for (const ServiceDescriptor* e : r.all) {
    if (e->kind() == d->kind() || e->name() == d->name()) {
      throw std::invalid_argument("lock service " + d->name() + " is registered already");
    }
  }
  r.all.push_back(d.get());
  r.owned.push_back(std::move(d));
}

std::vector<std::string> all_group_names() {
  std::vector<std::string> out{"clients"};
  for (const ServiceDescriptor* d : service_registry()) {
    for (const std::string& g : d->group_names()) out.push_back(g);
  }
  out.emplace_back("resources");
  return out;
}

std::vector<std::string> all_role_names() {
  std::vector<std::string> out;
  for (const ServiceDescriptor* d : service_registry()) {
    for (const std::string& r : d->role_names()) out.push_back(r);
  }
  return out;
}

const ServiceDescriptor* role_owner(const std::string& role) {
  for (const ServiceDescriptor* d : service_registry()) {
    const auto roles = d->role_names();
    if (std::find(roles.begin(), roles.end(), role) != roles.end()) return d;
  }
  return nullptr;
}

const ServiceDescriptor* property_owner(Property p) {
  for (const ServiceDescriptor* d : service_registry()) {
    const auto own = d->own_properties();
    if (std::find(own.begin(), own.end(), p) != own.end()) return d;
  }
  return nullptr;
}

std::vector<std::string> services_taking(FaultKind k) {
  std::vector<std::string> out;
  for (const ServiceDescriptor* d : service_registry()) {
    const auto kinds = d->service_faults();
    if (std::find(kinds.begin(), kinds.end(), k) != kinds.end()) out.push_back(d->name());
  }
  return out;
}

}  // namespace fencesim
