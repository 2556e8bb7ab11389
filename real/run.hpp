// real/run.hpp — the state of one real run (real/real.hpp), shared by the
// runner's parts: real time (Timebase), a client's safepoints (Gate) and
// sockets, the server processes, a Redis connection, a line-oriented child
// (the etcd Go helper), a client's lock (RealLock), the run (Run) and a
// client (ClientState). Threads and real clocks: never included by sim/,
// models/ or explore/.
//
// The parts: real/stacks.cpp (servers and the service observers),
// real/locks.cpp (RedisLock, EtcdLock), real/client.cpp (the resource and the
// client loop), real/fault_env.cpp (faults on real processes), real/real.cpp
// (the runner).
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "models/history.hpp"
#include "models/scenario.hpp"
#include "real/clocks.hpp"
#include "real/links.hpp"
#include "real/process.hpp"
#include "real/proxy.hpp"

namespace fencesim::real {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// The Sentinel master name every sentinel monitors.
inline constexpr const char* kSentinelName = kSentinelPrimaryName;  // models/scenario.hpp

/// Set by SIGINT / SIGTERM while a run is in progress (real.cpp installs the handler).
extern std::atomic<bool> g_interrupted;
extern "C" void on_signal(int);

/// The last `lines` lines of a log file, indented (for error messages).
std::string tail_of(const fs::path& p, int lines = 15);

// ------------------------------------------------------------------ time --

/// Scenario time <-> real time.
struct Timebase {
  double scale = 1;
  Clock::time_point t0;
  Clock::duration real(Duration d) const {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::nano>(d.count() * scale));
  }
  Clock::time_point at(Duration d) const { return t0 + real(d); }
  Time now() const {
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / scale;
    return Time{static_cast<std::int64_t>(ns)};
  }
  std::chrono::milliseconds ms(Duration d) const {
    return std::max(1ms, std::chrono::duration_cast<std::chrono::milliseconds>(real(d)));
  }
};

/// A client's stop-the-world pause: the client's threads stop at their
/// next safepoint (before sending a request, after an answer, after a
/// sleep) while it is closed, as a JVM's threads stop at safepoints for a GC.
/// A crash holds them the same way until the restart, and bumps the epoch:
/// a thread that finds the epoch changed at a safepoint drops what its
/// crashed "process" was doing (the model's ClientNode::on_crash).
class Gate {
 public:
  void close() {
    std::lock_guard<std::mutex> l(m_);
    closed_ = true;
  }
  void open() {
    {
      std::lock_guard<std::mutex> l(m_);
      closed_ = false;
    }
    cv_.notify_all();
  }
  /// The client's process is killed: down until restart(); a crash ends a
  /// pause (docs/FORMAT.md "crash").
  void crash() {
    {
      std::lock_guard<std::mutex> l(m_);
      closed_ = false;
      down_ = true;
      ++epoch_;
    }
    cv_.notify_all();
  }
  void restart() {
    {
      std::lock_guard<std::mutex> l(m_);
      down_ = false;
    }
    cv_.notify_all();
  }
  bool down() {
    std::lock_guard<std::mutex> l(m_);
    return down_;
  }
  /// How many crashes so far.
  int epoch() {
    std::lock_guard<std::mutex> l(m_);
    return epoch_;
  }
  void wake() { cv_.notify_all(); }
  /// Waits while closed or down; false if the run is stopping.
  bool pass(const std::atomic<bool>& stop) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return (!closed_ && !down_) || stop.load(); });
    return !stop;
  }
  /// Sleeps until `t` (a deadline: a pause that outlasts it returns at the
  /// pause's end; a crash cuts it short), then passes the gate; false if the
  /// run is stopping.
  bool sleep_until(Clock::time_point t, const std::atomic<bool>& stop) {
    std::unique_lock<std::mutex> l(m_);
    const int e = epoch_;
    while (!stop && Clock::now() < t && epoch_ == e) cv_.wait_until(l, t);
    cv_.wait(l, [&] { return (!closed_ && !down_) || stop.load(); });
    return !stop;
  }
  /// The same with a deadline that can move while it sleeps (a deadline on
  /// a client clock that a clock fault steps or tilts): `deadline` is asked
  /// again after every wake() and at least every 50 ms.
  /// A crash cuts it short, as above.
  bool sleep_until(const std::function<Clock::time_point()>& deadline, const std::atomic<bool>& stop) {
    std::unique_lock<std::mutex> l(m_);
    const int e = epoch_;
    for (;;) {
      if (stop || epoch_ != e) break;
      const auto t = deadline();
      const auto now = Clock::now();
      if (now >= t) break;
      cv_.wait_until(l, std::min(t, now + 50ms));
    }
    cv_.wait(l, [&] { return (!closed_ && !down_) || stop.load(); });
    return !stop;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool closed_ = false;
  bool down_ = false;
  int epoch_ = 0;
};

