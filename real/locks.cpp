// real/locks.cpp — RedisLock and EtcdLock (real/locks.hpp). Sources:
//   Redis 7.0 (Debian redis-server 7.0.15): the lock scripts are the ones
//     tests/conformance/redis_conformance_test.cpp checks against the model
//     (SET NX PX + INCR, compare-and-PEXPIRE, compare-and-DEL; redis.io
//     "Distributed Locks with Redis").
//   etcd 3.4.23: clientv3/concurrency session.go and mutex.go, used as they
//     are by real/etcd-lock/main.go.
#include "real/locks.hpp"

#include <cmath>
#include <functional>
#include <sstream>

#include "models/redis/redis.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"
#include "models/zookeeper/zookeeper.hpp"

namespace fencesim::real {

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
    const bool with_token = lock.redis().token == RedisToken::kIncr;
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
  /// A renewal's answer (the renewer's thread): recorded; a success moves
  /// the next renewal's due time, a refusal ends the belief.
  void renewal_answered(Time first_sent, bool ok) {
    const Time replied = run_.tb.now();
    {
      std::lock_guard<std::mutex> g(run_.hmu);
      if (run_.in_run(replied)) run_.h.renewals.push_back(RenewalRecord{c_.spec.name, first_sent, replied, ok});
    }
    {
      std::lock_guard<std::mutex> l(m_);
      if (ok) {
        // The next renewal is due renew_interval after this reply, as
        // in the model (models/client/redis_client.cpp start_renewal:
        // `last = clock_now()` after the answer); seen with a slow link.
        // On renew_clock, so that a clock fault moves the deadline.
        last_ = c_.clock.read(c_.spec.renew_clock);
      } else {
        active_ = false;
      }
    }
    // Refused: the key is gone or holds another value.
    if (!ok) c_.end_belief("renewal refused", true);
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
          renewal_answered(first_sent, r->integer == 1);
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

// ------------------------------------------------------ a helper's lock --

/// A lock driven through a helper process that speaks lines on stdin/stdout
/// (etcd's Go helper, kazoo's Python one): one helper per client
/// incarnation, started on the runner thread (the death signal follows the
/// thread that forked), "ready" once connected, and "session-ended …"
/// unprompted when the library ends the holder's belief.
class HelperLock : public RealLock {
 public:
  /// SIGKILL: the helper's keepalives or pings stop, so the service ends
  /// its session after the TTL (nothing is released), as for a killed program.
  void crash() override { helper()->child().kill_now(); }
  void restart() override { start_helper(); }
  void forget() override { wait_ready(); }

 protected:
  /// `ended`: the belief's end reason for an unprompted "session-ended
  /// <rest>" (a function, not a virtual: the helper's reader thread may
  /// call it while the derived lock is being destroyed).
  HelperLock(ClientState& c, std::string what, std::function<std::string(const std::string&)> ended)
      : c_(c), run_(c.run), what_(std::move(what)), ended_(std::move(ended)) {}
  /// The helper's command line.
  virtual std::vector<std::string> argv() const = 0;

  void start_helper() {
    ChildOptions opt;
    opt.pipes = true;
    opt.err = log_path();
    auto helper = std::make_shared<LineChild>(argv(), opt, [this](const std::string& line) {
      if (line.rfind("session-ended", 0) != 0) return false;
      c_.end_belief(ended_(line.size() > 14 ? line.substr(14) : std::string()), true);
      return true;
    });
    c_.helper = helper.get();
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
      throw std::runtime_error("fencesim-real: the " + what_ + " client helper of " + c_.spec.name +
                               " did not start:\n" + tail_of(log_path()));
    }
  }
  /// Sends `cmd` and waits for the helper's answer and the time it came;
  /// nothing when the run stops, the client is stopped (a pause or crash
  /// closed its gate) or its helper was replaced meanwhile (a crash).
  std::optional<std::pair<std::string, Time>> ask(const std::string& cmd) {
    const auto h = helper();
    if (!c_.gate.pass(run_.stop)) return std::nullopt;
    h->send(cmd);
    auto line = h->next(run_.stop);
    const Time at = run_.tb.now();
    if (!line) return std::nullopt;  // also: the helper was killed (a crash)
    if (!c_.gate.pass(run_.stop) || h != helper()) return std::nullopt;
    return std::make_pair(std::move(*line), at);
  }
  /// The grant of `l` at `at` by `server`: recorded, live, believed.
  Lease granted(Lease l, Time at, const std::string& server) {
    {
      std::lock_guard<std::mutex> g(run_.hmu);
      if (run_.in_run(at)) run_.h.grant(at, c_.spec.name, l.value, l.token, server);
      run_.live.emplace(l.value, Clock::now());
    }
    c_.begin_belief(l, at);
    value_ = l.value;
    return l;
  }
  /// Hosts of `servers` in the order client k lists them: server (k mod n)
  /// first, as the model's client does, each through the client's proxy.
  std::vector<int> ports_from_own(const std::vector<RedisProc>& servers) const {
    std::vector<int> ports;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      const RedisProc& m = servers[(c_.index + i) % servers.size()];
      ports.push_back(run_.dial(c_.spec.name, m.name, m.port));
    }
    return ports;
  }

