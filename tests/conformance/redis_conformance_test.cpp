// The Redis model (models/redis) against a real redis-server 7.
//
// Each test runs one operation script twice: against real redis-server
// processes that the test starts on 127.0.0.1 (a free port, a temporary
// directory, no RDB/AOF persistence, stopped by RAII even on failure), and
// against the model in a sim::Simulation (a RedisService with redis-0 as the
// primary and redis-1 as its replica, and a tester node that sends the
// model's redis::Command payloads). The answers are compared step by step.
//
// The atomic lock operations are the Lua scripts below, sent with EVAL:
// exactly what models/redis/protocol.hpp says kAcquire (with a token),
// kRenew and kRelease stand for. Plain SET NX PX, GET, DEL, INCR and SET are
// the commands themselves.
//
// Real time: keys whose expiry is the point have short TTLs (300 ms – 4 s)
// and are read at least 500 ms after them; keys that must stay present get
// 10 s. A check that only means something inside a window (a key read before
// its TTL, a replica's DBSIZE when the primary's expiry was held back before
// the key expired) is recorded only if the window held; otherwise it is
// reported as not compared. No assertion is tighter than its margin.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "models/history.hpp"
#include "models/redis/protocol.hpp"
#include "models/redis/redis.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"
#include "tests/conformance/conformance.hpp"

namespace fencesim::conformance {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// --- the scripts the model claims to model ---------------------------------

/// kAcquire with a token: SET NX PX, and INCR the counter only if the SET
/// succeeded; the token, or nil.
const char* const kAcquireScript =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "return redis.call('INCR', KEYS[2]) end "
    "return false";
/// kRenew: compare-and-PEXPIRE.
const char* const kRenewScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
    "return 0";
/// kRelease: compare-and-delete.
const char* const kReleaseScript =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('DEL', KEYS[1]) end "
    "return 0";

// --- documented deviations ----------------------------------------------------

const std::vector<Deviation>& redis_deviations() {
  static const std::vector<Deviation> kList = {};
  return kList;
}

const std::vector<Substitution>& redis_substitutions() {
  static const std::vector<Substitution> kList = {
      {"PTTL",
       "the model has no PTTL command: the test reads the entry's expiry from RedisServer::data() and the "
       "node's wall clock (-2 when absent or logically expired on that node, -1 without an expiry)"},
      {"DBSIZE",
       "no DBSIZE command: the size of RedisServer::data() (keys logically expired but not yet "
       "deleted are counted, as Redis counts them)"},
      {"SCAN",
       "no SCAN command: the keys of RedisServer::data() not logically expired on that node (Redis 7.0's "
       "SCAN filters out expired keys, on a replica too, without deleting them)"},
      {"WAIT 1 <timeout>", "no WAIT: the test waits until the replica's replication offset equals the primary's"},
      {"DEBUG SET-ACTIVE-EXPIRE 0 ... 1 on the primary (hold back its DELs)",
       "a `pause` of the primary's node for the same time (sim::Simulation::pause): in both the primary deletes no "
       "expired key meanwhile; the scripts send it nothing until the hold ends. (DEBUG SLEEP would map more "
       "literally onto a pause, but the test cannot tell when the sleep began, so a slow machine could let the "
       "primary delete the key first; SET-ACTIVE-EXPIRE is acknowledged.)"},
      {"REPLICAOF NO ONE", "the model's redis::ReplicaOf payload with primary = kNoNode (what Sentinel sends)"},
      {"SIGKILL and restart of redis-server (appendonly yes, appendfsync always)",
       "sim::Simulation::crash then restart of the primary's node 100 ms later, with lock.persistence aof_always"},
  };
  return kList;
}

// --- answers ----------------------------------------------------------------------

std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

/// PTTL as a comparable answer. `max_ms` is the TTL that was set and
/// `elapsed_ms` an upper bound of the time since it was set (measured by the
/// caller around both commands): any value in [max - elapsed - 2, max] is
/// "the TTL, less the time that passed".
std::string pttl_answer(std::int64_t v, std::int64_t max_ms, std::int64_t elapsed_ms) {
  if (v == -2) return "pttl -2 (no key)";
  if (v == -1) return "pttl -1 (no expiry)";
  if (v <= max_ms && v >= max_ms - elapsed_ms - 2) return fmt::format("pttl ~{}", max_ms);
  return fmt::format("pttl {} (expected <= {} and >= {})", v, max_ms, max_ms - elapsed_ms - 2);
}

std::string scan_answer(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  std::string out = "scan [";
  for (std::size_t i = 0; i < keys.size(); ++i) out += (i ? " " : "") + keys[i];
  return out + "]";
}

// --- the backend a script runs against ---------------------------------------------

/// Node 0 is the primary, node 1 the replica. Each command returns its
/// normalised answer ("int 1", "nil", "bulk \"v1\"", "status OK",
/// "error READONLY"); `detail` keeps the raw answer of the last command.
class RedisBackend {
 public:
  virtual ~RedisBackend() = default;
  virtual std::string set_nx_px(int node, const std::string& key, const std::string& value, int ttl_ms) = 0;
  virtual std::string acquire(int node, const std::string& key, const std::string& counter, const std::string& value,
                              int ttl_ms) = 0;
  virtual std::string renew(int node, const std::string& key, const std::string& value, int ttl_ms) = 0;
  virtual std::string release(int node, const std::string& key, const std::string& value) = 0;
  virtual std::string get(int node, const std::string& key) = 0;
  virtual std::string del(int node, const std::string& key) = 0;
  virtual std::string incr(int node, const std::string& key) = 0;
  /// SET key value, with PX ttl when ttl_ms > 0.
  virtual std::string set(int node, const std::string& key, const std::string& value, int ttl_ms) = 0;
  virtual std::int64_t pttl(int node, const std::string& key) = 0;
  virtual std::int64_t dbsize(int node) = 0;
  /// Every key SCAN returns (the whole cursor loop), sorted: "scan [a b]".
  virtual std::string scan(int node) = 0;
  /// WAIT 1: until the replica has everything the primary wrote.
  virtual std::string wait_replica() = 0;
  virtual std::string replicaof_no_one(int node) = 0;
  /// The primary deletes no expired key from now until release_primary(),
  /// which comes `d` later; the script sends the primary nothing meanwhile.
  /// Real: DEBUG SET-ACTIVE-EXPIRE 0 (acknowledged before this returns).
  /// Model: a pause of the primary's node for `d`.
  virtual std::string hold_primary_expiry(Millis d) = 0;
  /// Waits until `d` after the hold and ends it (real: DEBUG
  /// SET-ACTIVE-EXPIRE 1; model: the pause ends).
  virtual std::string release_primary() = 0;
  /// A process crash of the primary (real: SIGKILL) and its restart on the
  /// same port and data directory; returns once it answers again.
  virtual std::string crash_restart_primary() = 0;
  virtual void sleep(Millis d) = 0;
  /// Time since the script started (real: steady clock; model: true time).
  virtual Millis now() = 0;
  void sleep_until(Millis t) {
    const Millis n = now();
    if (t > n) sleep(t - n);
  }
  std::string detail;
};

// --- the real server -------------------------------------------------------------

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

std::string normalise(const redisReply* r, std::string& detail) {
  switch (r->type) {
    case REDIS_REPLY_STRING: detail = std::string(r->str, r->len); return "bulk \"" + detail + "\"";
    case REDIS_REPLY_STATUS: detail = std::string(r->str, r->len); return "status " + detail;
    case REDIS_REPLY_INTEGER: detail = std::to_string(r->integer); return "int " + detail;
    case REDIS_REPLY_NIL: detail = "(nil)"; return "nil";
    case REDIS_REPLY_ERROR: detail = std::string(r->str, r->len); return "error " + first_word(detail);
    case REDIS_REPLY_ARRAY:
      detail = "array of " + std::to_string(r->elements);
      return "array " + std::to_string(r->elements);
    default: detail = "type " + std::to_string(r->type); return detail;
  }
}

class RedisConn {
 public:
  explicit RedisConn(int port) {
    c_ = redisConnectWithTimeout("127.0.0.1", port, timeval{2, 0});
    if (c_ == nullptr || c_->err != 0) {
      const std::string why = c_ != nullptr ? c_->errstr : "out of memory";
      if (c_ != nullptr) redisFree(c_);
      c_ = nullptr;
      throw std::runtime_error(fmt::format("connect to 127.0.0.1:{}: {}", port, why));
    }
    redisSetTimeout(c_, timeval{15, 0});
  }
  ~RedisConn() {
    if (c_ != nullptr) redisFree(c_);
  }
  RedisConn(const RedisConn&) = delete;
  RedisConn& operator=(const RedisConn&) = delete;