/// The sockets of one client "process". A crash shuts them all down at once,
/// as the kernel closes a killed process's sockets: whatever the client was
/// waiting for fails, and nothing (no release) is sent on them again. The
/// owner thread registers a socket after connecting and unregisters it
/// before closing it, so a shutdown never reaches a reused descriptor.
class Sockets {
 public:
  void add(int fd) {
    std::lock_guard<std::mutex> l(m_);
    fds_.insert(fd);
  }
  void remove(int fd) {
    std::lock_guard<std::mutex> l(m_);
    fds_.erase(fd);
  }
  void shutdown_all() {
    std::lock_guard<std::mutex> l(m_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }

 private:
  std::mutex m_;
  std::set<int> fds_;
};

// ------------------------------------------------------------- the run --

struct Run;

struct RedisProc {
  std::string name;
  int port = 0;
  fs::path dir;
  std::vector<std::string> argv;
  std::vector<std::string> env;  ///< extra environment (the clock shim), also on a restart
  std::unique_ptr<Child> child;
};

/// A PostgreSQL server (real/stacks.hpp start_postgres_server): a run's
/// own, or one that outlives runs (PostgresServer, real/real.hpp).
struct Postgres {
  int port = 0;
  fs::path dir;
  std::unique_ptr<Child> child;
  std::vector<std::string> argv;
  ChildOptions opt;
  std::string version;  ///< "postgres (PostgreSQL) 15.x"
  pid_t pid = 0;        ///< a detached server's postmaster (no `child`): one that outlives this process
  /// SIGSTOP / SIGCONT (a pause of the resource) to the postmaster.
  void signal(int sig) const {
    if (child) {
      child->signal(sig);
    } else if (pid > 0) {
      ::kill(pid, sig);
    }
  }
};

inline std::string random_value(std::mt19937_64& rng) { return fmt::format("{:016x}", rng()); }

/// One hiredis connection with the command timeout.
class RedisConn {
 public:
  RedisConn() = default;
  /// A client's connection: registered in its process's sockets.
  explicit RedisConn(Sockets* owner) : owner_(owner) {}
  ~RedisConn() { drop(); }
  /// `logical`: the server's own port when `port` is a proxy's (port()
  /// then answers it); 0: `port` itself.
  bool connect(int port, std::chrono::milliseconds timeout, int logical = 0) {
    drop();
    timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
    c_ = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c_ == nullptr || c_->err) {
      drop();
      return false;
    }
    redisSetTimeout(c_, tv);
    ::fcntl(c_->fd, F_SETFD, FD_CLOEXEC);  // hiredis leaves it inheritable
    port_ = logical ? logical : port;
    if (owner_) owner_->add(c_->fd);
    return true;
  }
  void drop() {
    if (c_ && owner_) owner_->remove(c_->fd);
    if (c_) redisFree(c_);
    c_ = nullptr;
    port_ = 0;
  }
  bool ok() const { return c_ != nullptr; }
  int port() const { return port_; }
  /// nullptr on a timeout or a broken connection (the connection is dropped).
  redisReply* cmd(const std::vector<std::string>& args) {
    if (!c_) return nullptr;
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (r == nullptr) drop();
    return r;
  }

 private:
  redisContext* c_ = nullptr;
  int port_ = 0;
  Sockets* owner_ = nullptr;
};

using ReplyPtr = std::unique_ptr<redisReply, void (*)(void*)>;
inline ReplyPtr wrap(redisReply* r) { return ReplyPtr(r, freeReplyObject); }

/// A line-oriented child (the Go helper): lines read by a thread into a queue.
class LineChild {
 public:
  LineChild(const std::vector<std::string>& argv, const ChildOptions& opt,
            std::function<bool(const std::string&)> unprompted)
      : child_(argv, opt), unprompted_(std::move(unprompted)) {
    reader_ = std::thread([this] { read_loop(); });
  }
  ~LineChild() {
    child_.close_in();
    child_.kill_now();
    if (reader_.joinable()) reader_.join();
  }
  void send(const std::string& line) {
    const std::string l = line + "\n";
    if (child_.in_fd() >= 0) (void)!::write(child_.in_fd(), l.data(), l.size());
  }
  /// The next prompted line; nullopt at EOF or when `stop`.
  std::optional<std::string> next(const std::atomic<bool>& stop) {
    std::unique_lock<std::mutex> l(m_);
    while (q_.empty() && !eof_ && !stop) cv_.wait_for(l, 50ms);
    if (q_.empty()) return std::nullopt;
    std::string s = q_.front();
    q_.pop_front();
    return s;
  }
  Child& child() { return child_; }

