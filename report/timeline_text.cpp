// report/timeline_text.cpp — the words on the timelines' lease-end marks
// (report/timeline_text.hpp).
#include "report/timeline_text.hpp"

namespace fencesim {

namespace timeline_text {

std::string lease_end_word(const LeaseEndRecord& e, bool released) {
  switch (e.cause) {
    case LeaseEndCause::kTakenOver: return "taken over by " + e.who;
    case LeaseEndCause::kReleasedBy: return "released by " + e.who;
    case LeaseEndCause::kReleased: return "released";
    case LeaseEndCause::kExpired: return "expired";
    case LeaseEndCause::kRevoked: return "revoked";
    // Causes that only say the key is gone: after the holder's own release
    // that is the release (Redis: the DEL; Redlock: the DELs on a majority).
    case LeaseEndCause::kNotOnPrimary: return released ? "released" : "not on " + e.who;
    case LeaseEndCause::kNoMajority: return released ? "released" : "no majority";
    case LeaseEndCause::kDeleted: return released ? "released" : "deleted";
    case LeaseEndCause::kServiceDown: return "service down";
    case LeaseEndCause::kEnded: break;
  }
  return "ended";
}

std::string lease_end_label(const std::string& holder, const LeaseEndRecord& e, bool released) {
  const std::string word = lease_end_word(e, released);
  return holder.empty() ? word : holder + " lease " + word;
}

std::map<std::string, Time> holder_releases(const History& h) {
  std::map<std::string, Time> out;
  for (const BeliefRecord& b : h.beliefs) {
    if (b.end && b.end_reason == "release") out[b.value] = *b.end;
  }
  return out;
}

bool released_before(const std::map<std::string, Time>& releases, const LeaseEndRecord& e) {
  auto it = releases.find(e.value);
  return it != releases.end() && it->second <= e.at;
}

}  // namespace timeline_text

}  // namespace fencesim
