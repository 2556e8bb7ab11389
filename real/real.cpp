// The real-stack runner (real/real.hpp). Sources of the behaviour driven:
//   Redis 7.0 (Debian redis-server 7.0.15): the lock scripts are the ones
//     tests/conformance/redis_conformance_test.cpp checks against the model
//     (SET NX PX + INCR, compare-and-PEXPIRE, compare-and-DEL; redis.io
//     "Distributed Locks with Redis"); Sentinel: sentinel.conf directives
//     monitor / down-after-milliseconds / failover-timeout, SENTINEL
//     get-master-addr-by-name and SENTINEL FAILOVER (redis.io "Redis
//     Sentinel").
//   etcd 3.4.23: clientv3/concurrency session.go and mutex.go, used as they
//     are by real/etcd-lock/main.go.
//   PostgreSQL 15: one row; the fencing check is the WHERE clause of one
//     UPDATE (read committed: a concurrent UPDATE re-evaluates the clause on
//     the newest row version, so check and write are atomic).
#include "real/real.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "models/checkers/checkers.hpp"
#include "models/checkers/metric_expect.hpp"
#include "models/faults.hpp"
#include "models/nemesis.hpp"
#include "models/redis/redis.hpp"
#include "real/clocks.hpp"
#include "real/links.hpp"
#include "real/process.hpp"
#include "real/proxy.hpp"

namespace fencesim::real {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// The lock scripts (the same text the conformance suite checks the model against).
const char* const kAcquireScript =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "return redis.call('INCR', KEYS[2]) end "
    "return false";
const char* const kAcquireNoTokenScript =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "return 1 end "
    "return false";
const char* const kRenewScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
    "return 0";
const char* const kReleaseScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('DEL', KEYS[1]) end "
    "return 0";

const char* const kSentinelName = "fencesim";

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) { g_interrupted = true; }

std::string tail_of(const fs::path& p, int lines = 15) {
  std::ifstream in(p);
  std::deque<std::string> q;
  std::string l;
  while (std::getline(in, l)) {
    q.push_back(l);
    if (static_cast<int>(q.size()) > lines) q.pop_front();
  }
  std::string out;
  for (auto& x : q) out += "    " + x + "\n";
  return out;
}

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

struct Postgres {
  int port = 0;
  fs::path dir;
  std::unique_ptr<Child> child;
  std::vector<std::string> argv;
  ChildOptions opt;
};

std::string random_value(std::mt19937_64& rng) { return fmt::format("{:016x}", rng()); }

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
ReplyPtr wrap(redisReply* r) { return ReplyPtr(r, freeReplyObject); }

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
  std::string helper;  // etcd-lock path
  std::unique_ptr<LineChild> etcd_observer;
  // resource
  Postgres pg;
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
  LineChild* helper = nullptr;           // etcd: the Go helper (SIGSTOP target)
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
    lock->crash();
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

// ------------------------------------------------------------ Redis lock --

class RedisLock final : public RealLock {
 public:
  RedisLock(ClientState& c) : c_(c), run_(c.run), conn_(&c.sockets), renew_conn_(&c.sockets) {
    renewer_ = std::thread([this] { renew_loop(); });
  }
  ~RedisLock() override {
    {
      std::lock_guard<std::mutex> l(m_);
      gen_ = -1;
    }
    cv_.notify_all();
    c_.gate.wake();
    if (renewer_.joinable()) renewer_.join();
  }

  void prepare() override { ensure(conn_); }
  void clock_changed() override { cv_.notify_all(); }

  std::optional<Lease> acquire() override {
    const LockSpec& lock = run_.s.lock;
    const bool with_token = lock.redis.token == RedisToken::kIncr;
    const std::string ttl_ms = std::to_string(run_.tb.ms(lock.ttl).count());
    const int epoch = c_.gate.epoch();
    for (;;) {
      if (!c_.gate.pass(run_.stop) || c_.gate.epoch() != epoch) return std::nullopt;
      ensure(conn_);
      const std::string value = run_.fresh_value();
      const int port = conn_.port();
      auto r = wrap(conn_.cmd({"EVAL", with_token ? kAcquireScript : kAcquireNoTokenScript, "2", lock.key,
                               redis_counter_key(lock), value, ttl_ms}));
      const Time at = run_.tb.now();
      const bool granted = r && r->type == REDIS_REPLY_INTEGER;
      const Lease l{value, granted && with_token ? std::optional<std::int64_t>(r->integer) : std::nullopt};
      if (granted) {
        // The primary granted it: a grant whether or not the client lives to
        // read the answer (the model records it at the primary's apply).
        std::lock_guard<std::mutex> g(run_.hmu);
        if (run_.in_run(at)) run_.h.grant(at, c_.spec.name, value, l.token, run_.redis_name_of_port(port));
        run_.live.emplace(value, Clock::now());
      }
      // A reply that reaches a crashed client is read by nobody.
      if (!c_.gate.pass(run_.stop) || c_.gate.epoch() != epoch) return std::nullopt;
      if (granted) {
        c_.begin_belief(l, at);
        start_renewal(value);
        return l;
      }
      if (!r || r->type == REDIS_REPLY_ERROR) {
        // A timed-out attempt may have succeeded: delete it if it did.
        if (!r) best_effort_release(value);
        conn_.drop();  // READONLY or broken: ask Sentinel again
      }
      if (!c_.sleep_for(c_.spec.retry_interval)) return std::nullopt;
    }
  }

  void crash() override {
    {
      std::lock_guard<std::mutex> l(m_);
      ++gen_;
      active_ = false;
      value_.clear();
    }
    cv_.notify_all();
  }
  void forget() override { conn_.drop(); }

  void release() override {
    const int epoch = c_.gate.epoch();
    std::string value;
    {
      std::lock_guard<std::mutex> l(m_);
      ++gen_;
      active_ = false;
      value = value_;
    }
    cv_.notify_all();
    c_.end_belief("release", false);
    for (int attempt = 0; attempt < 20; ++attempt) {
      if (!c_.gate.pass(run_.stop) || c_.gate.epoch() != epoch) return;
      ensure(conn_);
      auto r = wrap(conn_.cmd({"EVAL", kReleaseScript, "1", run_.s.lock.key, value}));
      if (r && r->type == REDIS_REPLY_INTEGER) {
        if (r->integer == 1) {
          std::lock_guard<std::mutex> g(run_.hmu);
          run_.released.insert(value);
        }
        return;
      }
      conn_.drop();
      if (!c_.sleep_for(c_.spec.retry_interval)) return;
    }
  }

 private:
  /// Connected to the primary Sentinel names now. The model's client
  /// follows +switch-master at once; asking Sentinel before every command
  /// is the same on loopback (a real old primary stays a primary until
  /// Sentinel reconfigures it, which can take seconds).
  void ensure(RedisConn& c) {
    if (c.ok() && run_.sentinels.empty()) return;
    const auto port = run_.primary_port(c_.spec.name);
    if (!port) return;
    if (c.ok() && c.port() == *port) return;
    c.connect(run_.dial(c_.spec.name, run_.redis_name_of_port(*port), *port), run_.tb.ms(c_.spec.command_timeout),
              *port);
  }
  void best_effort_release(const std::string& value) {
    RedisConn c;
    ensure(c);
    wrap(c.cmd({"EVAL", kReleaseScript, "1", run_.s.lock.key, value}));
  }
  void start_renewal(const std::string& value) {
    {
      std::lock_guard<std::mutex> l(m_);
      ++gen_;
      value_ = value;
      last_ = c_.clock.read(c_.spec.renew_clock);
      active_ = c_.spec.renew;
    }
    cv_.notify_all();
  }
  void renew_loop() {
    RedisConn& conn = renew_conn_;
    int seen_epoch = c_.gate.epoch();
    const std::string ttl_ms = std::to_string(run_.tb.ms(run_.s.lock.ttl).count());
    for (;;) {
      std::int64_t gen;
      std::string value;
      // Due `renew_interval` after the last success, as read on renew_clock
      // (a deadline on that clock: a clock fault moves it, clock_changed()).
      const sim::ClockKind rk = c_.spec.renew_clock;
      Time due;
      {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait_for(l, 50ms, [&] { return gen_ < 0 || active_ || run_.stop; });
        if (gen_ < 0 || run_.stop) return;
        if (!active_) continue;
        gen = gen_;
        value = value_;
        due = last_ + c_.spec.renew_interval;
        while (gen_ == gen && !run_.stop && c_.clock.read(rk) < due) {
          cv_.wait_until(l, std::min(c_.real_when(rk, due), Clock::now() + 50ms));
        }
        if (gen_ < 0 || run_.stop) return;
        if (gen_ != gen) continue;
      }
      if (!c_.gate.pass(run_.stop)) return;
      if (c_.clock.read(rk) < due) continue;
      const Time first_sent = run_.tb.now();
      for (;;) {
        if (!c_.gate.pass(run_.stop)) return;
        if (c_.gate.epoch() != seen_epoch) {
          conn.drop();  // shut down by a crash
          seen_epoch = c_.gate.epoch();
        }
        ensure(conn);
        auto r = wrap(conn.cmd({"EVAL", kRenewScript, "1", run_.s.lock.key, value, ttl_ms}));
        if (!c_.gate.pass(run_.stop)) return;
        {
          std::lock_guard<std::mutex> l(m_);
          if (gen_ != gen) break;
        }
        if (r && r->type == REDIS_REPLY_INTEGER) {
          const Time replied = run_.tb.now();
          const bool ok = r->integer == 1;
          {
            std::lock_guard<std::mutex> g(run_.hmu);
            if (run_.in_run(replied)) run_.h.renewals.push_back(RenewalRecord{c_.spec.name, first_sent, replied, ok});
          }
          std::lock_guard<std::mutex> l(m_);
          if (ok) {
            // The next renewal is due renew_interval after this reply, as
            // in the model (models/client/redis_client.cpp start_renewal:
            // `last = clock_now()` after the answer); seen with a slow link.
            // On renew_clock, so that a clock fault moves the deadline.
            last_ = c_.clock.read(rk);
          } else {
            active_ = false;
          }
          if (!ok) {
            // Refused: the key is gone or holds another value.
            m_.unlock();
            c_.end_belief("renewal refused", true);
            m_.lock();
          }
          break;
        }
        conn.drop();
        if (!c_.sleep_for(c_.spec.retry_interval)) return;
      }
    }
  }

