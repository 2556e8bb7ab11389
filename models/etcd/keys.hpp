// models/etcd/keys.hpp — etcd's keys of the `lock` section: how a file spells
// them (docs/FORMAT.md "etcd"), read through a KeyReader and written back
// through a KeyWriter. Its descriptor (service.cpp) hands them on.
#pragma once

#include <string>
#include <vector>

#include "models/key_reader.hpp"
#include "models/key_writer.hpp"
#include "models/scenario.hpp"

namespace fencesim::etcd {

/// lock's etcd keys, in docs/FORMAT.md's order.
const std::vector<std::string>& lock_keys();
/// Reads them into `l.etcd`: the version's profile first, then the
/// fine-grained keys as overrides (versions.hpp). `election_timeout_given`
/// says whether the file wrote lock.election_timeout (a rule blames the
/// heartbeat otherwise).
void read_lock(KeyReader& in, LockSpec& l, bool& election_timeout_given);
/// Writes them back: nodes, the timings and token where they differ from
/// EtcdSpec's defaults, the version, then only the keys that override its
/// profile.
void write_lock(const LockSpec& l, KeyWriter& out);

}  // namespace fencesim::etcd
