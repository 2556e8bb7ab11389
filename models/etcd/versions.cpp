#include "models/etcd/versions.hpp"

namespace fencesim::etcd {

const std::vector<std::string_view>& known_versions() {
  static const std::vector<std::string_view> kVersions = {"3.4.3", "3.4", "3.5"};
  return kVersions;
}

std::optional<VersionProfile> version_profile(std::string_view version) {
  // Sources: models/etcd/versions.hpp.
  if (version.empty()) return VersionProfile{};
  if (version == "3.4.3") return VersionProfile{false, false, false, false, false, false};
  if (version == "3.4") return VersionProfile{false, true, true, true, false, false};
  if (version == "3.5") return VersionProfile{true, true, true, true, true, false};
  return std::nullopt;
}

void apply_version(EtcdSpec& e) {
  const VersionProfile p = version_profile(e.version).value_or(VersionProfile{});
  e.pre_vote = p.pre_vote;
  e.keepalive_checks_leadership = p.keepalive_checks_leadership;
  e.keepalive_skips_check_if_active = p.keepalive_skips_check_if_active;
  e.revoke_checks_leadership = p.revoke_checks_leadership;
  e.mutex_checks_own_key = p.mutex_checks_own_key;
  e.lock_fails_on_session_end = p.lock_fails_on_session_end;
}

std::vector<std::string> version_overrides(const EtcdSpec& e) {
  const VersionProfile p = version_profile(e.version).value_or(VersionProfile{});
  std::vector<std::string> out;
  if (e.pre_vote != p.pre_vote) out.emplace_back("pre_vote");
  if (e.keepalive_checks_leadership != p.keepalive_checks_leadership) out.emplace_back("keepalive_checks_leadership");
  if (e.keepalive_skips_check_if_active != p.keepalive_skips_check_if_active) {
    out.emplace_back("keepalive_skips_check_if_active");
  }
  if (e.revoke_checks_leadership != p.revoke_checks_leadership) out.emplace_back("revoke_checks_leadership");
  if (e.mutex_checks_own_key != p.mutex_checks_own_key) out.emplace_back("mutex_checks_own_key");
  if (e.lock_fails_on_session_end != p.lock_fails_on_session_end) out.emplace_back("lock_fails_on_session_end");
  return out;
}

}  // namespace fencesim::etcd
