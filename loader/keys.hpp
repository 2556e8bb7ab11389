// loader/keys.hpp — the keys each block of a scenario file takes (internal to
// loader/). A lock service's own keys of `lock` are its descriptor's
// (ServiceDescriptor::lock_keys, models/lock_service.hpp); these are the rest.
#pragma once

#include <string>

#include "loader/json_reader.hpp"

namespace fencesim::loading {

extern const Keys kTopKeys;
extern const Keys kNetworkKeys;
extern const Keys kRangeKeys;
/// The keys every lock that names a lock key shares (has_lock_key()).
extern const Keys kLockCommonKeys;
extern const Keys kResourceKeys;
extern const Keys kClientKeys;
extern const Keys kWorkloadKeys;
extern const Keys kProgramKeys;
extern const Keys kMetricBoundKeys;
extern const Keys kNemesisKeys;

/// `"ttl" belongs in lock` when `key` is a key of a block other than
/// `where` (a lock service's key belongs in lock), else "".
std::string elsewhere(const std::string& key, const std::string& where);

}  // namespace fencesim::loading
