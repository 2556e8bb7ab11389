// report/timeline_text.cpp — the words on the timelines' lease-end marks
// (report/timeline_text.hpp).
#include "report/timeline_text.hpp"

namespace fencesim {

namespace timeline_text {

namespace {
bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
/// The first word of `s` after `prefix` ("released by B" -> "B").
std::string name_after(const std::string& s, std::size_t prefix) {
  return s.substr(prefix, s.find_first_of(" (", prefix) - prefix);
}
}  // namespace

std::string lease_end_word(const std::string& reason, bool released) {
  // Another client took the record: client-go's leader election (its CAS on
  // the Lease object) and ShedLock's UPDATE past lock_until (models/table).
  for (const char* took : {" took the record over", " acquired the record"}) {
    if (const auto p = reason.find(took); p != std::string::npos) return "taken over by " + reason.substr(0, p);
  }
  if (reason.rfind("released by ", 0) == 0) return "released by " + name_after(reason, 12);
  if (reason.rfind("unlocked by ", 0) == 0) return "released by " + name_after(reason, 12);
  if (has(reason, "unlock") || reason.rfind("released", 0) == 0) return "released";
  if (has(reason, "expire") || has(reason, "ran out") || has(reason, "lock_until passed")) return "expired";
  if (has(reason, "revoke")) return "revoked";
  // Reasons that only say the key is gone: after the holder's own release
  // that is the release (Redis: the DEL; Redlock: the DELs on a majority).
  if (released && (has(reason, "does not hold") || has(reason, "majority") || has(reason, "delete"))) {
    return "released";
  }
  if (const auto p = reason.find(", the current primary, does not hold"); p != std::string::npos) {
    return "not on " + reason.substr(0, p);
  }
  if (has(reason, "majority")) return "no majority";
  if (has(reason, "is down")) return "service down";
  if (has(reason, "delete") || has(reason, "DEL")) return "deleted";
  return "ended";
}

std::string lease_end_label(const std::string& holder, const std::string& reason, bool released) {
  const std::string word = lease_end_word(reason, released);
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