  ReplyPtr raw(const std::vector<std::string>& args) {
    auto [argv, lens] = split(args);
    auto* r = static_cast<redisReply*>(redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (r == nullptr) throw std::runtime_error(fmt::format("redis {}: {}", args.front(), c_->errstr));
    return ReplyPtr(r);
  }
  std::string cmd(const std::vector<std::string>& args, std::string& detail) {
    auto r = raw(args);
    return normalise(r.get(), detail);
  }
  std::int64_t integer(const std::vector<std::string>& args) {
    auto r = raw(args);
    if (r->type != REDIS_REPLY_INTEGER) {
      std::string d;
      throw std::runtime_error("redis " + args.front() + ": not an integer reply: " + normalise(r.get(), d));
    }
    return r->integer;
  }
  /// Sends without waiting for the answer (a command that blocks the server).
  void send(const std::vector<std::string>& args) {
    auto [argv, lens] = split(args);
    if (redisAppendCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data()) != REDIS_OK) {
      throw std::runtime_error(std::string("redis append: ") + c_->errstr);
    }
    int done = 0;
    while (done == 0) {
      if (redisBufferWrite(c_, &done) != REDIS_OK) throw std::runtime_error(std::string("redis write: ") + c_->errstr);
    }
  }
  std::string receive(std::string& detail) {
    void* out = nullptr;
    if (redisGetReply(c_, &out) != REDIS_OK || out == nullptr) {
      throw std::runtime_error(std::string("redis read: ") + c_->errstr);
    }
    ReplyPtr r(static_cast<redisReply*>(out));
    return normalise(r.get(), detail);
  }

 private:
  static std::pair<std::vector<const char*>, std::vector<size_t>> split(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    return {argv, lens};
  }
  redisContext* c_ = nullptr;
};

/// One redis-server process: loopback, a free port, no persistence (or the
/// AOF with appendfsync always when `aof`), DEBUG allowed (for DEBUG
/// SET-ACTIVE-EXPIRE), diskless initial sync without delay.
class RealRedisServer {
 public:
  RealRedisServer(const fs::path& dir, const std::string& name, std::optional<int> replica_of, bool aof = false)
      : aof_(aof), replica_of_(replica_of) {
    dir_ = dir / name;
    fs::create_directories(dir_);
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = free_port();
      if (launch()) return;
    }
    throw std::runtime_error("redis-server " + name + " did not start; log:\n" + tail(dir_ / "redis.log") +
                             tail(dir_ / "stderr"));
  }
  int port() const { return port_; }
  const fs::path& dir() const { return dir_; }

