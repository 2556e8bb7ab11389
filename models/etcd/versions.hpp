// models/etcd/versions.hpp — `lock.version`: etcd as released.
//
// One knob sets the server and the client behaviours that belong to one
// etcd release; the fine-grained keys (`pre_vote`,
// `keepalive_checks_leadership`, `mutex_checks_own_key`,
// `lock_fails_on_session_end`) stay as overrides (docs/FORMAT.md "etcd
// versions"). Read from etcd's own repository at the tags named:
//
//  "3.4.3" — the release Jepsen tested (2020).
//   * clientv3/concurrency/mutex.go @ v3.4.3, Lock, lines 42-78: after the
//     txn, `waitDeletes(ctx, client, m.pfx, m.myRev-1)` and, if it returns
//     without error, `m.hdr = hdr; return nil` — no look at the caller's own
//     key. A waiter whose lease expired (its key deleted by the lessor)
//     while it waited is told it owns the lock once the keys before it are
//     gone (etcd-io/etcd#11456, #9921). The server-side lock RPC that jetcd
//     calls (etcdserver/api/v3lock/lock.go @ v3.4.3) runs this same Mutex
//     with the caller's lease (an orphaned session), so both clients see it.
//     mutex_checks_own_key = false.
//   * waitDeletes/waitDelete watch with the Lock's ctx, never the session's
//     Done channel: a Lock waiting while its session ends keeps waiting
//     (the "early termination" TODO, client/v3/concurrency/mutex.go @ v3.5.0
//     line 84, still open as etcd-io/etcd#19597). lock_fails_on_session_end
//     = false.
//   * etcdserver/v3_server.go @ v3.4.3, LeaseRenew, lines 268-293:
//     `s.lessor.Renew(id)` on whoever is primary, no leadership check; a
//     follower forwards to its leader. keepalive_checks_leadership = false.
//     Nor ensureLeadership's isActive shortcut.
//     keepalive_skips_check_if_active = false.
//   * embed/config.go @ v3.4.3 line 412: `PreVote: false, // TODO: enable by
//     default in v3.5`. pre_vote = false.
//
//  "3.4" — the latest 3.4.x (v3.4.45 in the repository read).
//   * mutex.go and session.go are byte-identical to v3.4.3
//     (`git diff v3.4.3 v3.4.45 -- clientv3/concurrency/` is empty; Debian
//     12's golang-etcd-server-dev, 3.4.23, ships the same mutex.go): the
//     own-key re-check (etcd-io/etcd#11408) was never backported.
//     mutex_checks_own_key = false, lock_fails_on_session_end = false.
//   * Backported in v3.4.31 (commit bf04c6740 and its series, Feb 2024):
//     LeaseRenew on a leader first calls ensureLeadership()
//     (etcdserver/v3_server.go @ v3.4.45 lines 294-305,
//     etcdserver/server.go line 1187), a linearizable read that confirms
//     leadership with a quorum. keepalive_checks_leadership = true.
//   * Backported in v3.4.34 (commit 9dee9b7ab, Aug 2024; `git diff v3.4.33
//     v3.4.34 -- etcdserver/server.go etcdserver/raft.go`): ensureLeadership
//     first asks isActive (etcdserver/server.go @ v3.4.34 lines 1177-1201):
//     `latestTickTs.Add(3 * TickMs).After(time.Now())`, latestTickTs being
//     set by every raftNode.tick (etcdserver/raft.go lines 157-168); an
//     active member returns true without the read index. Unchanged up to
//     v3.4.45. keepalive_skips_check_if_active = true.
//   * embed/config.go @ v3.4.45 line 446: still `PreVote: false`.
//     pre_vote = false.
//
//  "3.5" — the latest 3.5.x.
//   * client/v3/concurrency/mutex.go @ v3.5.0, Lock, lines 92-102: after
//     waitDeletes, `client.Get(ctx, m.myKey)`; no key → ErrSessionExpired.
//     mutex_checks_own_key = true; the TODO at line 84 stays:
//     lock_fails_on_session_end = false.
//   * server/etcdserver/v3_server.go: ensureLeadership before Renew from
//     v3.5.13 (lines 298-313). keepalive_checks_leadership = true.
//   * isActive from v3.5.16 (absent from v3.5.15; server/etcdserver/
//     server.go @ v3.5.16 lines 1214-1232, server/etcdserver/raft.go
//     raftNode.tick). keepalive_skips_check_if_active = true.
//   * server/embed/config.go @ v3.5.0 line 477: `PreVote: true`.
//     pre_vote = true.
//
//  "" (no `version`) — the model's own combination, kept so that existing
//  files keep their results: pre_vote true, keepalive_checks_leadership
//  false, keepalive_skips_check_if_active false, mutex_checks_own_key
//  true, lock_fails_on_session_end true. No
//  release ever shipped it.
//
// The profiles keep the behaviour of the latest release of each line, so
// "3.4" and "3.5" have the isActive shortcut; a release between (v3.4.31 …
// v3.4.33, v3.5.13 … v3.5.15) is the profile with
// `keepalive_skips_check_if_active: false`.
//
// revoke_checks_leadership — "ignore old leader's leases revoking request"
// (etcd-io/etcd PR #16822, 67f17166b; backported as 4a90575ab in v3.5.13
// and bf04c6740 in v3.4.31; absent from v3.5.12 and v3.4.30):
// EtcdServer.revokeExpiredLeases (server/etcdserver/server.go @ v3.5.13
// lines 1153-1198) first calls ensureLeadership (lines 1201-1221: a
// linearizable read, then raftStatus().Lead == this member) and drops the
// revocations otherwise. Before it (v3.5.12 lines 1100-1140, v3.4.3
// etcdserver/server.go run(), `case leases := <-expiredLeaseC`), a lessor
// that is still primary — its Demote comes from the Ready loop's
// updateLeadership — proposes LeaseRevoke whatever Raft says; a follower
// forwards the proposal to the new leader, which commits it
// (etcd-io/etcd#12528, #15247). "3.4.3": false; "3.4", "3.5" and "": true
// (the model's lessor has always stopped revoking when Raft stepped down;
// only a stalled Ready loop — the disk_stall fault — tells them apart).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario.hpp"

namespace fencesim::etcd {

/// The behaviours a version sets.
struct VersionProfile {
  bool pre_vote = true;
  bool keepalive_checks_leadership = false;
  bool keepalive_skips_check_if_active = false;
  bool revoke_checks_leadership = true;
  bool mutex_checks_own_key = true;
  bool lock_fails_on_session_end = true;
};

/// The known versions, in release order: "3.4.3", "3.4", "3.5".
const std::vector<std::string_view>& known_versions();
/// The profile of `version` ("" is the model's own combination); nullopt
/// for an unknown version.
std::optional<VersionProfile> version_profile(std::string_view version);
/// Sets `e`'s profile keys from `e.version` (an unknown version: the
/// model's own combination; validate_scenario refuses it).
void apply_version(EtcdSpec& e);
/// The profile keys of `e` that differ from its version's profile, in the
/// order of docs/FORMAT.md's table ("pre_vote", …): what a report lists as
/// overrides and what the writer writes.
std::vector<std::string> version_overrides(const EtcdSpec& e);

}  // namespace fencesim::etcd
