// models/none/none.cpp — `"service": "none"`: the design without a lock. The
// workload's CAS loop at the resource, no service nodes, no lock clients
// (docs/FORMAT.md "Lock"); its only key of `lock` is "service".
#include <algorithm>

#include "models/client/client.hpp"
#include "models/lock_service.hpp"
#include "models/validate.hpp"

namespace fencesim {

namespace {

/// `none`: the workload's CAS loop at the resource, without a lock.
class NoLockService final : public LockService {
 public:
  void start() override {}
  std::unique_ptr<client::LockClient> make_client(sim::Node&, History&, const ClientSpec&, std::size_t) override {
    return nullptr;
  }
};

class NoneDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kNone; }
  std::string name() const override { return "none"; }
  bool takes_lock() const override { return false; }
  std::string why_no_token(const Scenario&) const override {
    return "the design takes no lock, so it hands out no token";
  }
  /// A lock's keys ("ttl", "key", "keys") and those of the lock services
  /// older than `none` (Redis, etcd) are pointed at; others are unknown.
  std::optional<std::pair<std::string, std::string>> refuse_key(const std::string& key) const override {
    const auto in = [&key](const std::vector<std::string>& keys) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    if (key == "ttl" || key == "key" || key == "keys" || in(redis::descriptor().lock_keys()) ||
        in(etcd::descriptor().lock_keys())) {
      return std::make_pair(quote_text(key) + " does not apply to \"service\": \"none\" (no lock is taken); remove it",
                            std::string());
    }
    return std::nullopt;
  }
  std::unique_ptr<LockService> build(ServiceContext&) const override { return std::make_unique<NoLockService>(); }
};

}  // namespace

const ServiceDescriptor& none_descriptor() {
  static const NoneDescriptor kNone;
  return kNone;
}

}  // namespace fencesim
