// models/fingerprint.hpp — the fingerprint of a run (RunResult::fingerprint).
//
// Three parts, hashed separately and then combined in this order:
//   * the History: every record, field by field (history.hpp), in the order
//     the run recorded it, except a fault's origin (a label: a run replayed
//     from its pasted nemesis draws is the same run, with the same
//     fingerprint);
//   * the engine's events: sim::Simulation::event_fingerprint(), a running
//     hash of every event the run loop processed (time, class, sequence,
//     type, slot, serial): message deliveries, timers, wake-ups, faults —
//     also what the History does not record;
//   * the Raft events of the etcd model (etcd/raft/history.hpp) and their
//     counts: elections, commits, applies, truncations... (a run without
//     Raft hashes none).
// None of it depends on the optional trace (RunOptions::trace), on addresses
// or on the process the run is in: equal runs have equal fingerprints, with
// the trace on or off, and any difference in what happened — in the History,
// the engine or Raft — almost surely changes it. Not a cryptographic hash.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "models/etcd/raft/history.hpp"
#include "models/history.hpp"

namespace fencesim {

/// Folds 64-bit words and strings into a 64-bit hash: a multiply-rotate
/// step per word; a string is its length, then its bytes eight at a time
/// (little-endian, the last word padded with zeros), so the value is the
/// same on every machine.
class Fingerprint {
 public:
  void word(std::uint64_t v) { h_ = (std::rotl(h_, 23) ^ v) * 0xFF51AFD7ED558CCDULL; }
  void number(std::int64_t v) { word(static_cast<std::uint64_t>(v)); }
  void time(sim::Time t) { number(t.count()); }
  void text(std::string_view s) {
    word(s.size());
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) word(load8(s.data() + i));
    if (i < s.size()) word(load(s.data() + i, s.size() - i));
  }
  /// Presence (0 or 1), then the value when present.
  void maybe(const std::optional<std::int64_t>& v);
  void maybe(const std::optional<sim::Time>& v);
  std::uint64_t value() const { return h_; }

 private:
  /// 8 bytes from `p` as a little-endian word: load(p, 8), in one move on a
  /// little-endian machine (the same word; text() of long strings — lock
  /// node paths, values — is a large part of a run's fingerprint).
  static std::uint64_t load8(const char* p) {
    if constexpr (std::endian::native == std::endian::little) {
      std::uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    } else {
      return load(p, 8);
    }
  }
  /// `n` (1 to 8) bytes from `p` as a little-endian word.
  static std::uint64_t load(const char* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[k])) << (8 * k);
    return v;
  }
  std::uint64_t h_ = 0xcbf29ce484222325ULL;  // (the FNV-1a offset basis: any start would do)
};

/// Every record of `h`: grants, beliefs, lease ends, resource operations,
/// iterations, faults, renewals, audit findings, notes and lease losses.
std::uint64_t history_fingerprint(const History& h);

/// Every Raft event of `h` (time, kind, member, term, index, commit,
/// incarnation, issued_at, detail, and whether the entry is empty — not the
/// command's text, which a run renders only when it shows it; what was
/// proposed reaches Raft through engine events, hashed on their own) and
/// its RaftStats.
std::uint64_t raft_fingerprint(const raft::RaftHistory& h);

/// The run's fingerprint from its three parts (see above); `raft` is
/// nullopt for a run without Raft.
std::uint64_t run_fingerprint(std::uint64_t history, std::uint64_t engine, std::optional<std::uint64_t> raft);

}  // namespace fencesim
