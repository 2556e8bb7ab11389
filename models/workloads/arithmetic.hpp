// models/workloads/arithmetic.hpp — the read–work–write arithmetic of the
// register workloads (counter, sequence_allocator, writer; docs/FORMAT.md
// "Workloads"), shared by the model's workloads (register_workload.cpp and
// the three kinds' files) and fencesim-real's client loop (real/client.cpp),
// so that a real run writes the same values and words the same outcomes as
// the simulated one. Pure functions: the random draw of a jittered retry
// wait is the caller's (the model's from its own stream, the real runner's
// from its own).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "models/scenario.hpp"

namespace fencesim::workloads {

/// The value an iteration writes after reading `read`: +1 (counter,
/// writer), + `block` (sequence_allocator).
inline std::int64_t next_register_value(const WorkloadSpec& w, std::int64_t read) {
  return w.kind == WorkloadKind::kSequenceAllocator ? read + w.block : read + 1;
}

/// counter: "ok: wrote 5".
inline std::string counter_success_text(std::int64_t written) { return "ok: wrote " + std::to_string(written); }
/// sequence_allocator: "ok: claimed 1000..1099", the block the write reserved.
inline std::string allocator_success_text(std::int64_t read, std::int64_t written) {
  return fmt::format("ok: claimed {}..{}", read, written - 1);
}
/// writer: "ok: wrote version 3 over version 2 by B" — the version the
/// client read (and its tag), not necessarily the one its write replaced.
inline std::string writer_success_text(std::int64_t written, std::int64_t read, const std::string& read_tag) {
  return fmt::format("ok: wrote version {} over version {}{}", written, read,
                     read_tag.empty() ? "" : " by " + read_tag);
}
/// The outcome of an accepted write of `written` after reading `read` (tagged `read_tag`), by kind.
inline std::string register_success_text(const WorkloadSpec& w, std::int64_t read, const std::string& read_tag,
                                         std::int64_t written) {
  switch (w.kind) {
    case WorkloadKind::kSequenceAllocator: return allocator_success_text(read, written);
    case WorkloadKind::kWriter: return writer_success_text(written, read, read_tag);
    default: return counter_success_text(written);
  }
}

/// CAS retry `k` (0 for the first) waits about min(16, 2^k) × base: this
/// step (RegisterWorkload::retry_wait documents why).
inline Duration cas_retry_step(Duration base, int k) {
  constexpr int kCapDoublings = 4;  // cap = base × 2^4 = 16 × retry_interval
  return base * (std::int64_t{1} << std::min(k, kCapDoublings));
}

/// The wait before CAS retry `k`: `fixed`, `base`; `jitter`, a draw in
/// [step − step/2, step] made by `draw(lo, hi)` (inclusive), which is called
/// only then (a run without jitter draws nothing).
template <class Draw>
Duration cas_retry_wait(const WorkloadSpec& w, Duration base, int k, Draw&& draw) {
  if (w.retry_backoff == RetryBackoff::kFixed) return base;
  const Duration step = cas_retry_step(base, k);
  return draw(step - step / 2, step);
}

/// The suffix of an outcome that took CAS retries: " (after 2 retries)".
inline std::string retries_suffix(int retries) {
  if (retries == 0) return "";
  return fmt::format(" (after {} {})", retries, retries == 1 ? "retry" : "retries");
}

}  // namespace fencesim::workloads