  ClientState& c_;
  Run& run_;
  RedisConn conn_, renew_conn_;
  std::mutex m_;
  std::condition_variable cv_;
  std::int64_t gen_ = 0;
  bool active_ = false;
  std::string value_;
  Time last_{0};  // on renew_clock
  std::thread renewer_;
};

// ------------------------------------------------------------- etcd lock --

class EtcdLock final : public RealLock {
 public:
  EtcdLock(ClientState& c) : c_(c), run_(c.run) {
    start_helper();
    wait_ready();
  }

  /// The Go helper (runner thread: the death signal follows the thread
  /// that forked). A new one is a new process: a new client, a new session.
  void start_helper() {
    ClientState& c = c_;
    // Client k talks to etcd-(k mod n) first, as the model's client does.
    std::vector<std::string> eps;
    const std::size_t n = run_.etcd.size();
    for (std::size_t i = 0; i < n; ++i) {
      const RedisProc& m = run_.etcd[(c.index + i) % n];
      eps.push_back(fmt::format("http://127.0.0.1:{}", run_.dial(c.spec.name, m.name, m.port)));
    }
    std::string joined;
    for (auto& x : eps) joined += (joined.empty() ? "" : ",") + x;
    ChildOptions opt;
    opt.pipes = true;
    opt.err = log_path();
    auto helper = std::make_shared<LineChild>(
        std::vector<std::string>{run_.helper, "-endpoints", joined, "-ttl", std::to_string(ttl_seconds(run_)),
                                 "-prefix", run_.s.lock.key, "-command-timeout",
                                 std::to_string(run_.tb.ms(c.spec.command_timeout).count()) + "ms"},
        opt, [this](const std::string& line) {
          if (line.rfind("session-ended", 0) == 0) {
            c_.end_belief("session ended: the lease's keepalive found it expired", true);
            return true;
          }
          return false;
        });
    c.helper = helper.get();
    std::lock_guard<std::mutex> l(m_);
    helper_ = std::move(helper);
  }
  std::shared_ptr<LineChild> helper() {
    std::lock_guard<std::mutex> l(m_);
    return helper_;
  }
  fs::path log_path() const { return run_.dir.path() / ("client-" + c_.spec.name + ".log"); }
  void wait_ready() {
    auto ready = helper()->next(run_.stop);
    if (!ready || *ready != "ready") {
      throw std::runtime_error("fencesim-real: the etcd client helper of " + c_.spec.name + " did not start:\n" +
                               tail_of(log_path()));
    }
  }

  /// SIGKILL: its keepalives stop, so its session's lease expires at etcd
  /// after the TTL (nothing is revoked), as for a killed Go program.
  void crash() override { helper()->child().kill_now(); }
  void restart() override { start_helper(); }
  void forget() override { wait_ready(); }

  static int ttl_seconds(const Run& r) {
    const double s = r.s.lock.ttl.count() * r.tb.scale / 1e9;
    return std::max(1, static_cast<int>(std::ceil(s - 1e-9)));
  }

  std::optional<Lease> acquire() override {
    const auto helper = this->helper();
    for (;;) {
      if (!c_.gate.pass(run_.stop)) return std::nullopt;
      helper->send("acquire");
      auto line = helper->next(run_.stop);
      const Time at = run_.tb.now();
      if (!line) return std::nullopt;  // also: the helper was killed (a crash)
      if (!c_.gate.pass(run_.stop) || helper != this->helper()) return std::nullopt;
      std::istringstream in(*line);
      std::string word, key, lease;
      std::int64_t header = 0, create = 0;
      in >> word;
      if (word == "granted") {
        in >> key >> header >> create >> lease;
        std::optional<std::int64_t> token;
        switch (run_.s.lock.etcd.token) {
          case EtcdToken::kCreateRevision: token = create; break;
          case EtcdToken::kHeaderRevision: token = header; break;
          case EtcdToken::kNone: break;
        }
        Lease l{key + "@" + std::to_string(create), token};
        {
          std::lock_guard<std::mutex> g(run_.hmu);
          if (run_.in_run(at)) run_.h.grant(at, c_.spec.name, l.value, token, "etcd");
          run_.live.emplace(l.value, Clock::now());
        }
        c_.begin_belief(l, at);
        value_ = l.value;
        return l;
      }
      run_.say(c_.spec.name + ": " + *line);
      if (!c_.sleep_for(c_.spec.retry_interval)) return std::nullopt;
    }
  }

  void release() override {
    const auto helper = this->helper();
    c_.end_belief("release", false);
    if (!c_.gate.pass(run_.stop) || helper != this->helper()) return;
    helper->send("release");
    auto line = helper->next(run_.stop);
    if (line && *line == "released") {
      std::lock_guard<std::mutex> g(run_.hmu);
      run_.released.insert(value_);
    }
  }

 private:
  ClientState& c_;
  Run& run_;
  std::mutex m_;
  std::shared_ptr<LineChild> helper_;
  std::string value_;
};

// ------------------------------------------------------------- resource --

struct PgConn {
  PGconn* c = nullptr;
  Sockets* owner = nullptr;  // a client's: registered while open
  int fd = -1;
  ~PgConn() {
    if (owner && fd >= 0) owner->remove(fd);
    if (c) PQfinish(c);
  }
};

struct Row {
  bool accepted = false;
  std::int64_t value = 0, version = 0, last_written = 0, last_seen = 0, prev_value = 0;
  std::string tag, prev_tag;
};

class Resource {
 public:
  Resource(Run& r, const std::string& client, Sockets& owner) : run_(r) {
    const std::string conninfo = fmt::format("host=127.0.0.1 port={} user=fencesim dbname=postgres connect_timeout=5",
                                             run_.dial(client, "resource", run_.pg.port));
    pg_.c = PQconnectdb(conninfo.c_str());
    if (PQstatus(pg_.c) != CONNECTION_OK) {
      throw std::runtime_error(std::string("fencesim-real: cannot connect to PostgreSQL: ") + PQerrorMessage(pg_.c));
    }
    pg_.owner = &owner;
    pg_.fd = PQsocket(pg_.c);
    owner.add(pg_.fd);
  }