  /// SIGKILL (a process crash: no shutdown, no final fsync or rewrite), then
  /// the same server again on the same port and directory.
  void crash_and_restart() {
    child_->signal(SIGKILL);
    child_->wait_for(Millis{5000});
    child_.reset();
    if (!launch()) {
      throw std::runtime_error("redis-server did not restart; log:\n" + tail(dir_ / "redis.log") +
                               tail(dir_ / "stderr"));
    }
  }

  /// Waits until a replica's link to its primary is up and in sync.
  void wait_link_up() {
    RedisConn c(port_);
    const auto end = Clock::now() + 20s;
    while (Clock::now() < end) {
      auto r = c.raw({"INFO", "replication"});
      const std::string info(r->str, r->len);
      if (info.find("master_link_status:up") != std::string::npos &&
          info.find("master_sync_in_progress:0") != std::string::npos) {
        return;
      }
      std::this_thread::sleep_for(20ms);
    }
    throw std::runtime_error("the replica's link to its primary did not come up; log:\n" + tail(dir_ / "redis.log"));
  }

 private:
  /// Starts redis-server on port_; true once it answers PING.
  bool launch() {
    const std::string bin = require_program("redis-server", "redis-server", {}, "FENCESIM_REDIS_SERVER");
    std::vector<std::string> argv = {bin,
                                     "--port",
                                     std::to_string(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     aof_ ? "yes" : "no",
                                     "--dir",
                                     dir_.string(),
                                     "--logfile",
                                     (dir_ / "redis.log").string(),
                                     "--daemonize",
                                     "no",
                                     "--enable-debug-command",
                                     "yes",
                                     "--repl-diskless-sync",
                                     "yes",
                                     "--repl-diskless-sync-delay",
                                     "0"};
    if (aof_) argv.insert(argv.end(), {"--appendfsync", "always"});
    if (replica_of_) {
      argv.insert(argv.end(), {"--replicaof", "127.0.0.1", std::to_string(*replica_of_)});
    }
    child_ = std::make_unique<Child>(argv, dir_ / "stdout", dir_ / "stderr");
    if (wait_ready()) return true;
    child_->stop();
    return false;
  }
  bool wait_ready() {
    const auto end = Clock::now() + 15s;
    while (Clock::now() < end) {
      if (!child_->running()) return false;  // e.g. the port was taken meanwhile
      try {
        RedisConn c(port_);
        std::string d;
        if (c.cmd({"PING"}, d) == "status PONG") return true;
      } catch (const std::runtime_error&) {
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  bool aof_ = false;
  std::optional<int> replica_of_;
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<Child> child_;
};

std::string redis_version() {
  const std::string bin = require_program("redis-server", "redis-server", {}, "FENCESIM_REDIS_SERVER");
  const CommandResult r = run_command({bin, "--version"}, Millis{20000});
  std::string v = r.out;
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

class RealRedisBackend final : public RedisBackend {
 public:
  RealRedisBackend(RealRedisServer& primary, const RealRedisServer* replica) : start_(Clock::now()), primary_(primary) {
    conns_.push_back(std::make_unique<RedisConn>(primary.port()));
    if (replica != nullptr) conns_.push_back(std::make_unique<RedisConn>(replica->port()));
  }
  std::string set_nx_px(int n, const std::string& k, const std::string& v, int ttl) override {
    return c(n).cmd({"SET", k, v, "NX", "PX", std::to_string(ttl)}, detail);
  }
  std::string acquire(int n, const std::string& k, const std::string& ctr, const std::string& v, int ttl) override {
    return c(n).cmd({"EVAL", kAcquireScript, "2", k, ctr, v, std::to_string(ttl)}, detail);
  }
  std::string renew(int n, const std::string& k, const std::string& v, int ttl) override {
    return c(n).cmd({"EVAL", kRenewScript, "1", k, v, std::to_string(ttl)}, detail);
  }
  std::string release(int n, const std::string& k, const std::string& v) override {
    return c(n).cmd({"EVAL", kReleaseScript, "1", k, v}, detail);
  }
  std::string get(int n, const std::string& k) override { return c(n).cmd({"GET", k}, detail); }
  std::string del(int n, const std::string& k) override { return c(n).cmd({"DEL", k}, detail); }
  std::string incr(int n, const std::string& k) override { return c(n).cmd({"INCR", k}, detail); }
  std::string set(int n, const std::string& k, const std::string& v, int ttl) override {
    if (ttl > 0) return c(n).cmd({"SET", k, v, "PX", std::to_string(ttl)}, detail);
    return c(n).cmd({"SET", k, v}, detail);
  }
  std::int64_t pttl(int n, const std::string& k) override { return c(n).integer({"PTTL", k}); }
  std::int64_t dbsize(int n) override { return c(n).integer({"DBSIZE"}); }
  std::string scan(int n) override {
    std::vector<std::string> keys;
    std::string cursor = "0";
    do {
      auto r = c(n).raw({"SCAN", cursor, "COUNT", "1000"});
      if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) throw std::runtime_error("SCAN: unexpected reply");
      cursor = std::string(r->element[0]->str, r->element[0]->len);
      for (std::size_t i = 0; i < r->element[1]->elements; ++i) {
        keys.emplace_back(r->element[1]->element[i]->str, r->element[1]->element[i]->len);
      }
    } while (cursor != "0");
    return scan_answer(std::move(keys));
  }
  std::string wait_replica() override { return c(0).cmd({"WAIT", "1", "5000"}, detail); }
  std::string replicaof_no_one(int n) override { return c(n).cmd({"REPLICAOF", "NO", "ONE"}, detail); }
  std::string hold_primary_expiry(Millis d) override {
    hold_until_ = now() + d;
    return c(0).cmd({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, detail);
  }
  std::string release_primary() override {
    sleep_until(hold_until_);
    return c(0).cmd({"DEBUG", "SET-ACTIVE-EXPIRE", "1"}, detail);
  }
  std::string crash_restart_primary() override {
    conns_.at(0).reset();
    primary_.crash_and_restart();
    conns_.at(0) = std::make_unique<RedisConn>(primary_.port());
    detail = "SIGKILL, restarted";
    return "status OK";
  }
  void sleep(Millis d) override { std::this_thread::sleep_for(d); }
  Millis now() override { return std::chrono::duration_cast<Millis>(Clock::now() - start_); }

 private:
  RedisConn& c(int n) { return *conns_.at(static_cast<std::size_t>(n)); }
  Clock::time_point start_;
  RealRedisServer& primary_;
  std::vector<std::unique_ptr<RedisConn>> conns_;
  Millis hold_until_{0};
};

// --- the model -----------------------------------------------------------------------

/// The tester node ignores everything that is not a reply.
class Ignore final : public sim::NodeBehaviour {};

class ModelRedisBackend final : public RedisBackend {
 public:
  explicit ModelRedisBackend(int replicas, RedisPersistence persistence = RedisPersistence::kNone) : sim_(1, 1 << 20) {
    sc_.name = "conformance-redis";
    sc_.lock.set_service(ServiceKind::kRedis);
    sc_.lock.ttl = sc_.lock.requested_ttl = 10s;
    sc_.lock.redis().replicas = replicas;
    sc_.lock.redis().sentinels = 0;
    sc_.lock.redis().expiry_clock = sim::ClockKind::kWall;  // as Redis: absolute wall-clock deadlines
    sc_.lock.redis().persistence = persistence;
    for (int i = 0; i <= replicas; ++i) servers_.push_back(sim_.add_node("redis-" + std::to_string(i)).id());
    tester_ = sim_.add_node("tester").id();
    sim_.node(tester_).set_behaviour(&ignore_);
    svc_ = std::make_unique<redis::RedisService>(sim_, history_, sc_, servers_, std::vector<sim::NodeId>{},
                                                 std::vector<sim::NodeId>{tester_});
    svc_->start();
  }

  /// Runs `script` in a process on the tester node until it returns.
  void run(const std::function<void(RedisBackend&)>& script) {
    bool done = false;
    sim_.node(tester_).spawn("script", [&](sim::Process& p) {
      p_ = &p;
      script(*this);
      done = true;
    });
    while (!done && sim_.now() < 600s) sim_.run_until(sim_.now() + 1s);
    if (!done) ADD_FAILURE() << "the model script did not finish within 600 s of simulated time";
  }

  std::string set_nx_px(int n, const std::string& k, const std::string& v, int ttl) override {
    auto c = command(redis::Op::kAcquire, k, v, ttl);
    return send(n, c);
  }
  std::string acquire(int n, const std::string& k, const std::string& ctr, const std::string& v, int ttl) override {
    auto c = command(redis::Op::kAcquire, k, v, ttl);
    c->with_token = true;
    c->counter_key = ctr;
    return send(n, c);
  }
  std::string renew(int n, const std::string& k, const std::string& v, int ttl) override {
    return send(n, command(redis::Op::kRenew, k, v, ttl));
  }
  std::string release(int n, const std::string& k, const std::string& v) override {
    return send(n, command(redis::Op::kRelease, k, v, 0));
  }
  std::string get(int n, const std::string& k) override { return send(n, command(redis::Op::kGet, k, "", 0)); }
  std::string del(int n, const std::string& k) override { return send(n, command(redis::Op::kDel, k, "", 0)); }
  std::string incr(int n, const std::string& k) override { return send(n, command(redis::Op::kIncr, k, "", 0)); }
  std::string set(int n, const std::string& k, const std::string& v, int ttl) override {
    return send(n, command(redis::Op::kSet, k, v, ttl));
  }
  std::int64_t pttl(int n, const std::string& k) override {
    redis::RedisServer& s = server(n);
    const auto& data = s.data();
    auto it = data.find(k);
    if (it == data.end() || s.expired(it->second)) return -2;
    if (!it->second.has_expiry) return -1;
    return (it->second.expire_at - s.node().clock(sim::ClockKind::kWall)) / 1ms;
  }
  std::int64_t dbsize(int n) override { return static_cast<std::int64_t>(server(n).data().size()); }
  std::string scan(int n) override {
    std::vector<std::string> keys;
    for (const auto& [k, e] : server(n).data()) {
      if (!server(n).expired(e)) keys.push_back(k);
    }
    return scan_answer(std::move(keys));
  }
  std::string wait_replica() override {
    const Millis end = now() + 5000ms;
    while (server(1).offset() != server(0).offset() && now() < end) p_->sleep(1ms);
    detail = "replica offset " + std::to_string(server(1).offset());
    return server(1).offset() == server(0).offset() ? "int 1" : "int 0";
  }
  std::string replicaof_no_one(int n) override {
    auto r = std::make_shared<redis::ReplicaOf>();
    r->primary = sim::kNoNode;
    auto m = p_->call(servers_.at(static_cast<std::size_t>(n)), r, 5s);
    const redis::Reply* rep = m ? m->as<redis::Reply>() : nullptr;
    if (rep == nullptr) return "timeout";
    detail = rep->describe();
    return "status " + rep->text;
  }
  std::string hold_primary_expiry(Millis d) override {
    sim_.pause(servers_[0], d);
    hold_end_ = sim_.now() + d;
    detail = "pause of redis-0";
    return "status OK";
  }
  std::string release_primary() override {
    p_->sleep_until(sim::ClockKind::kMonotonic, sim_.node(tester_).monotonic() + (hold_end_ - sim_.now()));
    detail = "pause of redis-0 ended";
    return "status OK";
  }
  std::string crash_restart_primary() override {
    // Crash and restart come from outside the tester's process, as faults do.
    sim_.at(
        sim_.now(), [this] { sim_.crash(servers_[0]); }, sim::EventClass::kFault);
    sim_.at(
        sim_.now() + 100ms, [this] { sim_.restart(servers_[0]); }, sim::EventClass::kFault);
    p_->sleep(200ms);
    detail = "crash, restarted";
    return "status OK";
  }
  void sleep(Millis d) override { p_->sleep(d); }
  Millis now() override { return std::chrono::duration_cast<Millis>(sim_.now()); }

 private:
  redis::RedisServer& server(int n) { return svc_->server(servers_.at(static_cast<std::size_t>(n))); }
  std::shared_ptr<redis::Command> command(redis::Op op, const std::string& k, const std::string& v, int ttl_ms) {
    auto c = std::make_shared<redis::Command>();
    c->op = op;
    c->key = k;
    c->value = v;
    c->ttl = Millis{ttl_ms};
    return c;
  }
  std::string send(int n, const std::shared_ptr<redis::Command>& c) {
    const redis::Op op = c->op;
    auto m = p_->call(servers_.at(static_cast<std::size_t>(n)), c, 5s);
    const redis::Reply* r = m ? m->as<redis::Reply>() : nullptr;
    if (r == nullptr) {
      detail = "no reply within 5 s";
      return "timeout";
    }
    detail = r->describe();
    if (!r->error.empty()) {
      detail = r->error;
      return "error " + first_word(r->error);
    }
    if (r->nil) return "nil";
    if (r->integer) return "int " + std::to_string(*r->integer);
    // A text answer is a bulk string for GET and a status reply otherwise.
    return op == redis::Op::kGet ? "bulk \"" + r->text + "\"" : "status " + r->text;
  }

  sim::Simulation sim_;
  Ignore ignore_;
  History history_;
  Scenario sc_;
  std::vector<sim::NodeId> servers_;
  sim::NodeId tester_ = sim::kNoNode;
  std::unique_ptr<redis::RedisService> svc_;
  sim::Process* p_ = nullptr;
  sim::Time hold_end_{0};
};

// --- running a script on both ---------------------------------------------------------

using Script = std::function<void(RedisBackend&, Transcript&)>;

void run_both(int replicas, const Script& script, RedisPersistence persistence = RedisPersistence::kNone) {
  const std::string version = redis_version();  // fails the test when redis-server is missing
  std::cout << "[conformance] real server: " << version << "\n";
  print_deviations("redis", redis_deviations(), redis_substitutions());

  Transcript real("redis-server");
  {
    TempDir dir("redis");
    RealRedisServer primary(dir.path(), "primary", std::nullopt, persistence != RedisPersistence::kNone);
    std::unique_ptr<RealRedisServer> replica;
    if (replicas > 0) {
      replica = std::make_unique<RealRedisServer>(dir.path(), "replica", primary.port());
      replica->wait_link_up();
    }
    RealRedisBackend b(primary, replica.get());
    script(b, real);
  }  // the servers stop here (and on an exception, by unwinding)

  Transcript model("model");
  ModelRedisBackend m(replicas, persistence);
  m.run([&](RedisBackend& b) { script(b, model); });

  compare_transcripts(real, model, redis_deviations());
}

std::string took(Millis since, Millis now, Millis window) {
  return fmt::format("{} ms passed, more than the {} ms window", (now - since).count(), window.count());
}

const std::string kLock = "conf:lock";
const std::string kCounter = "conf:lock:token";

// --- the scripts ------------------------------------------------------------------------

/// Records `answer` if the script is still inside `window` after `since`.
void add_within(RedisBackend& b, Transcript& t, const std::string& name, Millis since, Millis window,
                const std::string& answer, const std::string& detail = "", const std::string& deviation = "") {
  t.add_timed(name, b.now() - since < window, took(since, b.now(), window), answer, detail, deviation);
}

// Keys that must stay present while a script looks at them get 10 s TTLs;
// keys whose expiry is the point get 300 ms – 4 s and are read at least
// 500 ms after their TTL.
constexpr int kLong = 10000;
constexpr Millis kLongWindow{kLong};

void script_set_nx_px(RedisBackend& b, Transcript& t) {
  Millis t0 = b.now();
  t.add("SET lock v1 NX PX 10000 on an absent key", b.set_nx_px(0, kLock, "v1", kLong), b.detail);
  std::string a = b.set_nx_px(0, kLock, "v2", kLong);
  add_within(b, t, "SET lock v2 NX PX 10000 while v1 holds it", t0, kLongWindow, a, b.detail);
  a = b.get(0, kLock);
  add_within(b, t, "GET lock", t0, kLongWindow, a, b.detail);
  const std::int64_t p = b.pttl(0, kLock);
  add_within(b, t, "PTTL lock", t0, kLongWindow, pttl_answer(p, kLong, (b.now() - t0).count()), std::to_string(p));
  a = b.del(0, kLock);
  add_within(b, t, "DEL lock", t0, kLongWindow, a, b.detail);
  t.add("DEL lock again (absent)", b.del(0, kLock), b.detail);

  // Expiry: a 300 ms lease, read 500 ms after its TTL.
  t0 = b.now();
  t.add("SET lock v3 NX PX 300", b.set_nx_px(0, kLock, "v3", 300), b.detail);
  b.sleep_until(t0 + 800ms);
  t.add("GET lock 500 ms after its TTL", b.get(0, kLock), b.detail);
  t.add("PTTL lock after its TTL", pttl_answer(b.pttl(0, kLock), 300, 0));
  t0 = b.now();
  t.add("SET lock v4 NX PX 10000 after v3 expired", b.set_nx_px(0, kLock, "v4", kLong), b.detail);
  a = b.get(0, kLock);
  add_within(b, t, "GET lock holds v4", t0, kLongWindow, a, b.detail);
  a = "dbsize " + std::to_string(b.dbsize(0));
  add_within(b, t, "DBSIZE", t0, kLongWindow, a);
}

void script_compare_and_x(RedisBackend& b, Transcript& t) {
  const Millis t0 = b.now();
  t.add("SET lock v1 NX PX 10000", b.set_nx_px(0, kLock, "v1", kLong), b.detail);
  std::string a = b.renew(0, kLock, "v2", 2 * kLong);
  add_within(b, t, "compare-and-PEXPIRE lock v2 20000 (foreign value)", t0, kLongWindow, a, b.detail);
  std::int64_t p = b.pttl(0, kLock);
  add_within(b, t, "PTTL lock after the foreign renewal (unchanged)", t0, kLongWindow,
             pttl_answer(p, kLong, (b.now() - t0).count()), std::to_string(p));
  const Millis t1 = b.now();
  a = b.renew(0, kLock, "v1", 2 * kLong);
  add_within(b, t, "compare-and-PEXPIRE lock v1 20000 (matching value)", t0, kLongWindow, a, b.detail);
  p = b.pttl(0, kLock);
  add_within(b, t, "PTTL lock after the matching renewal", t0, kLongWindow,
             pttl_answer(p, 2 * kLong, (b.now() - t1).count()), std::to_string(p));
  t.add("compare-and-delete lock v2 (foreign value)", b.release(0, kLock, "v2"), b.detail);
  a = b.get(0, kLock);
  add_within(b, t, "GET lock after the foreign release", t0, kLongWindow, a, b.detail);
  a = b.release(0, kLock, "v1");
  add_within(b, t, "compare-and-delete lock v1 (matching value)", t0, kLongWindow, a, b.detail);
  t.add("GET lock after the release", b.get(0, kLock), b.detail);
  t.add("compare-and-delete lock v1 again (absent)", b.release(0, kLock, "v1"), b.detail);
  t.add("compare-and-PEXPIRE lock v1 (absent)", b.renew(0, kLock, "v1", kLong), b.detail);
  t.add("PTTL lock (absent: PEXPIRE created nothing)", pttl_answer(b.pttl(0, kLock), kLong, 0));

  // After the TTL, the lease can be neither renewed nor released.
  const Millis t2 = b.now();
  t.add("SET lock v5 NX PX 300", b.set_nx_px(0, kLock, "v5", 300), b.detail);
  b.sleep_until(t2 + 800ms);
  t.add("compare-and-PEXPIRE lock v5 500 ms after its TTL", b.renew(0, kLock, "v5", kLong), b.detail);
  t.add("compare-and-delete lock v5 after its TTL", b.release(0, kLock, "v5"), b.detail);
  t.add("GET lock after v5's TTL", b.get(0, kLock), b.detail);
}

void script_token(RedisBackend& b, Transcript& t) {
  Millis t0 = b.now();
  t.add("acquire script lock v1 PX 10000 (absent): token", b.acquire(0, kLock, kCounter, "v1", kLong), b.detail);
  std::string a = b.acquire(0, kLock, kCounter, "v2", kLong);
  add_within(b, t, "acquire script lock v2 while v1 holds it: nil", t0, kLongWindow, a, b.detail);
  a = b.get(0, kCounter);
  add_within(b, t, "GET counter: no INCR after the refused SET NX", t0, kLongWindow, a, b.detail);
  a = b.release(0, kLock, "v1");
  add_within(b, t, "compare-and-delete lock v1", t0, kLongWindow, a, b.detail);
  t0 = b.now();
  t.add("acquire script lock v2 PX 10000: next token", b.acquire(0, kLock, kCounter, "v2", kLong), b.detail);
  a = b.get(0, kLock);
  add_within(b, t, "GET lock holds v2", t0, kLongWindow, a, b.detail);
  a = b.release(0, kLock, "v2");
  add_within(b, t, "compare-and-delete lock v2", t0, kLongWindow, a, b.detail);
  t0 = b.now();
  t.add("acquire script lock v3 PX 300", b.acquire(0, kLock, kCounter, "v3", 300), b.detail);
  b.sleep_until(t0 + 800ms);
  t.add("acquire script lock v4 500 ms after v3's TTL", b.acquire(0, kLock, kCounter, "v4", kLong), b.detail);
  t.add("GET counter", b.get(0, kCounter), b.detail);
  t.add("PTTL counter (INCR sets no TTL)", pttl_answer(b.pttl(0, kCounter), 0, 0));
}

void script_incr_ttl(RedisBackend& b, Transcript& t) {
  const std::string ctr = "conf:ctr", n = "conf:n", e = "conf:e";
  t.add("INCR ctr (missing key)", b.incr(0, ctr), b.detail);
  t.add("PTTL ctr", pttl_answer(b.pttl(0, ctr), 0, 0));
  t.add("INCR ctr", b.incr(0, ctr), b.detail);

  const Millis t0 = b.now();
  t.add("SET n 5 PX 10000", b.set(0, n, "5", kLong), b.detail);
  std::int64_t p = b.pttl(0, n);
  add_within(b, t, "PTTL n before INCR", t0, kLongWindow, pttl_answer(p, kLong, (b.now() - t0).count()),
             std::to_string(p));
  std::string a = b.incr(0, n);
  add_within(b, t, "INCR n (a number SET with a TTL)", t0, kLongWindow, a, b.detail);
  p = b.pttl(0, n);
  add_within(b, t, "PTTL n after INCR (INCR keeps the TTL)", t0, kLongWindow,
             pttl_answer(p, kLong, (b.now() - t0).count()), std::to_string(p));
  a = b.get(0, n);
  add_within(b, t, "GET n after INCR", t0, kLongWindow, a, b.detail);

  const Millis t1 = b.now();
  t.add("SET lock v1 NX PX 10000", b.set_nx_px(0, kLock, "v1", kLong), b.detail);
  a = b.incr(0, kLock);
  add_within(b, t, "INCR lock (value \"v1\")", t1, kLongWindow, a, b.detail);

  const Millis t2 = b.now();
  t.add("SET e x PX 300", b.set(0, e, "x", 300), b.detail);
  b.sleep_until(t2 + 800ms);
  t.add("INCR e 500 ms after its TTL (starts again)", b.incr(0, e), b.detail);
  t.add("PTTL e after INCR (no TTL)", pttl_answer(b.pttl(0, e), 0, 0));

  t.add("SET s 7", b.set(0, "conf:s", "7", 0), b.detail);
  t.add("SET s 8 PX 10000", b.set(0, "conf:s", "8", kLong), b.detail);
  t.add("SET s 9 (a plain SET drops the TTL)", b.set(0, "conf:s", "9", 0), b.detail);
  t.add("PTTL s", pttl_answer(b.pttl(0, "conf:s"), 0, 0));

  t.add("compare-and-PEXPIRE ctr \"2\" 10000 (the counter's value)", b.renew(0, ctr, "2", kLong), b.detail);
}

void script_replica_hides(RedisBackend& b, Transcript& t) {
  const Millis ttl{1000};
  const Millis t0 = b.now();
  t.add("primary: acquire script lock v1 PX 1000", b.acquire(0, kLock, kCounter, "v1", 1000), b.detail);
  t.add("WAIT 1 (the replica has it)", b.wait_replica(), b.detail);
  // Hold back the primary's DEL (the script sends the primary nothing until
  // the release). This shows the replica's side only if the hold began
  // before the key expired on the primary.
  std::string a = b.hold_primary_expiry(3500ms);
  const bool held_in_time = b.now() - t0 < ttl;
  const std::string late = took(t0, b.now(), ttl) + " before the primary's expiry was held back";
  t.add("primary: hold back its expiry", a, b.detail);
  a = b.get(1, kLock);
  add_within(b, t, "replica: GET lock", t0, ttl, a, b.detail);
  const std::int64_t p = b.pttl(1, kLock);
  add_within(b, t, "replica: PTTL lock (the primary's deadline)", t0, ttl, pttl_answer(p, 1000, (b.now() - t0).count()),
             std::to_string(p));
  a = "dbsize " + std::to_string(b.dbsize(1));
  add_within(b, t, "replica: DBSIZE", t0, ttl, a);
  a = b.scan(1);
  add_within(b, t, "replica: SCAN", t0, ttl, a);
  t.add("replica: SET lock v2 NX PX 1000", b.set_nx_px(1, kLock, "v2", 1000), b.detail);
  t.add("replica: acquire script lock v2", b.acquire(1, kLock, kCounter, "v2", 1000), b.detail);

  b.sleep_until(t0 + ttl + 500ms);
  t.add("replica: GET lock after its TTL (hidden)", b.get(1, kLock), b.detail);
  t.add("replica: PTTL lock after its TTL", pttl_answer(b.pttl(1, kLock), 1000, 0));
  t.add_timed("replica: DBSIZE after the TTL, no DEL from the primary yet (key kept)", held_in_time, late,
              "dbsize " + std::to_string(b.dbsize(1)));
  t.add("replica: SCAN after the TTL (key hidden)", b.scan(1));
  t.add("primary: release the hold", b.release_primary(), b.detail);
  // The primary's active expiry deletes the key and propagates DEL.
  const Millis released = b.now();
  std::int64_t size = b.dbsize(1);
  while (size > 1 && b.now() - released < 5000ms) {
    b.sleep(20ms);
    size = b.dbsize(1);
  }
  t.add("replica: DBSIZE once the primary's DEL arrived (within 5 s)", "dbsize " + std::to_string(size));
  t.add("replica: GET lock", b.get(1, kLock), b.detail);
  t.add("primary: GET lock", b.get(0, kLock), b.detail);
  t.add("primary: DBSIZE", "dbsize " + std::to_string(b.dbsize(0)));
}

void script_promotion(RedisBackend& b, Transcript& t) {
  const Millis lock_ttl{4000}, short_ttl{1500};
  const Millis t0 = b.now();
  t.add("primary: acquire script lock v1 PX 4000", b.acquire(0, kLock, kCounter, "v1", 4000), b.detail);
  const Millis ts = b.now();
  t.add("primary: SET short x PX 1500", b.set(0, "conf:short", "x", 1500), b.detail);
  t.add("WAIT 1 (the replica has both)", b.wait_replica(), b.detail);
  std::string a = b.hold_primary_expiry(6000ms);  // the primary will not delete `short`
  const bool held_in_time = b.now() - ts < short_ttl;
  const std::string late = took(ts, b.now(), short_ttl) + " before the primary's expiry was held back";
  t.add("primary: hold back its expiry", a, b.detail);
  b.sleep_until(ts + short_ttl + 500ms);
  t.add("replica: GET short after its TTL", b.get(1, "conf:short"), b.detail);
  a = "dbsize " + std::to_string(b.dbsize(1));
  t.add_timed("replica: DBSIZE (short kept: only the primary deletes)", held_in_time && b.now() - t0 < lock_ttl,
              late + " (or the lock expired too)", a);
  t.add("replica: REPLICAOF NO ONE", b.replicaof_no_one(1), b.detail);
  a = b.get(1, kLock);
  add_within(b, t, "promoted: GET lock", t0, lock_ttl, a, b.detail);
  a = b.acquire(1, kLock, kCounter, "v2", kLong);
  add_within(b, t, "promoted: acquire script lock v2 while v1 holds it", t0, lock_ttl, a, b.detail);
  a = b.get(1, kCounter);
  add_within(b, t, "promoted: GET counter (the replicated token)", t0, lock_ttl, a, b.detail);
  // The promoted node expires on its own now: `short` goes.
  const Millis promoted = b.now();
  std::int64_t size = b.dbsize(1);
  while (size > 2 && b.now() - promoted < 1000ms) {
    b.sleep(20ms);
    size = b.dbsize(1);
  }
  add_within(b, t, "promoted: DBSIZE after its own expiry of short (within 1 s)", t0, lock_ttl,
             "dbsize " + std::to_string(size));
  b.sleep_until(t0 + lock_ttl + 500ms);
  t.add("promoted: acquire script lock v3 after v1's TTL: next token", b.acquire(1, kLock, kCounter, "v3", kLong),
        b.detail);
  t.add("promoted: GET lock", b.get(1, kLock), b.detail);
  t.add("old primary: release the hold", b.release_primary(), b.detail);
  t.add("old primary (still a primary): acquire script lock v9: the same token again",
        b.acquire(0, kLock, kCounter, "v9", kLong), b.detail);
}

// --- the tests -------------------------------------------------------------------------------

/// appendonly yes, appendfsync always: a process crash (SIGKILL) right after
/// the acquire script's answers keeps the token counter and the lock key with
/// its expiry (lock.persistence aof_always in the model).
void script_aof_restart(RedisBackend& b, Transcript& t) {
  const Millis t0 = b.now();
  t.add("acquire script lock v1", b.acquire(0, kLock, kCounter, "v1", kLong), b.detail);
  t.add("release v1", b.release(0, kLock, "v1"), b.detail);
  t.add("acquire script lock v2", b.acquire(0, kLock, kCounter, "v2", kLong), b.detail);
  t.add("SIGKILL the primary and restart it", b.crash_restart_primary(), b.detail);
  std::string a = b.get(0, kCounter);
  add_within(b, t, "after the restart: GET counter", t0, kLongWindow, a, b.detail);
  a = b.get(0, kLock);
  add_within(b, t, "after the restart: GET lock", t0, kLongWindow, a, b.detail);
  const std::int64_t p = b.pttl(0, kLock);
  add_within(b, t, "after the restart: PTTL lock (the stored deadline)", t0, kLongWindow,
             pttl_answer(p, kLong, (b.now() - t0).count()), std::to_string(p));
  a = b.acquire(0, kLock, kCounter, "v3", kLong);
  add_within(b, t, "after the restart: acquire script lock v3 while v2 holds it", t0, kLongWindow, a, b.detail);
  t.add("release v2", b.release(0, kLock, "v2"), b.detail);
  t.add("acquire script lock v4: the next token", b.acquire(0, kLock, kCounter, "v4", kLong), b.detail);
}

TEST(RedisConformance, DeviationList) {
  print_deviations("redis", redis_deviations(), redis_substitutions());
  std::cout << "[conformance] real server: " << redis_version() << "\n";
}

TEST(RedisConformance, SetNxPxOnAbsentAndPresentKeysAndExpiry) { run_both(0, script_set_nx_px); }

TEST(RedisConformance, CompareAndDeleteAndCompareAndPexpireWithMatchingAndForeignValues) {
  run_both(0, script_compare_and_x);
}

TEST(RedisConformance, AcquireScriptIncrementsTheTokenOnlyWhenSetNxSucceeds) { run_both(0, script_token); }

TEST(RedisConformance, IncrOnMissingKeysAndItsEffectOnTtl) { run_both(0, script_incr_ttl); }

TEST(RedisConformance, AReplicaHidesAnExpiredKeyButKeepsItUntilThePrimarysDel) { run_both(1, script_replica_hides); }

TEST(RedisConformance, APromotedReplicaAnswersWithWhatItHadAndExpiresOnItsOwn) { run_both(1, script_promotion); }

TEST(RedisConformance, AProcessCrashUnderAppendfsyncAlwaysKeepsTheCounterAndTheLock) {
  run_both(0, script_aof_restart, RedisPersistence::kAofAlways);
}

}  // namespace
}  // namespace fencesim::conformance
