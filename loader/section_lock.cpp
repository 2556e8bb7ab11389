// loader/section_lock.cpp — the `lock` section (docs/FORMAT.md "Lock").
//
// The loader reads what every lock shares — "service" (a word of the
// registry, models/lock_service.hpp), and for a service that names a lock key
// "ttl", "key" and "keys" — and refuses a key the service does not take; the
// service's own keys are its descriptor's (`lock_keys`, read through a
// KeyReader by `read`). Its rules: validate_lock and the descriptor's
// `validate` (models/validate.cpp, models/<service>/).
#include <algorithm>

#include "loader/sections.hpp"
#include "models/lock_service.hpp"

namespace fencesim::loading {

namespace {

/// The keys `d`'s lock section takes, in the order messages list them.
std::vector<std::string> allowed_keys(const ServiceDescriptor& d) {
  std::vector<std::string> out{"service"};
  if (d.has_lock_key()) {
    for (std::string_view k : kLockCommonKeys) {
      if (k != "service") out.emplace_back(k);
    }
  }
  for (std::string& k : d.lock_keys()) out.push_back(std::move(k));
  return out;
}

/// Every key of the lock section must be one of `d`'s; a key of another
/// service gets that service's words (its `foreign_key`).
void check_lock_keys(const json& v, const ServiceDescriptor& d) {
  const std::vector<std::string> allowed = allowed_keys(d);
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (contains(allowed, it.key())) continue;
    const std::string p = key_path("lock", it.key());
    if (const auto refusal = d.refuse_key(it.key())) fail(p, refusal->first, refusal->second);
    fail(p,
         "unknown key " + quote(it.key()) + " in lock (service " + d.name() + "); expected one of " +
             join_list(allowed, 20),
         suggest(it.key(), allowed));
  }
}

/// "ttl", "key", "keys": the keys of a lock that names a lock key. A
/// service with a default TTL (ZooKeeper's libraries' session timeouts)
/// takes a lock without "ttl": 0 until resolve_defaults gives it one.
void load_lock_key(const json& v, LockSpec& l, const ServiceDescriptor& d) {
  if (d.default_ttl(ClientLibrary::kGo) && find(v, "ttl") == nullptr) {
    l.ttl = l.requested_ttl = Duration{0};
  } else {
    const json& ttl = require(v, "lock", "ttl", "the lease TTL, e.g. \"10s\"");
    // Positive when given (0 would read as "left out" for a service with a default).
    l.ttl = l.requested_ttl =
        d.default_ttl(ClientLibrary::kGo) ? get_duration(ttl, "lock.ttl", kPositive) : get_duration(ttl, "lock.ttl");
  }
  if (const json* k = find(v, "key")) l.key = get_string(*k, "lock.key", 1024);
  if (const json* k = find(v, "keys")) {
    // More than one lock (its rules: validate_scenario's locks).
    constexpr std::size_t kMaxLocks = 64;
    if (!k->is_array() || k->empty() || k->size() > kMaxLocks) {
      fail("lock.keys", "expected a list of 1 to " + std::to_string(kMaxLocks) +
                            " further lock keys besides lock.key, e.g. [\"row-2\"], got " +
                            (k->is_array() ? std::to_string(k->size()) + " keys" : describe(*k)));
    }
    for (std::size_t i = 0; i < k->size(); ++i) {
      l.keys.push_back(get_string((*k)[i], index_path("lock.keys", i), 1024));
    }
  }
}

}  // namespace

void load_lock(const json& root, Scenario& s, ScenarioSource& src) {
  const json& v = require(root, "", "lock", "the lock service, e.g. {\"service\": \"redis\", \"ttl\": \"10s\"}");
  expect_object(v, "lock", "the lock service");
  // The services are the registry's (models/lock_service.hpp), in its order.
  std::vector<std::string> names;
  for (const ServiceDescriptor* d : service_registry()) names.push_back(d->name());
  const Keys services(names.begin(), names.end());
  const json& svc = require(v, "lock", "service", or_quoted(names));
  const ServiceDescriptor& d = *service_registry()[get_enum(svc, "lock.service", services)];
  s.lock.set_service(d.kind());
  check_lock_keys(v, d);
  if (d.has_lock_key()) load_lock_key(v, s.lock, d);
  JsonKeyReader in(v, "lock");
  d.read(in, s.lock, src);
}

}  // namespace fencesim::loading