  /// Runs `sql` with params; the first row (accepted flag first).
  std::optional<Row> query(const std::string& sql, const std::vector<std::string>& params) {
    std::vector<const char*> p;
    for (const auto& x : params) p.push_back(x.c_str());
    PGresult* res =
        PQexecParams(pg_.c, sql.c_str(), static_cast<int>(p.size()), nullptr, p.data(), nullptr, nullptr, 0);
    std::optional<Row> out;
    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) >= 1) {
      Row row;
      row.accepted = std::string(PQgetvalue(res, 0, 0)) == "t";
      row.value = std::atoll(PQgetvalue(res, 0, 1));
      row.version = std::atoll(PQgetvalue(res, 0, 2));
      row.tag = PQgetvalue(res, 0, 3);
      row.last_written = std::atoll(PQgetvalue(res, 0, 4));
      row.last_seen = std::atoll(PQgetvalue(res, 0, 5));
      row.prev_value = std::atoll(PQgetvalue(res, 0, 6));
      row.prev_tag = PQgetvalue(res, 0, 7);
      out = row;
    } else {
      run_.say(std::string("PostgreSQL: ") + PQerrorMessage(pg_.c));
    }
    PQclear(res);
    return out;
  }

  static std::string with_fallback(const std::string& update) {
    return "WITH u AS (" + update +
           " RETURNING value, version, tag, last_written, last_seen, prev_value, prev_tag) "
           "SELECT true, * FROM u UNION ALL "
           "SELECT false, value, version, tag, last_written, last_seen, prev_value, prev_tag FROM reg "
           "WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM u)";
  }

  struct Seen {
    std::int64_t value = 0, version = 0;
    std::string tag;
  };

  std::optional<Seen> read(const ClientState& c, int iteration, const std::string& lease_value,
                           std::optional<std::int64_t> token, std::string& failure) {
    const ResourceSpec& spec = run_.s.resource;
    const bool fenced_read = spec.kind == ResourceKind::kFenced && spec.fence_reads;
    ResourceOpRecord rec;
    rec.kind = ResourceOpKind::kRead;
    rec.client = c.spec.name;
    rec.copy = "resource";
    rec.token = fenced_read ? token : std::nullopt;
    rec.lease_value = lease_value;
    rec.iteration = iteration;
    rec.sent = run_.tb.now();
    std::optional<Row> row;
    if (fenced_read && !token) {
      row = query(
          "SELECT false, value, version, tag, last_written, last_seen, prev_value, prev_tag FROM reg WHERE id = 1", {});
      if (row) rec.reason = "read without a token";
    } else if (fenced_read) {
      row = query(with_fallback("UPDATE reg SET last_seen = $1::bigint WHERE id = 1 AND $1::bigint >= last_seen"),
                  {std::to_string(*token)});
      if (row && !row->accepted) rec.reason = fmt::format("token {} < last_seen {}", *token, row->last_seen);
    } else {
      row = query(
          "SELECT true, value, version, tag, last_written, last_seen, prev_value, prev_tag FROM reg WHERE id = 1", {});
    }
    rec.at = run_.tb.now();
    if (!row) {
      failure = "read timed out";
      return std::nullopt;
    }
    rec.accepted = row->accepted;
    rec.value = row->value;
    rec.version = row->version;
    rec.tag = row->tag;
    rec.last_written = row->last_written;
    rec.last_seen = row->last_seen;
    record(std::move(rec));
    if (!row->accepted) {
      failure =
          "read rejected: " + (fenced_read && !token ? std::string("read without a token")
                                                     : fmt::format("token {} < last_seen {}", *token, row->last_seen));
      return std::nullopt;
    }
    return Seen{row->value, row->version, row->tag};
  }

  /// The write; its refusal reason, or "" when accepted; nullopt when it got no answer.
  std::optional<std::string> write(const ClientState& c, int iteration, const std::string& lease_value,
                                   std::optional<std::int64_t> token, const Seen& seen, std::int64_t value,
                                   const std::string& tag) {
    const ResourceSpec& spec = run_.s.resource;
    ResourceOpRecord rec;
    rec.kind = ResourceOpKind::kWrite;
    rec.write = true;
    rec.client = c.spec.name;
    rec.copy = "resource";
    rec.token = token;
    rec.read_value = seen.value;
    rec.value = value;
    rec.tag = tag;
    rec.lease_value = lease_value;
    rec.iteration = iteration;
    rec.sent = run_.tb.now();
    const std::string set =
        "UPDATE reg SET prev_value = value, prev_tag = tag, value = $2::bigint, tag = $3, version = version + 1";
    std::optional<Row> row;
    std::string reason;
    switch (spec.kind) {
      case ResourceKind::kFenced: {
        if (!token) {
          row = query(
              "SELECT false, value, version, tag, last_written, last_seen, prev_value, prev_tag FROM reg "
              "WHERE id = 1",
              {});
          reason = "write without a token";
          break;
        }
        const std::string cmp = spec.check == FenceCheck::kStrict ? ">" : ">=";
        row = query(with_fallback(set +
                                  ", last_written = $1::bigint, last_seen = GREATEST(last_seen, $1::bigint) "
                                  "WHERE id = 1 AND $1::bigint >= last_seen AND $1::bigint " +
                                  cmp + " last_written"),
                    {std::to_string(*token), std::to_string(value), tag});
        if (row && !row->accepted) {
          if (*token < row->last_seen) {
            reason = fmt::format("token {} < last_seen {}", *token, row->last_seen);
          } else {
            reason = fmt::format("token {} {} last_written {}", *token, spec.check == FenceCheck::kStrict ? "<=" : "<",
                                 row->last_written);
          }
        }
        break;
      }
      case ResourceKind::kCas:
        row = query(with_fallback(set + " WHERE id = 1 AND version = $4::bigint"),
                    {"0", std::to_string(value), tag, std::to_string(seen.version)});
        if (row && !row->accepted) reason = fmt::format("version {} != {}", seen.version, row->version);
        break;
      default:
        row =
            query(with_fallback(set + " WHERE id = 1 AND $1::bigint = $1::bigint"), {"0", std::to_string(value), tag});
        break;
    }
    rec.at = run_.tb.now();
    if (!row) return std::nullopt;
    rec.accepted = row->accepted && reason.empty();
    rec.reason = reason;
    rec.version = row->version;
    rec.last_written = row->last_written;
    rec.last_seen = row->last_seen;
    if (rec.accepted && !tag.empty()) {
      rec.effect = fmt::format("version {} by {} replaces version {}{}", value, tag, row->prev_value,
                               row->prev_tag.empty() ? "" : " by " + row->prev_tag);
    }
    record(std::move(rec));
    return reason;
  }

 private:
  void record(ResourceOpRecord rec) {
    std::lock_guard<std::mutex> g(run_.hmu);
    if (!run_.in_run(rec.at)) return;
    const bool audit = rec.accepted && run_.s.resource.kind == ResourceKind::kFenced;
    const Time at = rec.at;
    const std::int64_t last_seen = rec.last_seen;
    run_.h.resource_ops.push_back(std::move(rec));
    if (audit) run_.h.audit_holders(at, "resource", last_seen);
  }
  Run& run_;
  PgConn pg_;
};

// ------------------------------------------------------------ workloads --

std::int64_t next_value(const WorkloadSpec& w, std::int64_t v) {
  return w.kind == WorkloadKind::kSequenceAllocator ? v + w.block : v + 1;
}
std::string success_text(const WorkloadSpec& w, const Resource::Seen& seen, std::int64_t written) {
  switch (w.kind) {
    case WorkloadKind::kSequenceAllocator: return fmt::format("ok: claimed {}..{}", seen.value, written - 1);
    case WorkloadKind::kWriter:
      return fmt::format("ok: wrote version {} over version {}{}", written, seen.value,
                         seen.tag.empty() ? "" : " by " + seen.tag);
    default: return "ok: wrote " + std::to_string(written);
  }
}

Duration draw(Run& run, Duration lo, const std::optional<Duration>& hi) {
  if (!hi || *hi <= lo) return lo;
  std::lock_guard<std::mutex> l(run.rng_mu);
  std::uniform_int_distribution<std::int64_t> d(lo.count(), hi->count());
  return Duration{d(run.rng)};
}

/// The wait before CAS retry `k` (0 for the first): the model's rule
/// (models/workloads/register_workload.hpp, RegisterWorkload::retry_wait) —
/// `fixed`: retry_interval; `jitter`: t = min(16, 2^k) × retry_interval, a
/// draw in [t − t/2, t] — with the runner's own random numbers.
Duration cas_retry_wait(Run& run, const WorkloadSpec& w, Duration base, int k) {
  if (w.retry_backoff == RetryBackoff::kFixed) return base;
  const Duration step = base * (std::int64_t{1} << std::min(k, 4));
  return draw(run, step - step / 2, step);
}

enum class Step { kDone, kStop, kCrashed };

/// One iteration (ClientNode::iterate, real time). kStop when the run
/// stops; kCrashed when the client crashed during it (found at a safepoint:
/// the crash has already ended the belief and marked the iteration).
Step iterate(ClientState& c, Resource& res, int index) {
  Run& run = c.run;
  const WorkloadSpec& w = c.spec.workload;
  const int epoch = c.gate.epoch();
  auto crashed = [&] { return c.gate.epoch() != epoch; };
  std::size_t rec;
  {
    std::lock_guard<std::mutex> g(run.hmu);
    const Time now = run.tb.now();
    if (!run.in_run(now)) return Step::kStop;
    if (crashed()) return Step::kCrashed;
    run.h.iterations.push_back(IterationRecord{c.spec.name, index, now, std::nullopt, std::nullopt, false, "started"});
    rec = run.h.iterations.size() - 1;
    c.iteration = rec;
  }
  auto lease = c.lock->acquire();
  if (!lease) return crashed() ? Step::kCrashed : Step::kStop;
  {
    std::lock_guard<std::mutex> g(run.hmu);
    if (crashed()) return Step::kCrashed;
    run.h.iterations[rec].acquired = run.tb.now();
  }
  const bool fencing = c.spec.fencing && run.s.resource.kind == ResourceKind::kFenced;
  const std::optional<std::int64_t> token = fencing ? lease->token : std::nullopt;
  const Duration work = draw(run, w.work, w.work_max);
  bool success = false;
  std::string outcome;
  int retries = 0;
  for (;;) {
    bool conflict = false;
    std::string failure;
    if (!c.gate.pass(run.stop)) return Step::kStop;
    if (crashed()) return Step::kCrashed;
    const auto seen = res.read(c, index, lease->value, token, failure);
    if (!c.gate.pass(run.stop)) return Step::kStop;
    if (crashed()) return Step::kCrashed;
    if (!seen) {
      outcome = failure;
      break;
    }
    if (!c.sleep_for(work)) return Step::kStop;
    if (crashed()) return Step::kCrashed;
    const std::int64_t value = next_value(w, seen->value);
    const auto refused =
        res.write(c, index, lease->value, token, *seen, value, w.kind == WorkloadKind::kWriter ? c.spec.name : "");
    if (!c.gate.pass(run.stop)) return Step::kStop;
    if (crashed()) return Step::kCrashed;
    if (!refused) {
      outcome = "write timed out";
    } else if (refused->empty()) {
      success = true;
      outcome = success_text(w, *seen, value);
    } else {
      outcome = "write rejected: " + *refused;
      conflict = run.s.resource.kind == ResourceKind::kCas;
    }
    if (!conflict || retries >= w.retries) break;
    if (!c.sleep_for(cas_retry_wait(run, w, c.spec.retry_interval, retries))) return Step::kStop;
    ++retries;
    if (crashed()) return Step::kCrashed;
  }
  if (retries > 0) outcome += fmt::format(" (after {} {})", retries, retries == 1 ? "retry" : "retries");
  {
    std::lock_guard<std::mutex> g(run.hmu);
    const Time now = run.tb.now();
    if (!run.in_run(now)) return Step::kStop;
    if (crashed()) return Step::kCrashed;
    IterationRecord& it = run.h.iterations[rec];
    if (success) {
      it.success = true;
      it.done = now;
    }
    it.outcome = outcome;
    c.iteration.reset();
  }
  c.lock->release();
  return crashed() ? Step::kCrashed : Step::kDone;
}

