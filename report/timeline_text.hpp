// The words the timelines (timeline.html and the terminal's text timeline)
// put on a lease's end at the service, where a format string is not enough.
// Internal to report/ (and its tests); not installed.
//
// The words come from the service's reason text (LeaseEndRecord::reason)
// and the holder's belief (BeliefRecord::end_reason "release"). Issue #30
// asks for a structured cause recorded by the services instead; until the
// services record one, tests/cli/timeline_text_test.cpp pins every reason
// the shipped services write (models/redis, models/etcd, models/table,
// models/queue), so a reworded reason fails there rather than reading
// "ended" on a picture.
#pragma once

#include <map>
#include <string>

#include "models/history.hpp"

namespace fencesim::timeline_text {

/// A lease's end at the service in a few words, for the label on its mark,
/// from the service's reason (LeaseEndRecord::reason):
///   "released"            the holder's own release (etcd "key deleted
///                          (unlock)", ShedLock "unlocked", client-go
///                          "released (holder cleared)"), or a reason that
///                          only says the key is gone when `released` is set
///                          (Redis "redis-0, the current primary, does not
///                          hold it" after the holder's DEL; Redlock's DELs
///                          on a majority);
///   "released by B"       another client cleared it (ShedLock's unlock
///                          without locked_by, client-go release by B);
///   "taken over by B"     another client took the record ("B took the
///                          record over at version 8", "B acquired the
///                          record (lock_until … <= now …)");
///   "expired", "revoked", "deleted", "no majority", "service down",
///   "not on redis-1"      (the current primary lacks it and its holder had
///                          not released it: a failover lost it);
///   "ended"               any other reason (the mark's title has it whole).
/// `released`: the holder's belief ended by its own release at or before
/// the lease's end (released_before).
std::string lease_end_word(const std::string& reason, bool released);

/// The label: "A lease released", "A lease taken over by B"; with no known
/// holder (no grant recorded for the value) the word alone.
std::string lease_end_label(const std::string& holder, const std::string& reason, bool released);

/// Each lease value whose holder's belief ended with its own release
/// (BeliefRecord::end_reason "release"), and when (true time). Built once
/// per run: a 1-hour run has thousands of lease ends.
std::map<std::string, Time> holder_releases(const History& h);

/// Whether the lease's holder had sent its release by the time the lease
/// ended at the service (`releases` from holder_releases).
bool released_before(const std::map<std::string, Time>& releases, const LeaseEndRecord& e);

}  // namespace fencesim::timeline_text