  ClientState& c_;
  Run& run_;
  std::string value_;

 private:
  std::string what_;
  std::function<std::string(const std::string&)> ended_;  ///< before helper_: it outlives the reader thread
  std::mutex m_;
  std::shared_ptr<LineChild> helper_;
};

// ------------------------------------------------------------- etcd lock --

class EtcdLock final : public HelperLock {
 public:
  explicit EtcdLock(ClientState& c)
      : HelperLock(c, "etcd", [](const std::string&) {
          return std::string("session ended: the lease's keepalive found it expired");
        }) {
    start_helper();
    wait_ready();
  }

  static int ttl_seconds(const Run& r) {
    const double s = r.s.lock.ttl.count() * r.tb.scale / 1e9;
    return std::max(1, static_cast<int>(std::ceil(s - 1e-9)));
  }

  std::optional<Lease> acquire() override {
    for (;;) {
      const auto answer = ask("acquire");
      if (!answer) return std::nullopt;
      const auto& [line, at] = *answer;
      std::istringstream in(line);
      std::string word, key, lease;
      std::int64_t header = 0, create = 0;
      in >> word;
      if (word == "granted") {
        in >> key >> header >> create >> lease;
        std::optional<std::int64_t> token;
        switch (run_.s.lock.etcd().token) {
          case EtcdToken::kCreateRevision: token = create; break;
          case EtcdToken::kHeaderRevision: token = header; break;
          case EtcdToken::kNone: break;
        }
        return granted(Lease{key + "@" + std::to_string(create), token}, at, "etcd");
      }
      run_.say(c_.spec.name + ": " + line);
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
  /// etcd's Go helper: the endpoints, the TTL, the prefix, the command timeout.
  std::vector<std::string> argv() const override {
    std::string joined;
    for (const int port : ports_from_own(run_.etcd)) {
      joined += fmt::format("{}http://127.0.0.1:{}", joined.empty() ? "" : ",", port);
    }
    return {run_.helper,
            "-endpoints",
            joined,
            "-ttl",
            std::to_string(ttl_seconds(run_)),
            "-prefix",
            run_.s.lock.key,
            "-command-timeout",
            std::to_string(run_.tb.ms(c_.spec.command_timeout).count()) + "ms"};
  }
};

// -------------------------------------------------------- ZooKeeper lock --

/// kazoo's real Lock, driven through real/zk-lock/zk_lock.py: one helper
/// process per client incarnation (a new one after a crash: a new session,
/// a new Lock uuid, as the model's kazoo client).
class ZkLock final : public HelperLock {
 public:
  explicit ZkLock(ClientState& c)
      : HelperLock(c, "ZooKeeper", [](const std::string& state) { return "connection " + state; }) {
    start_helper();
    wait_ready();
  }

  std::optional<Lease> acquire() override {
    const auto answer = ask("acquire");
    if (!answer) return std::nullopt;
    const auto& [line, at] = *answer;
    std::istringstream in(line);
    std::string word, path;
    std::int64_t czxid = 0;
    in >> word >> path >> czxid;
    if (word != "granted") throw std::runtime_error("fencesim-real: " + c_.spec.name + "'s kazoo helper: " + line);
    zookeeper::Stat stat;
    stat.czxid = czxid;
    return granted(Lease{path, zookeeper::token_of(run_.s.lock.zookeeper().token, path, stat)}, at, "zookeeper");
  }

  void release() override {
    const auto helper = this->helper();
    c_.end_belief("release", false);
    if (!c_.gate.pass(run_.stop) || helper != this->helper()) return;
    {
      std::lock_guard<std::mutex> g(run_.hmu);
      run_.released.insert(value_);  // before the delete: the observer may see it first
    }
    helper->send("release");
    (void)helper->next(run_.stop);
  }

 private:
  /// kazoo's helper: the hosts, the session timeout asked (scaled), the
  /// lock path and the connection policy.
  std::vector<std::string> argv() const override {
    std::string hosts;
    for (const int port : ports_from_own(run_.zk)) {
      hosts += fmt::format("{}127.0.0.1:{}", hosts.empty() ? "" : ",", port);
    }
    const double timeout = client_ttl(run_.s.lock, c_.spec).count() * run_.tb.scale / 1e9;
    return {"/usr/bin/python3", run_.helper,
            "--hosts",          hosts,
            "--timeout",        fmt::format("{:.3f}", timeout),
            "--path",           zookeeper::lock_path(run_.s.lock.key),
            "--policy",         word(c_.spec.connection_policy.value_or(ConnectionPolicy::kStandard))};
  }
};

}  // namespace

int etcd_ttl_seconds(const Run& r) { return EtcdLock::ttl_seconds(r); }

std::unique_ptr<RealLock> make_redis_lock(ClientState& c) { return std::make_unique<RedisLock>(c); }
std::unique_ptr<RealLock> make_etcd_lock(ClientState& c) { return std::make_unique<EtcdLock>(c); }
std::unique_ptr<RealLock> make_zk_lock(ClientState& c) { return std::make_unique<ZkLock>(c); }

}  // namespace fencesim::real