/// One client's whole run (ClientNode::run, real time). A crash
/// (ClientState::crash) holds the thread until the restart; then it is a
/// new process: new connections, nothing remembered, and it goes on at once
/// with its next iteration not yet begun (ClientNode::on_restart).
void client_main(ClientState& c) {
  Run& run = c.run;
  const WorkloadSpec& w = c.spec.workload;
  try {
    std::optional<Resource> connected;
    try {
      connected.emplace(run, c.spec.name, c.sockets);
      c.lock->prepare();
    } catch (const std::exception& e) {
      run.say(c.spec.name + ": " + e.what());
    }
    run.arrive_and_wait();
    if (!connected) return;
    // A crash before the start cuts the sleep short: sleep on. A client
    // that is down when its start comes begins when it restarts.
    while (Clock::now() < run.tb.at(c.spec.start)) {
      if (!c.gate.sleep_until(run.tb.at(c.spec.start), run.stop)) return;
    }
    int seen_epoch = c.gate.epoch();
    auto come_back = [&] {
      // After the restart (the gate was passed): a new process.
      seen_epoch = c.gate.epoch();
      c.lock->forget();
      connected.reset();
      connected.emplace(run, c.spec.name, c.sockets);
      run.say(c.spec.name + ": restarted, with new connections");
    };
    if (seen_epoch != 0) come_back();
    for (int index = 0; index < w.iterations && !run.stop;) {
      const Step step = iterate(c, *connected, index++);
      if (step == Step::kStop) return;
      if (step == Step::kCrashed) {
        if (!c.gate.pass(run.stop)) return;
        come_back();
        continue;
      }
      if (index < w.iterations) {
        if (!c.sleep_for(draw(run, w.think, w.think_max))) return;
        if (c.gate.epoch() != seen_epoch) come_back();
      }
    }
  } catch (const std::exception& e) {
    run.say(c.spec.name + ": " + e.what());
  }
}

// ------------------------------------------------------------- servers --

void wait_for_redis(Run& run, const RedisProc& p, std::chrono::milliseconds timeout, const fs::path& log) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    RedisConn c;
    if (c.connect(p.port, 200ms)) {
      auto r = wrap(c.cmd({"PING"}));
      if (r && r->type == REDIS_REPLY_STATUS) return;
    }
    if (g_interrupted) throw std::runtime_error("interrupted");
    std::this_thread::sleep_for(20ms);
  }
  (void)run;
  throw std::runtime_error("fencesim-real: " + p.name + " did not answer PING within " +
                           std::to_string(timeout.count()) + " ms; its log:\n" + tail_of(log));
}

std::string first_line_of(const std::string& s) { return s.substr(0, s.find('\n')); }

/// A server that a clock fault reaches starts with the clock shim and its
/// own control file (real/clocks.hpp).
void with_clock_shim(Run& run, RedisProc& p) {
  if (!needs_clock_shim(run.s, p.name)) return;
  auto& clock = run.server_clocks[p.name];
  clock = std::make_unique<ServerClock>(p.dir / "clock");
  p.env = clock->env(run.clock_shim);
  run.say(p.name + " runs with fencesim-clock.so (" + clock->file().string() + ")");
}

/// Sentinel's failover-timeout: twice down_after (at least 3 s, the model's rule); with
/// replicas (whose replication link goes through a proxy, so that their
/// `master_port` is the proxy's, not the one Sentinel monitors) at least the
/// run's real length plus 30 s, because Sentinel re-points a replica whose
/// master address differs from its own view once failover-timeout has passed
/// since the replica's configuration last changed (sentinel.c,
/// sentinelRefreshInstanceInfo, "+fix-slave-config"), which would take the
/// replication link off its proxy. The timeout also spaces failover
/// attempts (2 x failover-timeout): a failover that fails (a split vote) is
/// not retried within such a run (docs/CONFORMANCE.md). Without replicas it
/// is the model's own (redis::failover_timeout_of).
std::int64_t failover_timeout_ms(const Run& run) {
  std::int64_t ms = run.tb.ms(redis::failover_timeout_of(run.s.lock.redis)).count();
  if (run.s.lock.redis.replicas > 0) ms = std::max<std::int64_t>(ms, run.tb.ms(run.s.duration).count() + 30000);
  return ms;
}

void start_redis(Run& run, std::vector<std::string>& versions) {
  const std::string server = require_program("redis-server", "redis-server");
  const auto v = run_command({server, "--version"}, 5000ms);
  versions.push_back(first_line_of(v.out));
  const Scenario& s = run.s;
  const int n = 1 + s.lock.redis.replicas;
  for (int i = 0; i < n; ++i) {
    RedisProc p;
    p.name = "redis-" + std::to_string(i);
    p.port = free_port();
    p.dir = run.dir.path() / p.name;
    fs::create_directories(p.dir);
    p.argv = {server,
              "--port",
              std::to_string(p.port),
              "--bind",
              "127.0.0.1",
              "--dir",
              p.dir.string(),
              "--save",
              "",
              "--protected-mode",
              "no",
              "--daemonize",
              "no",
              "--logfile",
              (p.dir / "redis.log").string()};
    if (s.lock.redis.persistence == RedisPersistence::kAofAlways) {
      p.argv.insert(p.argv.end(), {"--appendonly", "yes", "--appendfsync", "always"});
    } else if (s.lock.redis.persistence == RedisPersistence::kAofEverysec) {
      p.argv.insert(p.argv.end(), {"--appendonly", "yes", "--appendfsync", "everysec"});
    } else {
      p.argv.insert(p.argv.end(), {"--appendonly", "no"});
    }
    if (i > 0) {
      // The replication link goes through a proxy (partitions between
      // replica and primary; replication_delay holds the stream).
      const Duration rd = s.lock.redis.replication_delay;
      const int via = run.net.add_link(p.name, run.redis[0].name, run.redis[0].port, rd > Duration::zero());
      if (rd > Duration::zero()) run.links.set_base(p.name, run.redis[0].name, {}, {false, run.tb.real(rd)});
      p.argv.insert(p.argv.end(), {"--replicaof", "127.0.0.1", std::to_string(via)});
    }
    with_clock_shim(run, p);
    ChildOptions opt;
    opt.err = p.dir / "stderr.log";
    opt.env = p.env;
    p.child = std::make_unique<Child>(p.argv, opt);
    run.redis.push_back(std::move(p));
  }
  for (auto& p : run.redis) wait_for_redis(run, p, 10000ms, p.dir / "redis.log");
  // Replicas in sync before the run starts.
  for (int i = 1; i < n; ++i) {
    const auto until = Clock::now() + 10s;
    for (;;) {
      RedisConn c;
      std::string info;
      if (c.connect(run.redis[i].port, 300ms)) {
        auto r = wrap(c.cmd({"INFO", "replication"}));
        if (r && r->type == REDIS_REPLY_STRING) info = std::string(r->str, r->len);
      }
      if (info.find("master_link_status:up") != std::string::npos) break;
      if (Clock::now() > until) throw std::runtime_error("fencesim-real: " + run.redis[i].name + " did not sync");
      std::this_thread::sleep_for(50ms);
    }
  }
  const int m = s.lock.redis.sentinels;
  const int quorum = m / 2 + 1;
  for (int i = 0; i < m; ++i) {
    RedisProc p;
    p.name = "sentinel-" + std::to_string(i);
    p.port = free_port();
    p.dir = run.dir.path() / p.name;
    fs::create_directories(p.dir);
    const fs::path conf = p.dir / "sentinel.conf";
    std::ofstream out(conf);
    out << "port " << p.port << "\nbind 127.0.0.1\nprotected-mode no\ndir " << p.dir.string() << "\nlogfile "
        << (p.dir / "sentinel.log").string() << "\nsentinel monitor " << kSentinelName << " 127.0.0.1 "
        << run.redis[0].port << " " << quorum << "\nsentinel down-after-milliseconds " << kSentinelName << " "
        << run.tb.ms(s.lock.redis.down_after).count() << "\nsentinel failover-timeout " << kSentinelName << " "
        << failover_timeout_ms(run) << "\nsentinel parallel-syncs " << kSentinelName << " 1\n";
    out.close();
    p.argv = {server, conf.string(), "--sentinel"};
    with_clock_shim(run, p);
    ChildOptions opt;
    opt.err = p.dir / "stderr.log";
    opt.env = p.env;
    p.child = std::make_unique<Child>(p.argv, opt);
    run.sentinels.push_back(std::move(p));
  }
  for (auto& p : run.sentinels) wait_for_redis(run, p, 10000ms, p.dir / "sentinel.log");
  // Every sentinel knows the others and the replicas (hello messages every 2 s).
  if (m > 0) {
    const auto until = Clock::now() + 30s;
    for (auto& p : run.sentinels) {
      for (;;) {
        RedisConn c;
        bool ok = false;
        if (c.connect(p.port, 300ms)) {
          auto a = wrap(c.cmd({"SENTINEL", "sentinels", kSentinelName}));
          auto b = wrap(c.cmd({"SENTINEL", "replicas", kSentinelName}));
          ok = a && b && a->type == REDIS_REPLY_ARRAY && b->type == REDIS_REPLY_ARRAY &&
               static_cast<int>(a->elements) == m - 1 && static_cast<int>(b->elements) == n - 1;
        }
        if (ok) break;
        if (Clock::now() > until) {
          throw std::runtime_error("fencesim-real: " + p.name + " did not discover the other sentinels and replicas; " +
                                   "its log:\n" + tail_of(p.dir / "sentinel.log"));
        }
        if (g_interrupted) throw std::runtime_error("interrupted");
        std::this_thread::sleep_for(100ms);
      }
    }
  }
}

