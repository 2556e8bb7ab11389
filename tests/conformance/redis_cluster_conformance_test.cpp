// Redis Cluster mode (models/redis/cluster.hpp) against a real redis-server 7
// in cluster mode.
//
// The test starts three redis-server processes on 127.0.0.1 (free ports, a
// temporary directory each, cluster-enabled, no persistence; stopped by RAII
// even on failure), gives each the slots the model gives its shard (CLUSTER
// ADDSLOTSRANGE), joins them (CLUSTER MEET) and waits — up to 90 s — until
// every node reports cluster_state:ok and knows the other two. Then it
// compares with the model (three shards without replicas in a
// sim::Simulation, asked by a tester node):
//  * CLUSTER KEYSLOT of a set of keys (hash tags, empty tags, nested braces)
//    against redis::key_hash_slot;
//  * the error the seed article's two-key acquire script gets when its keys
//    are in different slots: the exact CROSSSLOT text, from every node;
//  * MOVED for a key asked of a node that does not own its slot: the slot and
//    the owner (by shard) it names;
//  * the same script with hash-tagged keys on the owning node: token 1.
// Nothing here depends on timing once the cluster is up.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "models/history.hpp"
#include "models/redis/cluster.hpp"
#include "models/redis/protocol.hpp"
#include "models/redis/redis.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"
#include "tests/conformance/conformance.hpp"