 private:
  void read_loop() {
    std::string buf;
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::read(child_.out_fd(), chunk, sizeof chunk);
      if (n <= 0) break;
      buf.append(chunk, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (unprompted_ && unprompted_(line)) continue;
        std::lock_guard<std::mutex> l(m_);
        q_.push_back(std::move(line));
        cv_.notify_all();
      }
    }
    std::lock_guard<std::mutex> l(m_);
    eof_ = true;
    cv_.notify_all();
  }
  Child child_;
  std::function<bool(const std::string&)> unprompted_;
  std::thread reader_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::string> q_;
  bool eof_ = false;
};

// ------------------------------------------------------------- clients --

struct ClientState;

/// What a client's lock is, Redis or etcd.
class RealLock {
 public:
  virtual ~RealLock() = default;
  struct Lease {
    std::string value;
    std::optional<std::int64_t> token;
  };
  /// Connects before time 0 (so that the first request at time 0 does not
  /// pay for a connection).
  virtual void prepare() {}
  /// Blocks until granted; nullopt when the run stops.
  virtual std::optional<Lease> acquire() = 0;
  virtual void release() = 0;
  /// A clock fault moved the client's clocks: re-read the deadlines on them.
  virtual void clock_changed() {}
  /// The client's process is killed (runner thread): renewals stop; etcd:
  /// the Go helper gets SIGKILL.
  virtual void crash() {}
  /// The client's process starts again (runner thread, so that a new helper
  /// has its death signal): etcd starts a new Go helper.
  virtual void restart() {}
  /// The client's own thread, back after a restart: a new process that
  /// remembers nothing (its connections are dropped, a new helper is waited
  /// for).
  virtual void forget() {}
};

struct Run {
  Run(const Scenario& sc, Timebase t, TempDir& d, std::ostream* l) : s(sc), tb(t), dir(d), log(l) {}
  const Scenario& s;
  Timebase tb;
  TempDir& dir;
  std::ostream* log;
  std::atomic<bool> stop{false};
  std::mutex hmu;
  History h;
  std::mt19937_64 rng{std::random_device{}()};
  std::mutex rng_mu;

  // Redis
  std::vector<RedisProc> redis;      // redis-0 … (redis-0 starts as the primary)
  std::vector<RedisProc> sentinels;  // sentinel-0 …
  // etcd
  std::vector<RedisProc> etcd;  // reusing the struct: name, client port (port), dir, argv
  std::vector<int> etcd_peer_ports;
  std::string etcd_endpoints;
  std::string helper;  // etcd-lock path (etcd), zk_lock.py path (ZooKeeper)
  std::unique_ptr<LineChild> etcd_observer;
  // ZooKeeper
  std::vector<RedisProc> zk;  // zk-0 …: name, client port (port), dir, argv (zkServer.sh start-foreground)
  std::unique_ptr<LineChild> zk_observer;
  // resource: the run's own PostgreSQL (own_pg), or a shared one; the
  // run's database on it (pg_db, pg_conninfo)
  std::unique_ptr<Postgres> own_pg;
  Postgres* pg = nullptr;
  std::string pg_db;
  std::string pg_conninfo;
  // The proxies on every link the runner controls (real/proxy.hpp): client
  // -> each server and the resource, replica -> initial primary.
  ProxyNet net;
  LinkFaults links{net};
  /// The port `from` dials to reach `to` (listening on `real_port`): its
  /// link's proxy, or `real_port` itself where there is no link.
  int dial(const std::string& from, const std::string& to, int real_port) const {
    if (from.empty()) return real_port;
    return net.port(from, to).value_or(real_port);
  }

  // Lease bookkeeping for the observers: value -> real grant time.
  std::map<std::string, Clock::time_point> live;
  std::set<std::string> released;  // values a client deleted with compare-and-delete / Unlock
  // Clock faults on servers (real/clocks.hpp): the shim and each shimmed server's control file.
  std::string clock_shim;
  std::map<std::string, std::unique_ptr<ServerClock>> server_clocks;

  Time run_end() const { return s.duration; }
  bool in_run(Time t) const { return t <= s.duration; }

  std::string fresh_value() {
    std::lock_guard<std::mutex> l(rng_mu);
    return random_value(rng);
  }
  bool running = false;  ///< time 0 has passed (log lines before it say "setup")