void start_etcd(Run& run, std::vector<std::string>& versions) {
  const std::string etcd = require_program("etcd", "etcd-server");
  const auto v = run_command({etcd, "--version"}, 5000ms);
  versions.push_back(first_line_of(v.out));
  const Scenario& s = run.s;
  const int n = s.lock.etcd.nodes;
  std::string cluster;
  for (int i = 0; i < n; ++i) {
    RedisProc p;
    p.name = "etcd-" + std::to_string(i);
    p.port = free_port();
    run.etcd_peer_ports.push_back(free_port());
    cluster += fmt::format("{}{}=http://127.0.0.1:{}", cluster.empty() ? "" : ",", p.name, run.etcd_peer_ports.back());
    run.etcd.push_back(std::move(p));
  }
  const auto heartbeat = std::max<std::int64_t>(run.tb.ms(s.lock.etcd.heartbeat).count(), 20);
  const auto election = std::max<std::int64_t>(run.tb.ms(s.lock.etcd.election_timeout).count(), 5 * heartbeat);
  for (int i = 0; i < n; ++i) {
    RedisProc& p = run.etcd[i];
    p.dir = run.dir.path() / p.name;
    fs::create_directories(p.dir);
    const std::string client = fmt::format("http://127.0.0.1:{}", p.port);
    const std::string peer = fmt::format("http://127.0.0.1:{}", run.etcd_peer_ports[i]);
    p.argv = {etcd,
              "--name",
              p.name,
              "--data-dir",
              (p.dir / "data").string(),
              "--listen-client-urls",
              client,
              "--advertise-client-urls",
              client,
              "--listen-peer-urls",
              peer,
              "--initial-advertise-peer-urls",
              peer,
              "--initial-cluster",
              cluster,
              "--initial-cluster-state",
              "new",
              "--initial-cluster-token",
              "fencesim-real",
              "--heartbeat-interval",
              std::to_string(heartbeat),
              "--election-timeout",
              std::to_string(election),
              "--logger",
              "zap",
              "--log-outputs",
              (p.dir / "etcd.log").string()};
    ChildOptions opt;
    opt.err = p.dir / "stderr.log";
    p.child = std::make_unique<Child>(p.argv, opt);
    run.etcd_endpoints += (run.etcd_endpoints.empty() ? "" : ",") + client;
  }
  // The cluster has a leader (a put through the helper's observer works).
  ChildOptions opt;
  opt.pipes = true;
  opt.err = run.dir.path() / "etcd-observer.log";
  run.etcd_observer = std::make_unique<LineChild>(
      std::vector<std::string>{run.helper, "-endpoints", run.etcd_endpoints, "-prefix", s.lock.key, "-observe"}, opt,
      [&run](const std::string& line) {
        std::istringstream in(line);
        std::string word, key;
        std::int64_t create = 0;
        in >> word >> key >> create;
        if (word != "deleted") return word == "put";
        const Time at = run.tb.now();
        const std::string value = key + "@" + std::to_string(create);
        std::lock_guard<std::mutex> g(run.hmu);
        if (!run.in_run(at)) return true;
        run.h.lease_end(at, value, run.released.count(value) ? "deleted" : "lease expired (key deleted by etcd)");
        run.live.erase(value);
        return true;
      });
  auto ready = run.etcd_observer->next(run.stop);
  if (!ready || *ready != "ready") {
    throw std::runtime_error("fencesim-real: the etcd observer did not start:\n" + tail_of(opt.err));
  }
  const std::string etcdctl = require_program("etcdctl", "etcd-client");
  const auto until = Clock::now() + 30s;
  for (;;) {
    ChildOptions e;
    e.env = {"ETCDCTL_API=3"};
    const auto r = run_command(
        {etcdctl, "--endpoints", run.etcd_endpoints, "--command-timeout=2s", "put", "fencesim-real/ready", "1"}, 5000ms,
        e);
    if (r.status == 0) break;
    if (Clock::now() > until) {
      throw std::runtime_error("fencesim-real: the etcd cluster did not accept a put within 30 s; etcd-0's log:\n" +
                               tail_of(run.etcd[0].dir / "etcd.log"));
    }
    if (g_interrupted) throw std::runtime_error("interrupted");
    std::this_thread::sleep_for(200ms);
  }
}

std::optional<unsigned> postgres_uid, postgres_gid;

void start_postgres(Run& run, std::vector<std::string>& versions) {
  const std::vector<std::string> pgdirs = {"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin",
                                           "/usr/lib/postgresql/17/bin"};
  const std::string initdb = require_program("initdb", "postgresql", pgdirs);
  const std::string postgres = require_program("postgres", "postgresql", pgdirs);
  const auto v = run_command({postgres, "--version"}, 5000ms);
  versions.push_back(first_line_of(v.out));
  ChildOptions as;
  if (::geteuid() == 0) {
    // PostgreSQL refuses to run as root: run it as the `postgres` user the
    // Debian package creates.
    const passwd* pw = ::getpwnam("postgres");
    if (pw == nullptr) {
      throw MissingProgram(
          "fencesim-real: running as root, PostgreSQL needs the `postgres` user (created by the Debian package "
          "postgresql); install it or run fencesim-real as an ordinary user");
    }
    as.uid = pw->pw_uid;
    as.gid = pw->pw_gid;
  }
  Postgres& pg = run.pg;
  pg.dir = run.dir.path() / "postgres";
  fs::create_directories(pg.dir);
  if (as.uid) {
    for (const auto& p : {pg.dir}) (void)!::chown(p.c_str(), *as.uid, *as.gid);
  }
  as.err = pg.dir / "initdb.log";
  as.out = pg.dir / "initdb.log";
  const auto r = run_command(
      {initdb, "-D", (pg.dir / "data").string(), "-U", "fencesim", "--auth=trust", "-E", "UTF8", "--no-sync"}, 60000ms,
      as);
  if (r.status != 0) {
    throw std::runtime_error("fencesim-real: initdb failed; its log:\n" + r.out + tail_of(pg.dir / "initdb.log"));
  }
  pg.port = free_port();
  pg.argv = {postgres,
             "-D",
             (pg.dir / "data").string(),
             "-p",
             std::to_string(pg.port),
             "-k",
             pg.dir.string(),
             "-c",
             "listen_addresses=127.0.0.1",
             "-c",
             "fsync=off",
             "-c",
             "shared_buffers=16MB",
             "-c",
             "max_connections=40",
             "-c",
             "synchronous_commit=off"};
  pg.opt = as;
  pg.opt.out = pg.dir / "postgres.log";
  pg.opt.err = pg.dir / "postgres.log";
  pg.opt.stop_signal = SIGQUIT;
  pg.child = std::make_unique<Child>(pg.argv, pg.opt);
  run.pg_conninfo = fmt::format("host=127.0.0.1 port={} user=fencesim dbname=postgres connect_timeout=5", pg.port);
  const auto until = Clock::now() + 30s;
  PGconn* c = nullptr;
  for (;;) {
    c = PQconnectdb(run.pg_conninfo.c_str());
    if (PQstatus(c) == CONNECTION_OK) break;
    PQfinish(c);
    if (Clock::now() > until || !pg.child->running()) {
      throw std::runtime_error("fencesim-real: PostgreSQL did not start; its log:\n" +
                               tail_of(pg.dir / "postgres.log"));
    }
    if (g_interrupted) throw std::runtime_error("interrupted");
    std::this_thread::sleep_for(100ms);
  }
  const std::string setup = fmt::format(
      "CREATE TABLE reg (id int PRIMARY KEY, value bigint NOT NULL, version bigint NOT NULL, tag text NOT NULL, "
      "last_written bigint NOT NULL, last_seen bigint NOT NULL, prev_value bigint NOT NULL, prev_tag text NOT NULL);"
      "INSERT INTO reg VALUES (1, {}, 0, '', 0, 0, 0, '')",
      run.s.resource.initial);
  PGresult* res = PQexec(c, setup.c_str());
  const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
  PQclear(res);
  PQfinish(c);
  if (!ok) throw std::runtime_error("fencesim-real: could not create the resource table");
}