namespace fencesim::conformance {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const char* const kAcquireScript =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "return redis.call('INCR', KEYS[2]) end "
    "return false";

constexpr int kShards = 3;

/// One answer, normalised: "int N", "nil", "status S", "bulk S", "error TEXT".
struct Answer {
  std::string text;
};

class Conn {
 public:
  explicit Conn(int port) {
    c_ = redisConnectWithTimeout("127.0.0.1", port, timeval{2, 0});
    if (c_ == nullptr || c_->err != 0) {
      const std::string why = c_ != nullptr ? c_->errstr : "out of memory";
      if (c_ != nullptr) redisFree(c_);
      c_ = nullptr;
      throw std::runtime_error(fmt::format("connect to 127.0.0.1:{}: {}", port, why));
    }
    redisSetTimeout(c_, timeval{10, 0});
  }
  ~Conn() {
    if (c_ != nullptr) redisFree(c_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  std::string cmd(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (r == nullptr) throw std::runtime_error(fmt::format("redis {}: {}", args.front(), c_->errstr));
    std::string out;
    switch (r->type) {
      case REDIS_REPLY_INTEGER: out = "int " + std::to_string(r->integer); break;
      case REDIS_REPLY_NIL: out = "nil"; break;
      case REDIS_REPLY_STATUS: out = "status " + std::string(r->str, r->len); break;
      case REDIS_REPLY_STRING: out = "bulk " + std::string(r->str, r->len); break;
      case REDIS_REPLY_ERROR: out = "error " + std::string(r->str, r->len); break;
      default: out = "type " + std::to_string(r->type); break;
    }
    freeReplyObject(r);
    return out;
  }

 private:
  redisContext* c_ = nullptr;
};

/// One cluster-enabled redis-server.
class ClusterServer {
 public:
  ClusterServer(const fs::path& dir, const std::string& name) : dir_(dir / name) {
    fs::create_directories(dir_);
    const std::string bin = require_program("redis-server", "redis-server", {}, "FENCESIM_REDIS_SERVER");
    for (int attempt = 0; attempt < 3; ++attempt) {
      // The cluster bus listens on port + 10000, which must be a port too.
      do {
        port_ = free_port();
      } while (port_ > 65535 - 10000);
      fs::remove(dir_ / "nodes.conf");
      child_ = std::make_unique<Child>(std::vector<std::string>{bin,
                                                                "--port",
                                                                std::to_string(port_),
                                                                "--bind",
                                                                "127.0.0.1",
                                                                "--save",
                                                                "",
                                                                "--appendonly",
                                                                "no",
                                                                "--dir",
                                                                dir_.string(),
                                                                "--logfile",
                                                                (dir_ / "redis.log").string(),
                                                                "--daemonize",
                                                                "no",
                                                                "--cluster-enabled",
                                                                "yes",
                                                                "--cluster-config-file",
                                                                (dir_ / "nodes.conf").string(),
                                                                "--cluster-node-timeout",
                                                                "5000"},
                                       dir_ / "stdout", dir_ / "stderr");
      if (wait_ready()) return;
      child_->stop();
    }
    throw std::runtime_error("redis-server " + name + " (cluster mode) did not start; log:\n" +
                             tail(dir_ / "redis.log") + tail(dir_ / "stderr"));
  }
  int port() const { return port_; }
  const fs::path& dir() const { return dir_; }

 private:
  bool wait_ready() {
    const auto end = Clock::now() + 15s;
    while (Clock::now() < end) {
      if (!child_->running()) return false;
      try {
        Conn c(port_);
        if (c.cmd({"PING"}) == "status PONG") return true;
      } catch (const std::runtime_error&) {
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  fs::path dir_;
  int port_ = 0;
  std::unique_ptr<Child> child_;
};

/// The model: three shards without replicas, and a tester node.
class ModelCluster {
 public:
  ModelCluster() : sim_(1, 1 << 20) {
    sc_.name = "conformance-redis-cluster";
    sc_.lock.set_service(ServiceKind::kRedis);
    sc_.lock.ttl = sc_.lock.requested_ttl = 10s;
    sc_.lock.redis().replicas = 0;
    sc_.lock.redis().sentinels = 0;
    RedisClusterSpec c;
    c.shards = kShards;
    c.replicas = 0;
    c.node_timeout = 5s;
    sc_.lock.redis().cluster = c;
    for (int s = 0; s < kShards; ++s) servers_.push_back(sim_.add_node(fmt::format("redis-s{}-0", s)).id());
    tester_ = sim_.add_node("tester").id();
    sim_.node(tester_).set_behaviour(&ignore_);
    svc_ = std::make_unique<redis::RedisService>(sim_, history_, sc_, servers_, std::vector<sim::NodeId>{},
                                                 std::vector<sim::NodeId>{tester_});
    svc_->start();
  }

  /// Sends `c` to shard `node`'s primary; the normalised answer and, for
  /// MOVED, the shard of the node it names.
  std::string ask(int node, std::shared_ptr<redis::Command> c, int* moved_shard = nullptr) {
    std::string out = "no answer";
    bool done = false;
    sim_.node(tester_).spawn("ask", [&](sim::Process& p) {
      auto r = p.call(servers_[static_cast<std::size_t>(node)], c, 1s);
      const auto* reply = r ? r->as<redis::Reply>() : nullptr;
      if (reply != nullptr) {
        if (!reply->error.empty()) {
          out = "error " + reply->error;
          for (int s = 0; s < kShards && moved_shard != nullptr; ++s) {
            if (reply->redirect == servers_[static_cast<std::size_t>(s)]) *moved_shard = s;
          }
        } else if (reply->nil) {
          out = "nil";
        } else if (reply->integer) {
          out = "int " + std::to_string(*reply->integer);
        } else {
          out = "status " + reply->text;
        }
      }
      done = true;
    });
    while (!done && sim_.now() < 600s) sim_.run_until(sim_.now() + 100ms);
    return out;
  }

  static std::shared_ptr<redis::Command> acquire(const std::string& key, const std::string& counter) {
    auto c = std::make_shared<redis::Command>();
    c->op = redis::Op::kAcquire;
    c->key = key;
    c->value = "v1";
    c->ttl = 10s;
    c->with_token = true;
    c->counter_key = counter;
    return c;
  }
  static std::shared_ptr<redis::Command> get(const std::string& key) {
    auto c = std::make_shared<redis::Command>();
    c->op = redis::Op::kGet;
    c->key = key;
    return c;
  }

 private:
  struct Ignore final : sim::NodeBehaviour {};
  sim::Simulation sim_;
  History history_;
  Scenario sc_;
  std::vector<sim::NodeId> servers_;
  sim::NodeId tester_ = sim::kNoNode;
  Ignore ignore_;
  std::unique_ptr<redis::RedisService> svc_;
};

/// "MOVED 11058 127.0.0.1:PORT" → the slot and the shard whose port it is.
std::pair<std::string, int> parse_moved(const std::string& answer, const std::vector<int>& ports) {
  // "error MOVED <slot> <ip>:<port>"
  const std::string prefix = "error MOVED ";
  if (answer.rfind(prefix, 0) != 0) return {answer, -1};
  const std::string rest = answer.substr(prefix.size());
  const std::string slot = rest.substr(0, rest.find(' '));
  const std::string addr = rest.substr(rest.find(' ') + 1);
  const int port = std::stoi(addr.substr(addr.rfind(':') + 1));
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (ports[i] == port) return {slot, static_cast<int>(i)};
  }
  return {slot, -1};
}

TEST(RedisClusterConformance, SlotsCrossslotAndMovedMatchARealCluster) {
  TempDir dir("redis-cluster");
  std::vector<std::unique_ptr<ClusterServer>> nodes;
  std::vector<int> ports;
  for (int s = 0; s < kShards; ++s) {
    nodes.push_back(std::make_unique<ClusterServer>(dir.path(), fmt::format("node{}", s)));
    ports.push_back(nodes.back()->port());
  }
  // The model's slot split, given to the real nodes, then joined.
  for (int s = 0; s < kShards; ++s) {
    const auto [first, last] = redis::shard_slots(s, kShards);
    Conn c(ports[static_cast<std::size_t>(s)]);
    ASSERT_EQ(c.cmd({"CLUSTER", "ADDSLOTSRANGE", std::to_string(first), std::to_string(last)}), "status OK");
  }
  {
    Conn c(ports[0]);
    for (int s = 1; s < kShards; ++s) {
      ASSERT_EQ(c.cmd({"CLUSTER", "MEET", "127.0.0.1", std::to_string(ports[static_cast<std::size_t>(s)])}),
                "status OK");
    }
  }
  // Generous: the nodes handshake and agree within a few seconds.
  const auto end = Clock::now() + 90s;
  bool ok = false;
  while (!ok && Clock::now() < end) {
    ok = true;
    for (int p : ports) {
      Conn c(p);
      const std::string info = c.cmd({"CLUSTER", "INFO"});
      if (info.find("cluster_state:ok") == std::string::npos ||
          info.find("cluster_known_nodes:3") == std::string::npos) {
        ok = false;
      }
    }
    if (!ok) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(ok) << "the real cluster did not reach cluster_state:ok within 90 s; log:\n"
                  << tail(nodes[0]->dir() / "redis.log");

  ModelCluster model;
  Conn c0(ports[0]);

  // CLUSTER KEYSLOT against the model's slot function.
  for (const std::string key : {"somekey", "foo{hash_tag}", "{user1}.following", "123456789", "lock", "lock:token",
                                "lock:key", "lock:counter", "{lock}:key", "{lock}:counter", "foo{}{bar}",
                                "foo{{bar}}zap", "foo{bar}{zap}", "{}", "a{b", "}{x}", "{a}{b}", "x{}y{z}"}) {
    EXPECT_EQ(c0.cmd({"CLUSTER", "KEYSLOT", key}), "int " + std::to_string(redis::key_hash_slot(key))) << "key " << key;
  }

  // The two-key script with keys of different slots: CROSSSLOT, exact text,
  // whichever node is asked (it comes before MOVED).
  const std::string crossslot_model = model.ask(0, ModelCluster::acquire("lock:key", "lock:counter"));
  EXPECT_EQ(crossslot_model, "error CROSSSLOT Keys in request don't hash to the same slot");
  for (int s = 0; s < kShards; ++s) {
    Conn c(ports[static_cast<std::size_t>(s)]);
    EXPECT_EQ(c.cmd({"EVAL", kAcquireScript, "2", "lock:key", "lock:counter", "v1", "10000"}), crossslot_model)
        << "node " << s;
    EXPECT_EQ(model.ask(s, ModelCluster::acquire("lock:key", "lock:counter")), crossslot_model) << "model shard " << s;
  }

  // MOVED: a key asked of a node that does not own its slot names the slot
  // and the owner.
  for (const std::string key : {"somekey", "lock", "{user1}.following", "foo{hash_tag}"}) {
    const int owner = redis::shard_of_slot(redis::key_hash_slot(key), kShards);
    const int asked = (owner + 1) % kShards;
    Conn c(ports[static_cast<std::size_t>(asked)]);
    const auto [real_slot, real_owner] = parse_moved(c.cmd({"GET", key}), ports);
    int model_owner = -1;
    const std::string m = model.ask(asked, ModelCluster::get(key), &model_owner);
    EXPECT_EQ(real_slot, std::to_string(redis::key_hash_slot(key))) << key;
    EXPECT_EQ(real_owner, owner) << key;
    EXPECT_EQ(m.rfind("error MOVED " + real_slot + " ", 0), 0u) << key << ": " << m;
    EXPECT_EQ(model_owner, real_owner) << key;
  }

  // With a hash tag the script runs on the owner: token 1 on both.
  const int owner = redis::shard_of_slot(redis::key_hash_slot("lock"), kShards);
  Conn co(ports[static_cast<std::size_t>(owner)]);
  EXPECT_EQ(co.cmd({"EVAL", kAcquireScript, "2", "{lock}:key", "{lock}:counter", "v1", "10000"}), "int 1");
  EXPECT_EQ(model.ask(owner, ModelCluster::acquire("{lock}:key", "{lock}:counter")), "int 1");
}

}  // namespace
}  // namespace fencesim::conformance
