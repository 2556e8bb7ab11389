// Clock faults in fencesim-real (real/clocks.hpp). Sources: redis-server
// 7.0 (src/server.c ustime()/mstime() = gettimeofday; src/db.c keyIsExpired
// compares the key's absolute millisecond deadline with mstime(); src/ae.c
// and src/monotonic.c time the event loop with clock_gettime(CLOCK_MONOTONIC));
// libfaketime 0.9.10 (src/libfaketime.c, README "Changing the 'x' modifier
// during run-time") for why it is not used; the model's clocks: sim/clock.hpp.
#include "real/clocks.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>

#include "models/faults.hpp"
#include "real/clockshim/fencesim_clock.h"
#include "real/services.hpp"

namespace fencesim::real {

namespace fs = std::filesystem;

namespace {

bool is_redis_data_node(const std::string& name) { return name.rfind("redis-", 0) == 0 && name != "redis-primary"; }
bool is_sentinel(const std::string& name) { return name.rfind("sentinel-", 0) == 0; }

}  // namespace

bool is_client(const Scenario& s, const std::string& name) {
  for (const ClientSpec& c : s.clients) {
    if (c.name == name) return true;
  }
  return false;
}

std::string clock_unsupported_reason(const Scenario& s) {
  const RealService* svc = real_service(s.lock.service());
  for (const FaultSpec& f : s.faults) {
    if (fault_info(f.kind).family != FaultFamily::kClock) continue;
    const std::string what = fmt::format("{} of {} ({})", to_string(f.kind), f.target, f.origin);
    if (std::string why = svc != nullptr ? svc->clock_fault_unsupported(what) : ""; !why.empty()) return why;
    if (is_client(s, f.target)) continue;  // a Redis client: a thread whose clocks are the runner's
    if (f.target == "redis-primary" || is_redis_data_node(f.target) || is_sentinel(f.target)) continue;
    if (f.target == "resource") {
      return what + ": the resource (PostgreSQL) runs without a clock shim, and no check of it reads a clock";
    }
    return what + ": the runner moves the clocks of Redis nodes, sentinels and Redis clients only";
  }
  return "";
}

bool needs_clock_shim(const Scenario& s, const std::string& name) {
  for (const FaultSpec& f : s.faults) {
    if (fault_info(f.kind).family != FaultFamily::kClock) continue;
    if (f.at >= s.duration) continue;
    if (f.target == name) return true;
    if (f.target == "redis-primary" && is_redis_data_node(name)) return true;
  }
  return false;
}

// ---------------------------------------------------------- ServerClock --

ServerClock::ServerClock(fs::path file) : file_(std::move(file)) {
  const int fd = ::open(file_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("fencesim-real: cannot create the clock file " + file_.string());
  fencesim_clock_shared init{};
  init.magic = FENCESIM_CLOCK_MAGIC;
  init.rate_ppm = 1'000'000;
  init.anchor_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const bool ok = ::write(fd, &init, sizeof init) == static_cast<ssize_t>(sizeof init);
  map_ = ok ? ::mmap(nullptr, sizeof init, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw std::runtime_error("fencesim-real: cannot map the clock file " + file_.string());
  }
}

ServerClock::~ServerClock() {
  if (map_) ::munmap(map_, sizeof(fencesim_clock_shared));
}

template <class F>
void ServerClock::write(F&& change) {
  auto* p = static_cast<fencesim_clock_shared*>(map_);
  __atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELAXED);  // odd: readers retry
  __atomic_thread_fence(__ATOMIC_RELEASE);
  // Fold the drift so far into the offsets (steady_clock is CLOCK_MONOTONIC,
  // the clock the shim's anchor is on), then change.
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const std::int64_t d =
      static_cast<std::int64_t>(static_cast<__int128>(now - p->anchor_ns) * (p->rate_ppm - 1'000'000) / 1'000'000);
  __atomic_store_n(&p->wall_offset_ns, p->wall_offset_ns + d, __ATOMIC_RELAXED);
  __atomic_store_n(&p->mono_offset_ns, p->mono_offset_ns + d, __ATOMIC_RELAXED);
  __atomic_store_n(&p->anchor_ns, now, __ATOMIC_RELAXED);
  change(*p);
  __atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);  // even again
}

void ServerClock::jump(ClockSelect which, std::chrono::nanoseconds by) {
  write([&](fencesim_clock_shared& p) {
    if (which != ClockSelect::kMonotonic)
      __atomic_store_n(&p.wall_offset_ns, p.wall_offset_ns + by.count(), __ATOMIC_RELAXED);
    if (which != ClockSelect::kWall)
      __atomic_store_n(&p.mono_offset_ns, p.mono_offset_ns + by.count(), __ATOMIC_RELAXED);
  });
}

void ServerClock::set_drift(std::int64_t ppm) {
  write([&](fencesim_clock_shared& p) { __atomic_store_n(&p.rate_ppm, 1'000'000 + ppm, __ATOMIC_RELAXED); });
}

std::vector<std::string> ServerClock::env(const std::string& shim) const {
  return {"LD_PRELOAD=" + shim, "FENCESIM_CLOCK_FILE=" + file_.string()};
}

// ---------------------------------------------------------- ClientClock --

Time ClientClock::read(sim::ClockKind k) const {
  std::lock_guard<std::mutex> l(m_);
  return clock_.read(k, now_());
}

Time ClientClock::when(sim::ClockKind k, Time reading) const {
  std::lock_guard<std::mutex> l(m_);
  return clock_.true_time_when(k, reading, now_());
}

void ClientClock::jump(ClockSelect which, Duration by) {
  std::lock_guard<std::mutex> l(m_);
  const Time now = now_();
  if (which != ClockSelect::kMonotonic) clock_.jump(sim::ClockKind::kWall, by, now);
  if (which != ClockSelect::kWall) clock_.jump(sim::ClockKind::kMonotonic, by, now);
}

void ClientClock::set_drift(std::int64_t ppm) {
  std::lock_guard<std::mutex> l(m_);
  clock_.set_drift(ppm, now_());
}

}  // namespace fencesim::real