// --------------------------------------------------------------- faults --

RedisProc* find_proc(Run& run, const std::string& name) {
  for (auto* v : {&run.redis, &run.sentinels, &run.etcd}) {
    for (auto& p : *v) {
      if (p.name == name) return &p;
    }
  }
  return nullptr;
}

/// The node a role alias stands for now.
std::string resolve_target(Run& run, const std::string& target) {
  if (target == "redis-primary") {
    const auto port = run.primary_port();
    return port ? run.redis_name_of_port(*port) : "redis-0";
  }
  if (target == "etcd-leader") {
    const std::string etcdctl = require_program("etcdctl", "etcd-client");
    ChildOptions e;
    e.env = {"ETCDCTL_API=3"};
    for (int attempt = 0; attempt < 20; ++attempt) {
      const auto r = run_command(
          {etcdctl, "--endpoints", run.etcd_endpoints, "--command-timeout=1s", "endpoint", "status", "-w", "json"},
          5000ms, e);
      try {
        const auto j = nlohmann::json::parse(r.out);
        for (const auto& st : j) {
          if (st["Status"]["leader"] == st["Status"]["header"]["member_id"]) {
            const std::string ep = st["Endpoint"];
            for (const auto& m : run.etcd) {
              if (ep == fmt::format("http://127.0.0.1:{}", m.port)) return m.name;
            }
          }
        }
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(100ms);
    }
    throw std::runtime_error("fencesim-real: could not find the etcd leader");
  }
  return target;
}

/// A clock_jump, or a clock_drift's start (or its end: `end`), on a Redis
/// client's clocks or a shimmed server's (real/clocks.hpp). A jump's `by`
/// is scaled to real time; a drift's rate is not.
void apply_clock_fault(Run& r, const FaultSpec& f, const std::string& node, ClientState* c, bool end) {
  if (c) {
    if (f.kind == FaultKind::kClockJump) {
      c->clock.jump(f.clock, f.by);
    } else {
      c->clock.set_drift(end ? 0 : f.ppm);
    }
    c->gate.wake();
    if (c->lock) c->lock->clock_changed();
    return;
  }
  const auto it = r.server_clocks.find(node);
  if (it == r.server_clocks.end()) {
    r.say("no clock shim on " + node + ": clock fault not applied");
    return;
  }
  if (f.kind == FaultKind::kClockJump) {
    it->second->jump(f.clock, std::chrono::duration_cast<std::chrono::nanoseconds>(r.tb.real(f.by)));
  } else {
    it->second->set_drift(end ? 0 : f.ppm);
  }
  if (end) r.say(fmt::format("clock_drift of {} ended", node));
}

}  // namespace

std::string unsupported_reason(const Scenario& s) {
  if (s.lock.service != ServiceKind::kRedis && s.lock.service != ServiceKind::kEtcd) {
    return fmt::format("lock.service \"{}\": only redis and etcd run against real servers", to_string(s.lock.service));
  }
  if (s.lock.service == ServiceKind::kRedis && s.lock.redis.redlock > 0)
    return "Redlock (lock.redlock) is not supported";
  if (multiple_locks(s.lock)) return "more than one lock (lock.keys): the runner takes lock.key only";
  if (s.network.loss_ppb > 0) {
    return "network.loss: the real links are TCP connections, which retransmit a lost segment (a delay, not a lost "
           "message); the proxy has no per-message loss";
  }
  if (s.lock.service == ServiceKind::kRedis && s.lock.redis.cluster) {
    return "Redis Cluster (lock.cluster): the runner starts a primary with replicas and Sentinels, not a cluster";
  }
  if (std::string why = clock_unsupported_reason(s); !why.empty()) return why;
  if (s.resource.custom_check) return "a custom ResourceCheck (C++ only; the real resource is SQL)";
  if (s.resource.replicas > 0) return "resource.replicas: the real resource is one PostgreSQL row";
  if (s.resource.idempotent || s.resource.kind == ResourceKind::kIdempotent) return "an idempotent ledger";
  if (s.nemesis) return "a nemesis (materialize it first: fencesim write FILE --materialize-nemesis)";
  for (const ClientSpec& c : s.clients) {
    if (c.workload.kind != WorkloadKind::kCounter && c.workload.kind != WorkloadKind::kSequenceAllocator &&
        c.workload.kind != WorkloadKind::kWriter) {
      return fmt::format("clients[{}].workload.kind \"{}\"", c.name, to_string(c.workload.kind));
    }
    if (c.check_lease_before_write || c.on_lease_loss != LeaseLossPolicy::kContinue || c.lease_loss_after) {
      return "client policies (check_lease_before_write, on_lease_loss, lease_loss_after) of client " + c.name;
    }
    if (c.resource != "resource") return "client " + c.name + " routed to a resource replica";
    if (c.ttl) return "a client's own ttl (clients[].ttl) of client " + c.name + ": every real client uses lock.ttl";
    if (c.library != EtcdLibrary::kGo) {
      return "client " + c.name + "'s \"library\": \"jetcd\": the real etcd clients are etcd's Go client";
    }
    if (c.policy) return "a custom ClientPolicy (C++ only) of client " + c.name;
  }
  for (const FaultSpec& f : s.faults) {
    if (f.at_max) return "a fault with a ranged start (" + f.origin + ")";
    switch (f.kind) {
      case FaultKind::kPause:
      case FaultKind::kFailover:
      case FaultKind::kCounterReset:
      case FaultKind::kClockJump:  // clock_unsupported_reason above
      case FaultKind::kClockDrift: break;
      case FaultKind::kPartition:
      case FaultKind::kHeal:
      case FaultKind::kSlow:
        if (std::string why = link_fault_reason(s, f); !why.empty()) return why;
        break;
      case FaultKind::kCrash: {
        if (f.power_loss) {
          return "a power-loss crash (" + f.origin +
                 "): a machine crash cannot be made real on this box: the servers share the runner's kernel, "
                 "whose page cache keeps every write a killed process made (lock.persistence aof_always / "
                 "aof_everysec with a plain crash runs)";
        }
        if (f.target == "resource") return "a crash of the resource (" + f.origin + ")";
        break;
      }
      default:
        return fmt::format("fault kind \"{}\" ({}) is not implemented in fencesim-real", to_string(f.kind), f.origin);
    }
  }
  return "";
}

