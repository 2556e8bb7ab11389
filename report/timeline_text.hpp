// The words the timelines (timeline.html and the terminal's text timeline)
// put on a lease's end at the service, where a format string is not enough.
// Internal to report/ (and its tests); not installed.
//
// The words come from the cause each service records with a lease's end
// (LeaseEndRecord::cause and ::who, models/history.hpp), not from its reason
// text, and from the holder's belief (BeliefRecord::end_reason "release").
#pragma once

#include <map>
#include <string>

#include "models/history.hpp"

namespace fencesim::timeline_text {

/// A lease's end at the service in a few words, for the label on its mark,
/// from the cause the service recorded (LeaseEndRecord::cause, ::who):
///   "released"            the holder's own release (kReleased: etcd's
///                          unlock, ShedLock's unlock, client-go's clear),
///                          or a cause that only says the key is gone
///                          (kNotOnPrimary, kNoMajority, kDeleted) when
///                          `released` is set (Redis sees the holder's DEL
///                          as the key gone; Redlock's DELs on a majority);
///   "released by B"       kReleasedBy: another client cleared it;
///   "taken over by B"     kTakenOver: another client took the record;
///   "expired", "revoked", "deleted", "no majority", "service down";
///   "not on redis-1"      kNotOnPrimary without a release: the current
///                          primary lacks it (a failover lost it);
///   "ended"               kEnded (the mark's title has the reason whole).
/// `released`: the holder's belief ended by its own release at or before
/// the lease's end (released_before).
std::string lease_end_word(const LeaseEndRecord& e, bool released);

/// The label: "A lease released", "A lease taken over by B"; with no known
/// holder (no grant recorded for the value) the word alone.
std::string lease_end_label(const std::string& holder, const LeaseEndRecord& e, bool released);

/// Each lease value whose holder's belief ended with its own release
/// (BeliefRecord::end_reason "release"), and when (true time). Built once
/// per run: a 1-hour run has thousands of lease ends.
std::map<std::string, Time> holder_releases(const History& h);

/// Whether the lease's holder had sent its release by the time the lease
/// ended at the service (`releases` from holder_releases).
bool released_before(const std::map<std::string, Time>& releases, const LeaseEndRecord& e);

}  // namespace fencesim::timeline_text
