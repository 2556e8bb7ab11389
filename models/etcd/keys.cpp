// models/etcd/keys.cpp — etcd's keys of the `lock` section (keys.hpp).
#include "models/etcd/keys.hpp"

#include "models/etcd/versions.hpp"
#include "models/validate.hpp"

namespace fencesim::etcd {

const std::vector<std::string>& lock_keys() {
  static const std::vector<std::string> kKeys = {"nodes",
                                                 "election_timeout",
                                                 "heartbeat",
                                                 "token",
                                                 "version",
                                                 "pre_vote",
                                                 "keepalive_checks_leadership",
                                                 "keepalive_skips_check_if_active",
                                                 "revoke_checks_leadership",
                                                 "mutex_checks_own_key",
                                                 "lock_fails_on_session_end",
                                                 "wal_fsync"};
  return kKeys;
}

void read_lock(KeyReader& in, LockSpec& l, bool& election_timeout_given) {
  EtcdSpec& e = l.etcd();
  if (const auto x = in.integer("nodes", Ranges::kEtcdNodes)) e.nodes = static_cast<int>(*x);
  if (const auto x = in.duration("heartbeat")) e.heartbeat = *x;
  if (const auto x = in.duration("election_timeout")) e.election_timeout = *x;
  election_timeout_given = in.has("election_timeout");
  if (const auto x = in.word<EtcdToken>("token")) e.token = *x;
  // The version's profile first, then the fine-grained keys as overrides.
  const std::vector<std::string> versions(known_versions().begin(), known_versions().end());
  if (const auto x = in.choice("version", versions)) e.version = versions[*x];
  apply_version(e);
  if (const auto x = in.boolean("pre_vote")) e.pre_vote = *x;
  if (const auto x = in.boolean("keepalive_checks_leadership")) e.keepalive_checks_leadership = *x;
  if (const auto x = in.boolean("keepalive_skips_check_if_active")) e.keepalive_skips_check_if_active = *x;
  if (const auto x = in.boolean("revoke_checks_leadership")) e.revoke_checks_leadership = *x;
  if (const auto x = in.boolean("mutex_checks_own_key")) e.mutex_checks_own_key = *x;
  if (const auto x = in.boolean("lock_fails_on_session_end")) e.lock_fails_on_session_end = *x;
  if (const auto x = in.duration("wal_fsync")) {
    e.wal_fsync = *x;
    if (e.wal_fsync > std::chrono::seconds(10)) {
      in.fail("wal_fsync",
              "must be at most 10s (one WAL fsync of a member), got " + quote_text(*in.text("wal_fsync", 1024)),
              "a local SSD takes about \"2ms\", a 7200 RPM disk \"20ms\" (etcd's hardware guide)");
    }
  }
  // Odd membership, the heartbeat multiple, whole-second TTLs and etcd's
  // minimum TTL are the descriptor's rules (service.cpp) and resolve_defaults.
}

void write_lock(const LockSpec& l, KeyWriter& out) {
  const EtcdSpec& e = l.etcd();
  const EtcdSpec ed;
  out.integer("nodes", e.nodes);
  if (e.election_timeout != ed.election_timeout) out.duration("election_timeout", e.election_timeout);
  if (e.heartbeat != ed.heartbeat) out.duration("heartbeat", e.heartbeat);
  if (e.token != ed.token) out.text("token", word(e.token));
  if (e.wal_fsync != ed.wal_fsync) out.duration("wal_fsync", e.wal_fsync);
  // The version, then only the keys that override its profile.
  if (!e.version.empty()) out.text("version", e.version);
  for (const std::string& k : version_overrides(e)) {
    if (k == "pre_vote") out.boolean(k, e.pre_vote);
    if (k == "keepalive_checks_leadership") out.boolean(k, e.keepalive_checks_leadership);
    if (k == "keepalive_skips_check_if_active") out.boolean(k, e.keepalive_skips_check_if_active);
    if (k == "revoke_checks_leadership") out.boolean(k, e.revoke_checks_leadership);
    if (k == "mutex_checks_own_key") out.boolean(k, e.mutex_checks_own_key);
    if (k == "lock_fails_on_session_end") out.boolean(k, e.lock_fails_on_session_end);
  }
}

}  // namespace fencesim::etcd