RealResult run_real(const Scenario& s, const RealOptions& opt) {
  if (std::string why = unsupported_reason(s); !why.empty()) throw NotSupported(why);
  if (!(opt.scale > 0 && opt.scale <= 10)) throw NotSupported("--scale must be in (0, 10]");
  const auto wall0 = Clock::now();
  RealResult out;
  TempDir dir(s.name, opt.keep_dir);
  out.temp_dir = dir.path().string();

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  struct sigaction old_int {
  }, old_term{}, old_pipe{};
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  // A line to a Go helper that a client crash has just killed must not kill
  // the runner (children get the default back: real/process.cpp).
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old_pipe);
  struct Restore {
    struct sigaction i, t, p;
    ~Restore() {
      ::sigaction(SIGINT, &i, nullptr);
      ::sigaction(SIGTERM, &t, nullptr);
      ::sigaction(SIGPIPE, &p, nullptr);
    }
  } restore{old_int, old_term, old_pipe};
  g_interrupted = false;

  auto run = std::make_unique<Run>(s, Timebase{opt.scale, Clock::now()}, dir, opt.log);
  Run& r = *run;
  std::vector<std::unique_ptr<ClientState>> clients;
  std::vector<std::thread> threads;
  std::thread poller;
  auto stop_everything = [&] {
    r.stop = true;
    // Closing the proxies wakes a client that waits on a held connection.
    r.net.close_all();
    {
      std::lock_guard<std::mutex> l(r.start_mu);  // wakes a client still at the start barrier
    }
    r.start_cv.notify_all();
    for (auto& c : clients) c->gate.wake();
    for (auto& c : clients) c->gate.open();
    // The Go helpers answer nothing more once killed: their readers see EOF.
    for (auto& c : clients) {
      if (c->helper) c->helper->child().signal(SIGCONT);
    }
    for (auto& t : threads) {
      if (t.joinable()) t.join();
    }
    if (poller.joinable()) poller.join();
    clients.clear();
  };
  try {
    if (s.lock.service == ServiceKind::kEtcd) {
      const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
      const fs::path helper = opt.helper_dir.empty() ? self / "etcd-lock" : fs::path(opt.helper_dir) / "etcd-lock";
      if (::access(helper.c_str(), X_OK) != 0) {
        throw MissingProgram("the etcd client helper " + helper.string() +
                             " is missing; it is built with fencesim-real when golang-go and golang-etcd-server-dev "
                             "are installed (tools/deps.sh --test)");
      }
      r.helper = helper.string();
    }
    bool server_clock = false;
    for (const FaultSpec& f : s.faults) {
      bool client = false;
      for (const ClientSpec& c : s.clients) client = client || c.name == f.target;
      server_clock = server_clock || ((f.kind == FaultKind::kClockJump || f.kind == FaultKind::kClockDrift) &&
                                      f.at < s.duration && !client);
    }
    if (server_clock) {
      const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
      const fs::path shim =
          opt.helper_dir.empty() ? self / "fencesim-clock.so" : fs::path(opt.helper_dir) / "fencesim-clock.so";
      if (::access(shim.c_str(), R_OK) != 0) {
        throw MissingProgram("fencesim-real: the clock shim " + shim.string() +
                             " is missing; it is built with fencesim-real (target fencesim_clock_shim)");
      }
      r.clock_shim = shim.string();
      for (const FaultSpec& f : s.faults) {
        bool client = false;
        for (const ClientSpec& c : s.clients) client = client || c.name == f.target;
        if (f.kind != FaultKind::kClockJump || f.at >= s.duration || client) continue;
        const char* which = f.clock == ClockSelect::kWall        ? "wall clock"
                            : f.clock == ClockSelect::kMonotonic ? "monotonic clock"
                                                                 : "wall and monotonic clocks";
        out.remarks.push_back(fmt::format(
            "{}: the {} of {} stepped by {:+.3f} s of real time ({} x scale {}) "
            "through fencesim-clock.so",
            f.origin, which, f.target, f.by.count() * opt.scale / 1e9, sim::format_duration(f.by), opt.scale));
      }
    }
    r.say("starting PostgreSQL");
    start_postgres(r, out.versions);
    if (s.lock.service == ServiceKind::kRedis) {
      r.say("starting Redis");
      start_redis(r, out.versions);
    } else {
      r.say("starting etcd");
      start_etcd(r, out.versions);
      const int ttl = std::max(1, static_cast<int>(std::ceil(s.lock.ttl.count() * opt.scale / 1e9 - 1e-9)));
      if (std::abs(ttl - s.lock.ttl.count() * opt.scale / 1e9) > 1e-6) {
        out.remarks.push_back(fmt::format("etcd lease TTL {} s (the scaled TTL {:.3f} s rounded up to whole seconds)",
                                          ttl, s.lock.ttl.count() * opt.scale / 1e9));
      }
    }
    // Every client reaches every server and the resource through a proxy
    // of its own (real/proxy.hpp), so that link faults can cut or slow it.
    for (const ClientSpec& c : s.clients) {
      for (auto* v : {&r.redis, &r.sentinels, &r.etcd}) {
        for (const RedisProc& p : *v) r.net.add_link(c.name, p.name, p.port);
      }
      r.net.add_link(c.name, "resource", r.pg.port);
    }
    // Clients (their connections and helpers are set up before time 0).
    for (std::size_t i = 0; i < s.clients.size(); ++i) {
      clients.push_back(std::make_unique<ClientState>(r, s.clients[i], i));
      ClientState& c = *clients.back();
      if (s.lock.service == ServiceKind::kRedis) {
        c.lock = std::make_unique<RedisLock>(c);
      } else {
        c.lock = std::make_unique<EtcdLock>(c);
      }
    }
    for (auto& c : clients) {
      ClientState* cp = c.get();
      threads.emplace_back([cp] { client_main(*cp); });
    }
    {
      std::unique_lock<std::mutex> l(r.start_mu);
      if (!r.start_cv.wait_for(l, 60s, [&] { return r.ready == clients.size(); })) {
        throw std::runtime_error("fencesim-real: the clients did not connect within 60 s");
      }
    }
    r.say("running");
    {
      std::lock_guard<std::mutex> l(r.start_mu);
      r.tb.t0 = Clock::now();
      r.running = true;
      r.go = true;
    }
    r.start_cv.notify_all();
    // The service observer: polls the primary (Redis); etcd's is the watch above.
    if (s.lock.service == ServiceKind::kRedis) {
      poller = std::thread([&r] {
        RedisConn conn;
        auto resolved = Clock::now();
        while (!r.stop) {
          std::this_thread::sleep_for(5ms);
          if (!conn.ok()) {
            const auto port = r.primary_port();
            if (!port || !conn.connect(*port, 200ms)) {
              // The primary is down: a lease ends unless a live replica or
              // its AOF (lock.persistence) holds it.
              if (r.sentinels.empty() && r.redis.size() == 1 && r.s.lock.redis.persistence == RedisPersistence::kNone) {
                const Time at = r.tb.now();
                std::lock_guard<std::mutex> g(r.hmu);
                for (auto it = r.live.begin(); it != r.live.end();) {
                  if (r.in_run(at)) r.h.lease_end(at, it->first, "redis-0 is down and no live replica holds it");
                  it = r.live.erase(it);
                }
              }
              continue;
            }
          }
          if (!r.sentinels.empty() && Clock::now() - resolved > 50ms) {
            resolved = Clock::now();
            const auto port = r.primary_port();
            if (port && *port != conn.port()) {
              conn.drop();
              continue;
            }
          }
          const auto sent = Clock::now();
          auto rep = wrap(conn.cmd({"GET", r.s.lock.key}));
          if (!rep) continue;  // paused or gone: judged on the next answer
          std::string cur = rep->type == REDIS_REPLY_STRING ? std::string(rep->str, rep->len) : "";
          if (rep->type == REDIS_REPLY_ERROR) continue;
          const int port = conn.port();
          // A primary that was demoted answers as a replica: ask Sentinel again.
          if (!r.sentinels.empty()) {
            auto role = wrap(conn.cmd({"ROLE"}));
            if (role && role->type == REDIS_REPLY_ARRAY && role->elements > 0 &&
                std::string(role->element[0]->str) != "master") {
              conn.drop();
              continue;
            }
          }
          const Time at = r.tb.now();
          std::lock_guard<std::mutex> g(r.hmu);
          for (auto it = r.live.begin(); it != r.live.end();) {
            if (it->first != cur && it->second < sent) {
              const std::string node = r.redis_name_of_port(port);
              std::string why = r.released.count(it->first) ? "deleted"
                                : cur.empty()               ? fmt::format("expired on {} wall clock", node)
                                              : fmt::format("{}, the current primary, does not hold it", node);
              if (r.in_run(at)) r.h.lease_end(at, it->first, why);
              it = r.live.erase(it);
            } else {
              ++it;
            }
          }
        }
      });
    }

    // Faults, on this thread (it started every child, so restarts keep
    // their death signal), in time order: each fault's start resolves its
    // target (a role alias names the node that has the role now), records
    // the fault and applies it; its end (pause) or restart (crash) follows.
    const std::vector<FaultSpec> faults = draw_fault_times(s);
    std::vector<std::pair<Clock::time_point, std::function<void()>>> actions;
    auto client_of = [&clients](const std::string& name) -> ClientState* {
      for (auto& c : clients) {
        if (c->spec.name == name) return c.get();
      }
      return nullptr;
    };
    for (const FaultSpec& f : faults) {
      if (f.at >= s.duration) continue;
      const auto start = r.tb.at(f.at);
      auto resolved = std::make_shared<std::string>(f.target);
      actions.emplace_back(start, [&r, f, resolved, &faults, client_of] {
        FaultRecord rec;
        rec.start = r.tb.now();
        rec.end = fault_end(f, faults);
        rec.kind = f.kind;
        rec.target = f.target;
        rec.detail = fault_detail(f);
        rec.origin = f.origin;
        try {
          *resolved = resolve_target(r, f.target);
        } catch (const std::exception& e) {
          rec.skipped = true;
          rec.skip_reason = e.what();
        }
        if (*resolved != f.target) rec.detail += (rec.detail.empty() ? "" : ", ") + ("now " + *resolved);
        r.say(fmt::format("fault {} {} {}", to_string(f.kind), *resolved, rec.detail));
        {
          std::lock_guard<std::mutex> g(r.hmu);
          r.h.faults.push_back(rec);
        }
        if (rec.skipped) return;
        switch (f.kind) {
          case FaultKind::kPause:
            if (ClientState* c = client_of(*resolved)) {
              c->gate.close();
              if (c->helper) c->helper->child().signal(SIGSTOP);
            } else if (RedisProc* p = find_proc(r, *resolved)) {
              p->child->signal(SIGSTOP);
            } else if (*resolved == "resource") {
              r.pg.child->signal(SIGSTOP);
            }
            break;
          case FaultKind::kCrash:
            if (ClientState* c = client_of(*resolved)) {
              if (!c->gate.down()) c->crash();
            } else if (RedisProc* p = find_proc(r, *resolved)) {
              p->child->kill_now();
            }
            break;
          case FaultKind::kFailover: {
            for (auto& sp : r.sentinels) {
              RedisConn c;
              if (!c.connect(sp.port, 500ms)) continue;
              auto rep = wrap(c.cmd({"SENTINEL", "FAILOVER", kSentinelName}));
              if (rep && rep->type == REDIS_REPLY_STATUS) return;
            }
            r.say("SENTINEL FAILOVER was refused by every sentinel");
            break;
          }
          case FaultKind::kPartition: {
            // Roles resolve now; the partition keeps the nodes it resolved to.
            std::vector<std::vector<std::string>> groups;
            for (const auto& g : f.isolate.empty() ? f.groups : std::vector<std::vector<std::string>>{f.isolate}) {
              std::vector<std::string> names;
              for (const std::string& n : g) {
                try {
                  names.push_back(resolve_target(r, n));
                } catch (const std::exception&) {
                  // a role with no node is left out
                }
              }
              groups.push_back(std::move(names));
            }
            *resolved = std::to_string(r.links.add_partition(std::move(groups), !f.isolate.empty(), f.one_way));
            break;
          }
          case FaultKind::kHeal: r.links.heal(); break;
          case FaultKind::kSlow:
            *resolved += "#" + std::to_string(r.links.add_slow(*resolved, r.tb.real(f.delay)));
            break;
          case FaultKind::kCounterReset:
            if (f.target == "resource") {
              PgConn c;
              c.c = PQconnectdb(r.pg_conninfo.c_str());
              const std::string sql =
                  fmt::format("UPDATE reg SET last_written = {0}, last_seen = {0} WHERE id = 1", f.value);
              PQclear(PQexec(c.c, sql.c_str()));
            } else {
              RedisConn c;
              const auto port = r.primary_port();
              if (port && c.connect(*port, 500ms)) {
                wrap(c.cmd({"SET", redis_counter_key(r.s.lock), std::to_string(f.value)}));
              }
            }
            break;
          case FaultKind::kClockJump:
          case FaultKind::kClockDrift: apply_clock_fault(r, f, *resolved, client_of(*resolved), false); break;
          default: break;
        }
      });
      if (f.kind == FaultKind::kClockDrift && f.duration) {
        actions.emplace_back(start + r.tb.real(*f.duration), [&r, f, resolved, client_of] {
          apply_clock_fault(r, f, *resolved, client_of(*resolved), true);
        });
      }
      if (f.kind == FaultKind::kPause) {
        actions.emplace_back(start + r.tb.real(f.duration.value_or(Duration{0})), [&r, resolved, client_of] {
          if (ClientState* c = client_of(*resolved)) {
            if (c->helper) c->helper->child().signal(SIGCONT);
            c->gate.open();
          } else if (RedisProc* p = find_proc(r, *resolved)) {
            p->child->signal(SIGCONT);
          } else if (*resolved == "resource") {
            r.pg.child->signal(SIGCONT);
          }
        });
      }
      if ((f.kind == FaultKind::kPartition || f.kind == FaultKind::kSlow) && f.duration) {
        // `resolved` holds the partition's id, or "node#id" for a slow fault.
        actions.emplace_back(start + r.tb.real(*f.duration), [&r, resolved, kind = f.kind] {
          const std::string& v = *resolved;
          const std::string id = kind == FaultKind::kSlow ? v.substr(v.rfind('#') + 1) : v;
          if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) return;
          if (kind == FaultKind::kSlow) {
            r.links.end_slow(std::stoi(id));
          } else {
            r.links.end_partition(std::stoi(id));
          }
        });
      }
      if (f.kind == FaultKind::kCrash && f.restart_after) {
        actions.emplace_back(start + r.tb.real(*f.restart_after), [&r, resolved, client_of] {
          if (ClientState* c = client_of(*resolved)) {
            if (c->gate.down()) {
              c->lock->restart();
              c->gate.restart();
              r.say("restarted client " + c->spec.name);
            }
          } else if (RedisProc* p = find_proc(r, *resolved)) {
            ChildOptions o;
            o.err = p->dir / "stderr.log";
            o.env = p->env;
            p->child = std::make_unique<Child>(p->argv, o);
            r.say("restarted " + p->name);
          }
        });
      }
    }
    std::stable_sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t next_action = 0;
    const auto end = r.tb.at(s.duration);
    while (Clock::now() < end) {
      if (g_interrupted) throw std::runtime_error("interrupted (SIGINT/SIGTERM): every server was stopped");
      const auto now = Clock::now();
      while (next_action < actions.size() && actions[next_action].first <= now) actions[next_action++].second();
      std::this_thread::sleep_for(2ms);
    }
    r.say("run ended; stopping");
    stop_everything();
  } catch (...) {
    // The servers stop in order as `run` goes (PostgreSQL with an immediate
    // shutdown, so that its backends exit before the folder is removed).
    stop_everything();
    r.etcd_observer.reset();
    throw;
  }
  r.etcd_observer.reset();

  // Judge the History exactly as run_scenario does.
  RunResult& res = out.run;
  res.seed = s.seed;
  res.faults = draw_fault_times(s);
  res.history = std::move(r.h);
  std::stable_sort(res.history.grants.begin(), res.history.grants.end(),
                   [](const GrantRecord& a, const GrantRecord& b) { return a.at < b.at; });
  for (std::size_t i = 0; i < res.history.grants.size(); ++i) res.history.grants[i].seq = i;
  std::stable_sort(res.history.resource_ops.begin(), res.history.resource_ops.end(),
                   [](const ResourceOpRecord& a, const ResourceOpRecord& b) { return a.at < b.at; });
  res.context.run_end = s.duration;
  res.context.last_fault_end = last_fault_end(res.faults, s.duration, res.context.any_fault);
  std::vector<Verdict> service;
  if (property_applies(s, Property::kRaftSafety)) {
    Verdict v;
    v.property = Property::kRaftSafety;
    v.status = Status::kNotApplicable;
    v.summary = "not checked on a real run: etcd's Raft log is not observed";
    service.push_back(v);
  }
  Scenario judged = s;
  judged.expect.erase(Property::kRaftSafety);
  res.verdicts = check_all(judged, res.history, res.context, service);
  res.metrics = compute_metrics(judged, res.history, res.context);
  res.metric_verdicts = check_metric_expectations(judged, res.metrics);
  res.all_met = true;
  for (const Verdict& v : res.verdicts) res.all_met = res.all_met && v.met;
  for (const MetricVerdict& v : res.metric_verdicts) res.all_met = res.all_met && v.met;
  res.trace.set_enabled(true);
  build_trace(res.history, res.trace);
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - wall0).count();
  return out;
}

