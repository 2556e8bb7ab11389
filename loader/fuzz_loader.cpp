// loader/fuzz_loader.cpp — libFuzzer target for the scenario loader.
//
// Build (clang only):
//   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DFENCESIM_FUZZ=ON \
//     -DFENCESIM_BUILD_TESTS=OFF -DFENCESIM_BUILD_BENCH=OFF
//   cmake --build build-fuzz --target fencesim_fuzz_loader
// Run with the shipped scenarios as seed corpus (see docs/FORMAT.md, "Fuzzing").
//
// The loader must never crash, hang or throw: every input yields either a
// scenario or one error. Beyond that, this target checks a few invariants of
// what it returns, so a silently wrong result is a finding too.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "loader/loader.hpp"
#include "models/lock_service.hpp"
#include "models/nemesis.hpp"
#include "models/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const fencesim::LoadResult r = fencesim::load_scenario_text(text, "fuzz.json");
  if (r.scenario.has_value() == r.error.has_value()) std::abort();  // exactly one of the two
  if (r.error) {
    const std::string line = r.error->to_string();
    if (line.find('\n') != std::string::npos) std::abort();  // one line, always
    if (r.error->message.empty()) std::abort();
    return 0;
  }
  const fencesim::Scenario& s = *r.scenario;
  if (s.clients.empty() || s.clients.size() > static_cast<std::size_t>(fencesim::Limits::kMaxClients)) std::abort();
  if (s.duration <= fencesim::Duration::zero() || s.duration > fencesim::Limits::kMaxDuration) std::abort();
  // Every client of a design that takes a lock renews at a positive interval.
  const bool lock = fencesim::service_descriptor(s.lock.service()).takes_lock();
  for (const auto& c : s.clients) {
    if (c.renew_interval <= fencesim::Duration::zero() && lock) std::abort();
  }
  // Whatever loads passes the rules run_scenario checks (models/validate.hpp).
  if (fencesim::validate_scenario(s)) std::abort();
  // The nemesis draw must terminate within the fault limit.
  const auto drawn = fencesim::draw_nemesis(s);
  if (drawn.size() + s.faults.size() > static_cast<std::size_t>(fencesim::Limits::kMaxFaults)) std::abort();
  for (const auto& f : drawn) {
    if (f.at > s.duration) std::abort();
  }
  return 0;
}