  // Start barrier: every client connects (PostgreSQL, its lock) before time
  // 0, then waits for it, so that no client's first request at time 0 pays
  // for a connection (a PostgreSQL backend forks per connection: tens of
  // milliseconds on a loaded machine).
  std::mutex start_mu;
  std::condition_variable start_cv;
  std::size_t ready = 0;
  bool go = false;
  void arrive_and_wait() {
    std::unique_lock<std::mutex> l(start_mu);
    ++ready;
    start_cv.notify_all();
    start_cv.wait(l, [&] { return go || stop.load(); });
  }
  void say(const std::string& line) {
    if (!log) return;
    if (running) {
      *log << fmt::format("  [{:>8.3f}s] {}\n", tb.now().count() / 1e9, line) << std::flush;
    } else {
      *log << "  [   setup ] " << line << "\n" << std::flush;
    }
  }
  std::string redis_name_of_port(int port) const {
    for (const auto& r : redis) {
      if (r.port == port) return r.name;
    }
    return fmt::format("127.0.0.1:{}", port);
  }
  /// The primary's port as Sentinel reports it (redis-0's without Sentinel):
  /// the server's own port. A client (`from`) asks the sentinels through
  /// its proxies; Sentinel answers the port the server listens on (it
  /// learns replicas from the primary's INFO, `slaveN:ip=…,port=…`, the
  /// replica's listening port), and the client then dials its own proxy
  /// for that server (dial()).
  std::optional<int> primary_port(const std::string& from = "") {
    if (sentinels.empty()) return redis.front().port;
    for (const auto& sp : sentinels) {
      RedisConn c;
      if (!c.connect(dial(from, sp.name, sp.port), 300ms)) continue;
      auto r = wrap(c.cmd({"SENTINEL", "get-master-addr-by-name", kSentinelName}));
      if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2) return std::atoi(r->element[1]->str);
    }
    return std::nullopt;
  }
};

struct ClientState {
  Run& run;
  const ClientSpec& spec;
  std::size_t index = 0;
  Gate gate;
  std::mutex m;
  std::optional<std::size_t> belief;  // index into History::beliefs
  std::string lease_value;
  Sockets sockets;  // Redis and PostgreSQL connections (a crash shuts them down); outlives `lock`
  std::unique_ptr<RealLock> lock;
  LineChild* helper = nullptr;      // etcd: the Go helper (SIGSTOP target)
  std::atomic<int> program_pid{0};  // a program client's process (its group: SIGSTOP, SIGKILL), 0 if none
  /// A program client's process said `yield`: its main has returned and it
  /// idles until `end` (docs/PROTOCOL.md "The real stack"). Reset when a
  /// restart starts a new process.
  std::atomic<bool> program_done{false};
  /// The client's thread has returned: its iterations are over.
  std::atomic<bool> thread_done{false};
  ClientClock clock;                     // its wall and monotonic clocks (clock faults move them)
  std::optional<std::size_t> iteration;  // index into History::iterations while one runs (under run.hmu)

  ClientState(Run& r, const ClientSpec& c, std::size_t i)
      : run(r), spec(c), index(i), clock([&r] { return r.tb.now(); }) {}

  /// When clock `k` reads `reading` (real time; far beyond the run's end if never).
  Clock::time_point real_when(sim::ClockKind k, Time reading) const {
    return run.tb.at(std::min<Time>(clock.when(k, reading), run.s.duration + std::chrono::hours(1)));
  }
  /// Sleeps `d` on the client's monotonic clock (a deadline on it, see Gate).
  bool sleep_for(Duration d) {
    const Time deadline = clock.read(sim::ClockKind::kMonotonic) + d;
    return gate.sleep_until([this, deadline] { return real_when(sim::ClockKind::kMonotonic, deadline); }, run.stop);
  }

  void begin_belief(const RealLock::Lease& l, Time at) {
    std::lock_guard<std::mutex> g(run.hmu);
    std::lock_guard<std::mutex> g2(m);
    if (!run.in_run(at)) return;
    if (belief) run.h.end_belief(*belief, at, "superseded");
    belief = run.h.begin_belief(at, spec.name, l.value, l.token);
    lease_value = l.value;
  }
  /// Runner thread: the model's ClientNode::on_crash (client.cpp): the
  /// belief ends ("crash"), an unfinished iteration is "crashed".
  void crash() {
    gate.crash();
    sockets.shutdown_all();
    if (lock) lock->crash();
    if (const int pid = program_pid.load(); pid > 0) ::kill(-pid, SIGKILL);  // a program client's process dies
    end_belief("crash", false);
    std::lock_guard<std::mutex> g(run.hmu);
    if (iteration) {
      IterationRecord& it = run.h.iterations[*iteration];
      if (!it.success) it.outcome = "crashed";
      iteration.reset();
    }
  }
  void end_belief(const std::string& reason, bool loss) {
    const Time at = run.tb.now();
    std::lock_guard<std::mutex> g(run.hmu);
    std::lock_guard<std::mutex> g2(m);
    if (!run.in_run(at)) return;
    if (loss) ++run.h.lease_losses;
    if (!belief) return;
    run.h.end_belief(*belief, at, reason);
    belief.reset();
  }
};

}  // namespace fencesim::real