Comparison compare_verdicts(const std::vector<Verdict>& sim, const std::vector<Verdict>& real) {
  Comparison c;
  for (const Verdict& sv : sim) {
    if (sv.property == Property::kRaftSafety) continue;
    const Verdict* rv = nullptr;
    for (const Verdict& v : real) {
      if (v.property == sv.property) rv = &v;
    }
    const std::string rs = rv ? to_string(rv->status) : "missing";
    const bool same = rv && rv->status == sv.status;
    c.lines.push_back(fmt::format("{:<18} sim {:<14} real {:<14} {}", to_string(sv.property), to_string(sv.status), rs,
                                  same ? "same" : "DIFFERENT"));
    if (!same) c.differing.push_back(sv.property);
  }
  return c;
}

void mark_real_reports(const std::string& dir, const RealResult& r, double scale) {
  const fs::path md = fs::path(dir) / "report.md";
  std::string body;
  {
    std::ifstream in(md);
    std::stringstream ss;
    ss << in.rdbuf();
    body = ss.str();
  }
  std::string versions;
  for (const auto& v : r.versions) versions += (versions.empty() ? "" : "; ") + v;
  std::string head = fmt::format(
      "> **Real run** (fencesim-real): the scenario ran against real processes on 127.0.0.1 ({}), time scale {} "
      "(real seconds per scenario second), {:.1f} s of wall time. A real run is one observation, not a replay: "
      "running it again can give another History.\n",
      versions, scale, r.wall_seconds);
  for (const auto& x : r.remarks) head += "> " + x + "\n";
  std::ofstream(md) << head << "\n" << body;
  nlohmann::json j;
  j["real_run"] = true;
  j["versions"] = r.versions;
  j["scale"] = scale;
  j["wall_seconds"] = r.wall_seconds;
  j["remarks"] = r.remarks;
  std::ofstream(fs::path(dir) / "real.json") << j.dump(2) << "\n";
}

}  // namespace fencesim::real
