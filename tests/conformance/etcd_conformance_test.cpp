// The etcd model (models/etcd) against a real etcd 3.4.
//
// Each test runs one operation script twice: against a single-member etcd
// that the test starts on 127.0.0.1 (free client and peer ports, a
// temporary --data-dir removed afterwards, stopped by RAII even on failure),
// driven with `etcdctl --write-out=json`; and against the model in a
// sim::Simulation (an EtcdService with one member, etcd-0, and a tester node
// that sends the model's etcd::Request payloads). The answers are compared
// step by step.
//
// The model has no plain Put: a key is created the way the model's clients
// create one, by concurrency.Mutex's transaction
//   Txn(If(CreateRevision(key) == 0),
//       Then(Put(key, "", WithLease(lease)), Get(prefix, FirstCreate)),
//       Else(Get(key), Get(prefix, FirstCreate)))
// which the real side sends with `etcdctl txn` (compares and ops on stdin).
// Program clients' general Txn (models/etcd/txn.hpp) is compared the same
// way: each TxnSpec is written in etcdctl txn's syntax for the real side.
//
// Real time: etcd's minimum lease TTL is 2 s here (ceil(1.5 × the 1 s
// election timeout)) and its lessor looks for expired leases every 500 ms;
// waits have margins of seconds, and a check that is only meaningful inside
// a window is recorded only when the window held.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "models/etcd/etcd.hpp"
#include "models/history.hpp"
#include "models/scenario.hpp"
#include "sim/simulation.hpp"
#include "tests/conformance/conformance.hpp"

namespace fencesim::conformance {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using json = nlohmann::json;

// --- documented deviations --------------------------------------------------

const std::vector<Deviation>& etcd_deviations() {
  static const std::vector<Deviation> kList = {
      {"etcd-no-timetolive",
       "LeaseTimeToLive of a live lease: the model has no TimeToLive request (a missing lease is compared through "
       "EtcdMember::has_lease)",
       R"(granted-ttl \d+)", R"(\(no TimeToLive request in the model\))", "granted-ttl 2", "(no TimeToLive request)",
       nullptr},
  };
  return kList;
}

const std::vector<Substitution>& etcd_substitutions() {
  static const std::vector<Substitution> kList = {
      {"LeaseTimeToLive",
       "for a lease that is gone (expired or revoked), EtcdMember::has_lease == false is "
       "compared with etcd's \"ttl -1\"; a live lease's granted TTL is not available (see "
       "deviation etcd-no-timetolive)"},
      {"etcdctl lock (concurrency.Mutex)",
       "the model side runs the Mutex by hand with the model's requests, as "
       "models/client/etcd_client.cpp does: LeaseGrant, LockTxn, LastCreated "
       "+ Watch on the key before ours, Get of our key, Delete to unlock"},
      {"watch --rev", "the model's Watch request (a key, from a revision) and the WatchEvent it pushes"},
  };
  return kList;
}

// --- the backend a script runs against ---------------------------------------------

/// Answers are normalised strings: "rev 5", "ttl 2", "error lease not
/// found", "rev 3 create 2 mod 2 version 1 lease L1", "rev 4 absent",
/// "succeeded=true own_create=2 owner=kv/a@2 rev=2". Lease ids differ
/// between etcd and the model, so answers name leases by the label the
/// script gave them (L1, L2 …).
class EtcdBackend {
 public:
  virtual ~EtcdBackend() = default;
  /// Grants a lease of `ttl_s` seconds; its answer in `answer`, its id (0 on error).
  virtual std::int64_t grant(std::int64_t ttl_s, std::string& answer) = 0;
  virtual std::string revoke(std::int64_t lease) = 0;
  virtual std::string keepalive(std::int64_t lease) = 0;
  virtual std::string timetolive(std::int64_t lease) = 0;
  virtual std::string lock_txn(const std::string& key, std::int64_t lease, const std::string& prefix) = 0;
  virtual std::string get(const std::string& key) = 0;
  virtual std::string del(const std::string& key) = 0;
  virtual std::string put(const std::string& key, const std::string& value) = 0;
  /// The general Txn (models/etcd/txn.hpp); leases in it are this backend's ids.
  virtual std::string txn(const etcd::TxnSpec& t) = 0;
  virtual void sleep(Millis d) = 0;
  virtual Millis now() = 0;

  void label(std::int64_t lease, const std::string& name) { labels_[lease] = name; }
  std::string lease_name(std::int64_t lease) const {
    if (lease == 0) return "none";
    auto it = labels_.find(lease);
    return it == labels_.end() ? fmt::format("{:x}", lease) : it->second;
  }
  std::string kv_answer(std::int64_t rev, std::int64_t create, std::int64_t mod, std::int64_t version,
                        std::int64_t lease) const {
    return fmt::format("rev {} create {} mod {} version {} lease {}", rev, create, mod, version, lease_name(lease));
  }
  void sleep_until(Millis t) {
    const Millis n = now();
    if (t > n) sleep(t - n);
  }

 private:
  std::map<std::int64_t, std::string> labels_;
};

std::string normalise_error(const std::string& e) {
  if (e.find("lease not found") != std::string::npos) return "error lease not found";
  if (e.find("duplicate key given in txn request") != std::string::npos) return "error duplicate key";
  return "error " + e;
}

// --- the real server ---------------------------------------------------------------

class RealEtcd {
 public:
  explicit RealEtcd(const fs::path& dir) : dir_(dir) {
    const std::string etcd = require_program("etcd", "etcd-server", {}, "FENCESIM_ETCD");
    etcdctl_ = require_program("etcdctl", "etcd-client", {}, "FENCESIM_ETCDCTL");
    for (int attempt = 0; attempt < 3; ++attempt) {
      client_port_ = free_port();
      int peer = free_port();
      while (peer == client_port_) peer = free_port();
      const std::string client = fmt::format("http://127.0.0.1:{}", client_port_);
      const std::string peer_url = fmt::format("http://127.0.0.1:{}", peer);
      const fs::path data = dir_ / fmt::format("data-{}", attempt);
      std::vector<std::string> argv = {etcd,
                                       "--name",
                                       "conformance",
                                       "--data-dir",
                                       data.string(),
                                       "--listen-client-urls",
                                       client,
                                       "--advertise-client-urls",
                                       client,
                                       "--listen-peer-urls",
                                       peer_url,
                                       "--initial-advertise-peer-urls",
                                       peer_url,
                                       "--initial-cluster",
                                       "conformance=" + peer_url,
                                       "--initial-cluster-state",
                                       "new",
                                       "--logger",
                                       "zap",
                                       "--log-outputs",
                                       (dir_ / "etcd.log").string()};
      child_ = std::make_unique<Child>(argv, dir_ / "stdout", dir_ / "stderr");
      if (wait_ready()) return;
      child_->stop();
    }
    throw std::runtime_error("etcd did not start; log:\n" + tail(dir_ / "etcd.log") + tail(dir_ / "stderr"));
  }

  /// etcdctl with the JSON output; nullopt and `error` (the "Error: …" line)
  /// when it fails.
  std::optional<json> ctl(const std::vector<std::string>& args, std::string& error, const std::string& input = "") {
    std::vector<std::string> argv = base_args();
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = run_command(argv, Millis{20000}, {}, input);
    if (r.timed_out) throw std::runtime_error("etcdctl " + args.front() + " timed out");
    if (r.status != 0) {
      error = last_error(r.err);
      return std::nullopt;
    }
    error.clear();
    try {
      return json::parse(r.out);
    } catch (const json::exception& e) {
      throw std::runtime_error("etcdctl " + args.front() + ": unreadable output: " + r.out + " (" + e.what() + ")");
    }
  }
  std::vector<std::string> base_args() const {
    return {etcdctl_, fmt::format("--endpoints=http://127.0.0.1:{}", client_port_), "--write-out=json",
            "--dial-timeout=5s", "--command-timeout=10s"};
  }
  const fs::path& dir() const { return dir_; }

 private:
  static std::string last_error(const std::string& err) {
    std::string last;
    std::size_t pos = 0;
    while ((pos = err.find("Error: ", pos)) != std::string::npos) {
      const std::size_t end = err.find('\n', pos);
      last = err.substr(pos + 7, end == std::string::npos ? std::string::npos : end - pos - 7);
      pos += 7;
    }
    return last.empty() ? err : last;
  }
  bool wait_ready() {
    const auto end = Clock::now() + 30s;
    while (Clock::now() < end) {
      if (!child_->running()) return false;
      std::vector<std::string> argv = base_args();
      argv.insert(argv.end(), {"get", "conformance-ready"});
      const CommandResult r = run_command(argv, Millis{15000});
      if (r.status == 0) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }
  fs::path dir_;
  std::string etcdctl_;
  int client_port_ = 0;
  std::unique_ptr<Child> child_;
};

std::string etcd_version() {
  const std::string bin = require_program("etcd", "etcd-server", {}, "FENCESIM_ETCD");
  const CommandResult r = run_command({bin, "--version"}, Millis{20000});
  std::string v = r.out.substr(0, r.out.find('\n'));
  return v;
}

class RealEtcdBackend final : public EtcdBackend {
 public:
  explicit RealEtcdBackend(RealEtcd& e) : e_(e), start_(Clock::now()) {}

  std::int64_t grant(std::int64_t ttl_s, std::string& answer) override {
    std::string err;
    auto j = e_.ctl({"lease", "grant", std::to_string(ttl_s)}, err);
    if (!j) {
      answer = normalise_error(err);
      return 0;
    }
    answer = fmt::format("ttl {} rev {}", (*j)["TTL"].get<std::int64_t>(), (*j)["revision"].get<std::int64_t>());
    return (*j)["ID"].get<std::int64_t>();
  }
  std::string revoke(std::int64_t lease) override {
    std::string err;
    auto j = e_.ctl({"lease", "revoke", hex(lease)}, err);
    if (!j) return normalise_error(err);
    return fmt::format("rev {}", (*j)["header"]["revision"].get<std::int64_t>());
  }
  std::string keepalive(std::int64_t lease) override {
    std::string err;
    auto j = e_.ctl({"lease", "keep-alive", "--once", hex(lease)}, err);
    // The server answers a keepalive for an unknown or expired lease with
    // TTL 0 (v3rpc/lease.go); clientv3 turns TTL <= 0 into
    // ErrLeaseNotFound, which is what etcdctl prints.
    if (!j) return err.find("lease not found") != std::string::npos ? "ttl 0" : normalise_error(err);
    return fmt::format("ttl {}", (*j)["TTL"].get<std::int64_t>());
  }
  std::string timetolive(std::int64_t lease) override {
    std::string err;
    auto j = e_.ctl({"lease", "timetolive", hex(lease)}, err);
    if (!j) return normalise_error(err);
    const std::int64_t ttl = (*j)["ttl"].get<std::int64_t>();
    if (ttl < 0) return "ttl -1";
    return fmt::format("granted-ttl {}", (*j)["granted-ttl"].get<std::int64_t>());
  }
  std::string lock_txn(const std::string& key, std::int64_t lease, const std::string& prefix) override {
    const std::string owner = fmt::format("get {} --prefix --sort-by=CREATE --order=ASCEND --limit=1", prefix);
    const std::string input = fmt::format("create(\"{}\") = \"0\"\n\nput {} \"\" --lease={}\n{}\n\nget {}\n{}\n\n", key,
                                          key, hex(lease), owner, key, owner);
    std::string err;
    auto j = e_.ctl({"txn"}, err, input);
    if (!j) return normalise_error(err);
    const bool ok = j->value("succeeded", false);
    const std::int64_t rev = (*j)["header"]["revision"].get<std::int64_t>();
    const auto& resp = (*j)["responses"];
    // concurrency.Mutex: myRev is the header revision when the put ran,
    // else the create revision of the key found.
    std::int64_t own = rev;
    if (!ok) own = resp.at(0)["Response"]["ResponseRange"]["kvs"].at(0)["create_revision"].get<std::int64_t>();
    const auto& kvs = resp.at(1)["Response"]["ResponseRange"]["kvs"];
    std::string owner_s = "none";
    if (kvs.is_array() && !kvs.empty()) {
      owner_s = fmt::format("{}@{}", base64_decode(kvs[0]["key"].get<std::string>()),
                            kvs[0]["create_revision"].get<std::int64_t>());
    }
    return fmt::format("succeeded={} own_create={} owner={} rev={}", ok, own, owner_s, rev);
  }
  std::string get(const std::string& key) override {
    std::string err;
    auto j = e_.ctl({"get", key}, err);
    if (!j) return normalise_error(err);
    const std::int64_t rev = (*j)["header"]["revision"].get<std::int64_t>();
    if (!j->contains("kvs") || (*j)["kvs"].empty()) return fmt::format("rev {} absent", rev);
    const auto& kv = (*j)["kvs"][0];
    return kv_answer(rev, kv["create_revision"].get<std::int64_t>(), kv["mod_revision"].get<std::int64_t>(),
                     kv["version"].get<std::int64_t>(), kv.value("lease", std::int64_t{0}));
  }
  std::string del(const std::string& key) override {
    std::string err;
    auto j = e_.ctl({"del", key}, err);
    if (!j) return normalise_error(err);
    return fmt::format("rev {}", (*j)["header"]["revision"].get<std::int64_t>());
  }
  std::string put(const std::string& key, const std::string& value) override {
    std::string err;
    auto j = e_.ctl({"put", key, value}, err);
    if (!j) return normalise_error(err);
    return fmt::format("rev {}", (*j)["header"]["revision"].get<std::int64_t>());
  }
  std::string txn(const etcd::TxnSpec& t) override {
    // etcdctl txn's interactive syntax: compares, a blank line, the success
    // ops, a blank line, the failure ops, a blank line.
    static const char* const kTargets[] = {"version", "create", "mod", "value", "lease"};
    static const char* const kResults[] = {"=", ">", "<", "!="};
    std::string input;
    for (const etcd::TxnCompare& c : t.compare) {
      const std::string operand = c.target == etcd::TxnCompare::Target::kValue   ? c.value
                                  : c.target == etcd::TxnCompare::Target::kLease ? hex(c.number)
                                                                                 : std::to_string(c.number);
      input += fmt::format("{}(\"{}\") {} \"{}\"\n", kTargets[static_cast<int>(c.target)], c.key,
                           kResults[static_cast<int>(c.result)], operand);
    }
    for (const auto* ops : {&t.success, &t.failure}) {
      input += "\n";
      for (const etcd::TxnOp& op : *ops) {
        if (op.kind == etcd::TxnOp::Kind::kPut) {
          input += fmt::format("put {} \"{}\"{}\n", op.key, op.value,
                               op.lease != 0 ? " --lease=" + hex(op.lease) : std::string());
        } else {
          input += fmt::format("{} {}{}{}\n", op.kind == etcd::TxnOp::Kind::kRange ? "get" : "del", op.key,
                               op.range_end.empty() ? "" : " " + op.range_end,
                               op.limit > 0 ? fmt::format(" --limit={}", op.limit) : "");
        }
      }
    }
    input += "\n";
    std::string err;
    auto j = e_.ctl({"txn"}, err, input);
    if (!j) return normalise_error(err);
    std::string out = fmt::format("succeeded={} rev={}", j->value("succeeded", false),
                                  (*j)["header"]["revision"].get<std::int64_t>());
    for (const json& r : j->value("responses", json::array())) {
      const json& resp = r["Response"];
      if (resp.contains("ResponsePut")) {
        out += " | put";
      } else if (resp.contains("ResponseDeleteRange")) {
        out += fmt::format(" | deleted {}", resp["ResponseDeleteRange"].value("deleted", std::int64_t{0}));
      } else {
        const json& rr = resp["ResponseRange"];
        out += " | range";
        for (const json& kv : rr.value("kvs", json::array())) {
          out += fmt::format(" {}={}@{}/{}/v{}", base64_decode(kv["key"].get<std::string>()),
                             base64_decode(kv.value("value", std::string())), kv["create_revision"].get<std::int64_t>(),
                             kv["mod_revision"].get<std::int64_t>(), kv["version"].get<std::int64_t>());
        }
        out += fmt::format(" count {} more {}", rr.value("count", std::int64_t{0}), rr.value("more", false));
      }
    }
    return out;
  }
  void sleep(Millis d) override { std::this_thread::sleep_for(d); }
  Millis now() override { return std::chrono::duration_cast<Millis>(Clock::now() - start_); }

 private:
  static std::string hex(std::int64_t id) { return fmt::format("{:x}", id); }
  RealEtcd& e_;
  Clock::time_point start_;
};

// --- the model -----------------------------------------------------------------------

/// The tester node keeps the watch events the member pushes to it.
class WatchInbox final : public sim::NodeBehaviour {
 public:
  void on_message(const sim::Message& m) override {
    if (const auto* ev = m.as<etcd::WatchEvent>()) events.push_back(*ev);
  }
  std::vector<etcd::WatchEvent> events;
};

class ModelEtcdBackend final : public EtcdBackend {
 public:
  /// `members`: the model's cluster size. The real server is a single
  /// member; the model is compared as a 3-member cluster (its default; the
  /// tester talks to etcd-0, the leader, and no fault runs, so the answers
  /// do not depend on the size) because a 1-member model cluster never
  /// answers a write (deviation etcd-single-member-writes-unanswered).
  explicit ModelEtcdBackend(int members = 3) : sim_(1, 1 << 20) {
    sc_.name = "conformance-etcd";
    sc_.lock.set_service(ServiceKind::kEtcd);
    sc_.lock.ttl = sc_.lock.requested_ttl = 60s;
    sc_.lock.etcd().nodes = members;
    sc_.lock.etcd().election_timeout = 1s;  // etcd's defaults
    sc_.lock.etcd().heartbeat = 100ms;
    sc_.lock.etcd().pre_vote = false;                     // etcd 3.4's default
    sc_.lock.etcd().keepalive_checks_leadership = false;  // etcd 3.4
    std::vector<sim::NodeId> ids;
    for (int i = 0; i < members; ++i) ids.push_back(sim_.add_node("etcd-" + std::to_string(i)).id());
    member_ = ids.front();
    tester_ = sim_.add_node("tester").id();
    sim_.node(tester_).set_behaviour(&inbox_);
    svc_ = std::make_unique<etcd::EtcdService>(sim_, history_, sc_, ids);
    svc_->start();
  }

  void run(const std::function<void(ModelEtcdBackend&)>& script) {
    bool done = false;
    sim_.node(tester_).spawn("script", [&](sim::Process& p) {
      p_ = &p;
      script(*this);
      done = true;
    });
    while (!done && sim_.now() < 600s) sim_.run_until(sim_.now() + 1s);
    if (!done) ADD_FAILURE() << "the model script did not finish within 600 s of simulated time";
  }

  std::optional<etcd::Response> call(std::shared_ptr<etcd::Request> req) {
    auto m = p_->call(member_, req, 5s);
    const auto* r = m ? m->as<etcd::Response>() : nullptr;
    return r != nullptr ? std::optional<etcd::Response>(*r) : std::nullopt;
  }
  static std::shared_ptr<etcd::Request> request(etcd::ReqKind k) {
    auto r = std::make_shared<etcd::Request>();
    r->kind = k;
    return r;
  }

  std::int64_t grant(std::int64_t ttl_s, std::string& answer) override {
    auto req = request(etcd::ReqKind::kLeaseGrant);
    req->ttl = std::chrono::seconds{ttl_s};
    auto r = call(req);
    if (!r) {
      answer = "timeout";
      return 0;
    }
    if (!r->error.empty()) {
      answer = normalise_error(r->error);
      return 0;
    }
    answer = fmt::format("ttl {} rev {}", r->ttl / 1s, r->header_revision);
    return r->lease;
  }
  std::string revoke(std::int64_t lease) override {
    auto req = request(etcd::ReqKind::kLeaseRevoke);
    req->lease = lease;
    return header_or_error(call(req));
  }
  std::string keepalive(std::int64_t lease) override {
    auto req = request(etcd::ReqKind::kKeepAlive);
    req->lease = lease;
    auto r = call(req);
    if (!r) return "timeout";
    if (!r->error.empty()) return normalise_error(r->error);
    return fmt::format("ttl {}", r->ttl / 1s);
  }
  std::string timetolive(std::int64_t lease) override {
    if (!svc_->member(0).has_lease(lease)) return "ttl -1";
    return "(no TimeToLive request in the model)";
  }
  std::string lock_txn(const std::string& key, std::int64_t lease, const std::string& prefix) override {
    auto req = request(etcd::ReqKind::kLockTxn);
    req->key = key;
    req->lease = lease;
    req->prefix = prefix;
    auto r = call(req);
    if (!r) return "timeout";
    if (!r->error.empty()) return normalise_error(r->error);
    const std::string owner =
        r->owner ? fmt::format("{}@{}", r->owner->key, r->owner->create_revision) : std::string("none");
    return fmt::format("succeeded={} own_create={} owner={} rev={}", r->succeeded, r->kv ? r->kv->create_revision : -1,
                       owner, r->header_revision);
  }
  std::string get(const std::string& key) override {
    auto req = request(etcd::ReqKind::kGet);
    req->key = key;
    auto r = call(req);
    if (!r) return "timeout";
    if (!r->error.empty()) return normalise_error(r->error);
    if (!r->kv) return fmt::format("rev {} absent", r->header_revision);
    return kv_answer(r->header_revision, r->kv->create_revision, r->kv->mod_revision, r->kv->version, r->kv->lease);
  }
  std::string del(const std::string& key) override {
    auto req = request(etcd::ReqKind::kDelete);
    req->key = key;
    return header_or_error(call(req));
  }
  std::string put(const std::string& key, const std::string& value) override {
    auto req = request(etcd::ReqKind::kPut);
    req->key = key;
    req->value = value;
    return header_or_error(call(req));
  }
  std::string txn(const etcd::TxnSpec& t) override {
    auto req = request(etcd::ReqKind::kTxn);
    req->txn = std::make_shared<const etcd::TxnSpec>(t);
    auto r = call(req);
    if (!r) return "timeout";
    if (!r->error.empty()) return normalise_error(r->error);
    std::string out = fmt::format("succeeded={} rev={}", r->succeeded, r->header_revision);
    for (const etcd::TxnOpResult& op : r->responses) {
      if (op.kind == etcd::TxnOp::Kind::kPut) {
        out += " | put";
      } else if (op.kind == etcd::TxnOp::Kind::kDelete) {
        out += fmt::format(" | deleted {}", op.deleted);
      } else {
        out += " | range";
        for (const etcd::KeyValue& kv : op.kvs) {
          out += fmt::format(" {}={}@{}/{}/v{}", kv.key, kv.value, kv.create_revision, kv.mod_revision, kv.version);
        }
        out += fmt::format(" count {} more {}", op.count, op.more);
      }
    }
    return out;
  }
  void sleep(Millis d) override { p_->sleep(d); }
  Millis now() override { return std::chrono::duration_cast<Millis>(sim_.now()); }

  /// Sends a request that is not answered (a watch).
  void send(std::shared_ptr<etcd::Request> req) { sim_.node(tester_).send(member_, std::move(req)); }
  WatchInbox& inbox() { return inbox_; }

 private:
  static std::string header_or_error(const std::optional<etcd::Response>& r) {
    if (!r) return "timeout";
    if (!r->error.empty()) return normalise_error(r->error);
    return fmt::format("rev {}", r->header_revision);
  }

  sim::Simulation sim_;
  WatchInbox inbox_;
  History history_;
  Scenario sc_;
  sim::NodeId member_ = sim::kNoNode;
  sim::NodeId tester_ = sim::kNoNode;
  std::unique_ptr<etcd::EtcdService> svc_;
  sim::Process* p_ = nullptr;
};

// --- running a script on both ---------------------------------------------------------

using Script = std::function<void(EtcdBackend&, Transcript&)>;

void announce() {
  std::cout << "[conformance] real server: " << etcd_version() << "\n";
  print_deviations("etcd", etcd_deviations(), etcd_substitutions());
}

void run_both(const Script& script) {
  announce();
  Transcript real("etcd");
  {
    TempDir dir("etcd");
    RealEtcd e(dir.path());
    RealEtcdBackend b(e);
    script(b, real);
  }  // etcd stops here (and on an exception, by unwinding)
  Transcript model("model");
  ModelEtcdBackend m;
  m.run([&](ModelEtcdBackend& b) { script(b, model); });
  compare_transcripts(real, model, etcd_deviations());
}

// --- the scripts ----------------------------------------------------------------------

void script_revisions(EtcdBackend& b, Transcript& t) {
  t.add("get kv/a on a fresh store", b.get("kv/a"));
  std::string a;
  const std::int64_t l1 = b.grant(60, a);
  b.label(l1, "L1");
  t.add("lease grant 60 (L1): a grant changes no revision", a);
  t.add("txn create kv/a with L1 (compare create_revision == 0)", b.lock_txn("kv/a", l1, "kv/"));
  t.add("txn create kv/b with L1: owner stays kv/a", b.lock_txn("kv/b", l1, "kv/"));
  t.add("txn create kv/a again: compare fails, no-op keeps the revision", b.lock_txn("kv/a", l1, "kv/"));
  t.add("get kv/a: create_revision / mod_revision / version / lease", b.get("kv/a"));
  t.add("get kv/b", b.get("kv/b"));
  t.add("delete kv/b", b.del("kv/b"));
  t.add("delete kv/b again (absent): no revision", b.del("kv/b"));
  t.add("get kv/b after the delete", b.get("kv/b"));
  t.add("txn create kv/d with L1", b.lock_txn("kv/d", l1, "kv/"));
  const std::int64_t l2 = b.grant(60, a);
  b.label(l2, "L2");
  t.add("lease grant 60 (L2)", a);
  t.add("txn create kv/c with L2: owner is still kv/a", b.lock_txn("kv/c", l2, "kv/"));
  t.add("lease revoke L1 (kv/a and kv/d attached): one revision for both deletes", b.revoke(l1));
  t.add("get kv/a after the revoke", b.get("kv/a"));
  t.add("get kv/d after the revoke", b.get("kv/d"));
  t.add("txn create kv/c again: the owner is now kv/c", b.lock_txn("kv/c", l2, "kv/"));
  t.add("lease revoke L1 again", b.revoke(l1));
  t.add("lease keep-alive L1 (revoked)", b.keepalive(l1));
  t.add("lease timetolive L1 (revoked)", b.timetolive(l1));
  t.add("txn create kv/e with the revoked L1: refused", b.lock_txn("kv/e", l1, "kv/"));
  t.add("get kv/e: nothing was written", b.get("kv/e"));
  const std::int64_t l3 = b.grant(60, a);
  b.label(l3, "L3");
  t.add("lease grant 60 (L3)", a);
  t.add("lease revoke L3 (no keys): no revision", b.revoke(l3));
}

void script_put(EtcdBackend& b, Transcript& t) {
  t.add("put kv/p 1", b.put("kv/p", "1"), "");
  t.add("put kv/p 2 (overwrite)", b.put("kv/p", "2"), "");
  t.add("get kv/p: version 2, create_revision kept, new mod_revision", b.get("kv/p"), "");
}

// The general Txn (models/etcd/txn.hpp), as program clients send it.
etcd::TxnCompare compare(const std::string& key, etcd::TxnCompare::Target target, etcd::TxnCompare::Result result,
                         std::int64_t number, const std::string& value = "") {
  etcd::TxnCompare c;
  c.key = key;
  c.target = target;
  c.result = result;
  c.number = number;
  c.value = value;
  return c;
}
etcd::TxnOp txn_op(etcd::TxnOp::Kind kind, const std::string& key, const std::string& arg = "", std::int64_t lease = 0,
                   std::int64_t limit = 0) {
  etcd::TxnOp op;
  op.kind = kind;
  op.key = key;
  (kind == etcd::TxnOp::Kind::kPut ? op.value : op.range_end) = arg;
  op.lease = lease;
  op.limit = limit;
  return op;
}

void script_txn(EtcdBackend& b, Transcript& t) {
  using T = etcd::TxnCompare::Target;
  using R = etcd::TxnCompare::Result;
  using K = etcd::TxnOp::Kind;
  t.add("put t/k1 v1", b.put("t/k1", "v1"));
  etcd::TxnSpec create;
  create.compare = {compare("t/k1", T::kCreate, R::kEqual, 0)};
  create.success = {txn_op(K::kPut, "t/k1", "mine")};
  create.failure = {txn_op(K::kRange, "t/k1")};
  t.add("txn create_revision(t/k1) = 0 fails: the failure branch's range", b.txn(create));
  etcd::TxnSpec cas;
  cas.compare = {compare("t/k1", T::kValue, R::kEqual, 0, "v1"), compare("t/k1", T::kMod, R::kLess, 3),
                 compare("t/k1", T::kVersion, R::kGreater, 0)};
  cas.success = {txn_op(K::kPut, "t/k1", "v2"), txn_op(K::kPut, "t/k2", "x"), txn_op(K::kRange, "t/", "t0")};
  t.add("txn value = v1, mod < 3, version > 0: two puts at one revision, a range that sees them", b.txn(cas));
  etcd::TxnSpec missing_value;
  missing_value.compare = {compare("t/none", T::kValue, R::kEqual, 0, "")};
  t.add("txn value(t/none) = \"\": fails on an absent key", b.txn(missing_value));
  etcd::TxnSpec missing_version;
  // (No LEASE compare here: etcdctl 3.4's txn passes a lease compare's
  // operand to clientv3.Compare as a string, which panics "bad value".)
  missing_version.compare = {compare("t/none", T::kVersion, R::kEqual, 0),
                             compare("t/k1", T::kValue, R::kNotEqual, 0, "v1")};
  t.add("txn version(t/none) = 0, value(t/k1) != v1: holds, no revision", b.txn(missing_version));
  etcd::TxnSpec twice;
  twice.success = {txn_op(K::kPut, "t/d", "1"), txn_op(K::kPut, "t/d", "2")};
  t.add("txn putting t/d twice: refused", b.txn(twice));
  etcd::TxnSpec covered;
  covered.success = {txn_op(K::kDelete, "t/", "t0"), txn_op(K::kPut, "t/k1", "3")};
  t.add("txn deleting t/ and putting t/k1: refused", b.txn(covered));
  std::string a;
  const std::int64_t lease = b.grant(60, a);
  b.label(lease, "L1");
  b.revoke(lease);
  etcd::TxnSpec gone;
  gone.success = {txn_op(K::kPut, "t/k3", "1"), txn_op(K::kPut, "t/k4", "1", lease)};
  t.add("txn putting with a revoked lease: refused, nothing written", b.txn(gone));
  t.add("get t/k3 after it", b.get("t/k3"));
  etcd::TxnSpec limited;
  limited.success = {txn_op(K::kRange, "t/", "t0", 0, 1)};
  t.add("txn range t/ with limit 1: count and more", b.txn(limited));
  etcd::TxnSpec wipe;
  wipe.compare = {compare("t/k2", T::kCreate, R::kGreater, 2)};
  wipe.success = {txn_op(K::kDelete, "t/", "t0"), txn_op(K::kRange, "t/", "t0")};
  t.add("txn create(t/k2) > 2: delete t/ (two keys, one revision), then the range is empty", b.txn(wipe));
  etcd::TxnSpec nothing;
  nothing.success = {txn_op(K::kDelete, "t/", "t0")};
  t.add("txn deleting nothing: no revision", b.txn(nothing));
}

void script_leases(EtcdBackend& b, Transcript& t) {
  std::string a;
  const std::int64_t l1 = b.grant(1, a);
  b.label(l1, "L1");
  t.add("lease grant 1 (below the minimum): granted TTL", a.substr(0, a.find(" rev")), a);
  t.add("lease timetolive L1", b.timetolive(l1), "", "etcd-no-timetolive");
  t.add("lease keep-alive --once L1", b.keepalive(l1), "");
  t.add("lease revoke L1", b.revoke(l1));
  t.add("lease timetolive L1 after the revoke", b.timetolive(l1));

  // Keepalives keep a 2 s lease (etcd's minimum) alive well past its TTL.
  const Millis granted_at = b.now();
  const std::int64_t l2 = b.grant(2, a);
  b.label(l2, "L2");
  t.add("lease grant 2 (L2)", a);
  t.add("txn create kv/x with L2", b.lock_txn("kv/x", l2, "kv/"));
  // The lease cannot lapse while the server receives renewals less than the
  // TTL apart. Receipts lie within each call, so the gap between two
  // receipts is at most (end of the later call - start of the earlier one);
  // a step is compared only while every such bound stayed under 1.9 s.
  Millis prev_start = granted_at;
  bool lapsed = false;
  Millis worst{0};
  for (int i = 1; i <= 5; ++i) {
    b.sleep(700ms);
    const Millis start = b.now();
    const std::string ka = b.keepalive(l2);
    worst = std::max(worst, b.now() - prev_start);
    lapsed = lapsed || b.now() - prev_start >= 1900ms;
    prev_start = start;
    t.add_timed(fmt::format("lease keep-alive --once L2 (#{}, {} ms after the grant)", i, 700 * i), !lapsed,
                fmt::format("up to {} ms between renewals (the window is 1900 ms)", worst.count()), ka);
  }
  const Millis last_ka = prev_start;
  a = b.get("kv/x");
  lapsed = lapsed || b.now() - last_ka >= 1900ms;
  t.add_timed(
      "get kv/x 3.5 s after the grant: kept alive past its 2 s TTL", !lapsed,
      fmt::format("up to {} ms between renewals (the window is 1900 ms)", std::max(worst, b.now() - last_ka).count()),
      a);

  // Then no more keepalives: the lessor revokes it and deletes kv/x.
  std::string seen = b.get("kv/x");
  while (seen.find("absent") == std::string::npos && b.now() - last_ka < 10000ms) {
    b.sleep(100ms);
    seen = b.get("kv/x");
  }
  const Millis gone_at = b.now();
  t.add("get kv/x after the keepalives stop: deleted by expiry, revision + 1", seen);
  // Causal bounds only (no margin needed): the lease ends no earlier than
  // the TTL after the last keepalive was sent (unless it lapsed before), and
  // within TTL + the lessor's 500 ms interval + a 7.5 s margin.
  t.add_timed("the expiry came no earlier than 2 s after the last keepalive", !lapsed,
              "the lease may have lapsed between renewals",
              gone_at - last_ka >= 2000ms ? "yes" : fmt::format("no: after {} ms", (gone_at - last_ka).count()));
  t.add("the expiry came within 10 s of the last keepalive",
        gone_at - last_ka < 10000ms ? "yes" : fmt::format("no: {} ms", (gone_at - last_ka).count()));
  t.add("lease keep-alive --once L2 after the expiry", b.keepalive(l2));
  t.add("lease timetolive L2 after the expiry", b.timetolive(l2));
  t.add("lease revoke L2 after the expiry", b.revoke(l2));
}

void script_single_member(EtcdBackend& b, Transcript& t) {
  t.add("1 member: delete of an absent key (a write through Raft)", b.del("kv/none"), "");
  std::string a;
  const Millis t0 = b.now();
  b.grant(2, a);
  t.add("1 member: lease grant 2", a, "");
  b.sleep_until(t0 + 4500ms);  // the lease expired and the lessor revoked it
  const std::string got = b.get("kv/none");
  t.add("1 member: still serving after the lessor revoked the expired lease", got.rfind("rev", 0) == 0 ? "yes" : "no",
        got);
}

// --- two mutex acquisitions ----------------------------------------------------------------

/// The mutex steps: the real side uses `etcdctl lock` (concurrency.Mutex),
/// the model side the same protocol by hand.
struct MutexObservation {
  std::string a_key;  ///< "mx/<A's lease>" check
  std::int64_t a_create = 0;
  std::int64_t a_header = 0;
  std::string b_key;
  std::int64_t keys_after_b = 0;
  std::int64_t b_create = 0;
  bool b_waiting = false;
  std::int64_t unlock_rev = 0;
  std::int64_t b_acquired_header = 0;
  std::int64_t b_acquired_create = 0;
  std::int64_t watch_delete_rev = 0;
};

void record_mutex(const MutexObservation& o, Transcript& t) {
  t.add("A: lock mx: A's key", o.a_key);
  t.add("A: acquired: create_revision of A's key / header revision",
        fmt::format("create {} rev {}", o.a_create, o.a_header));
  t.add("B: lock mx: B's key", o.b_key);
  t.add("B: enqueued: keys under mx/, B's create_revision",
        fmt::format("{} keys, B create {}", o.keys_after_b, o.b_create));
  t.add("B: waits while A holds the lock", o.b_waiting ? "waiting" : "acquired (wrong)");
  t.add("A: unlock (delete A's key): revision", fmt::format("rev {}", o.unlock_rev));
  t.add("B: acquired after A's unlock: B's create_revision / header revision",
        fmt::format("create {} rev {}", o.b_acquired_create, o.b_acquired_header));
  t.add("create revisions in acquisition order (A < B)", o.a_create < o.b_acquired_create ? "A < B" : "not ordered");
  t.add("watch A's key from B's create revision: the DELETE event's revision",
        fmt::format("delete at rev {}", o.watch_delete_rev));
}

/// Waits until `file` holds one complete JSON line; nullopt on timeout.
std::optional<json> read_json_line(const fs::path& file, Millis timeout, Child& c) {
  const auto end = Clock::now() + timeout;
  while (Clock::now() < end) {
    const std::string s = read_file(file);
    const auto nl = s.find('\n');
    if (nl != std::string::npos) return json::parse(s.substr(0, nl));
    if (!c.running() && s.empty()) return std::nullopt;
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

MutexObservation real_mutex(RealEtcd& e) {
  MutexObservation o;
  const fs::path dir = e.dir();
  std::vector<std::string> lock = e.base_args();
  lock.insert(lock.end(), {"lock", "mx"});
  Child a(lock, dir / "lock-a.out", dir / "lock-a.err");
  auto ja = read_json_line(dir / "lock-a.out", 15000ms, a);
  if (!ja) throw std::runtime_error("etcdctl lock (A) did not acquire: " + read_file(dir / "lock-a.err"));
  const auto& akv = (*ja)["kvs"][0];
  const std::string a_key = base64_decode(akv["key"].get<std::string>());
  const std::int64_t a_lease = akv["lease"].get<std::int64_t>();
  o.a_key = a_key == fmt::format("mx/{:x}", a_lease) ? "mx/<A's lease id, hex>" : a_key;
  o.a_create = akv["create_revision"].get<std::int64_t>();
  o.a_header = (*ja)["header"]["revision"].get<std::int64_t>();

  Child b(lock, dir / "lock-b.out", dir / "lock-b.err");
  // B has enqueued once its key exists under the prefix.
  std::string err;
  std::optional<json> keys;
  const auto end = Clock::now() + 15s;
  while (Clock::now() < end) {
    keys = e.ctl({"get", "mx/", "--prefix"}, err);
    if (keys && keys->value("count", 0) >= 2) break;
    std::this_thread::sleep_for(20ms);
  }
  if (!keys || keys->value("count", 0) < 2) throw std::runtime_error("etcdctl lock (B) did not enqueue");
  o.keys_after_b = keys->value("count", 0);
  for (const auto& kv : (*keys)["kvs"]) {
    const std::string k = base64_decode(kv["key"].get<std::string>());
    if (k == a_key) continue;
    o.b_create = kv["create_revision"].get<std::int64_t>();
    o.b_key = k == fmt::format("mx/{:x}", kv["lease"].get<std::int64_t>()) ? "mx/<B's lease id, hex>" : k;
  }
  // B must still be waiting 500 ms later: it prints only once it holds the lock.
  std::this_thread::sleep_for(500ms);
  o.b_waiting = read_file(dir / "lock-b.out").empty() && b.running();

  a.signal(SIGTERM);  // etcdctl lock unlocks on SIGTERM
  auto jb = read_json_line(dir / "lock-b.out", 15000ms, b);
  if (!jb)
    throw std::runtime_error("etcdctl lock (B) did not acquire after A's unlock: " + read_file(dir / "lock-b.err"));
  a.wait_for(5000ms);
  o.b_acquired_create = (*jb)["kvs"][0]["create_revision"].get<std::int64_t>();
  o.b_acquired_header = (*jb)["header"]["revision"].get<std::int64_t>();
  o.unlock_rev = o.b_acquired_header;  // nothing else wrote in between
  auto after = e.ctl({"get", "mx/", "--prefix"}, err);
  if (after) o.unlock_rev = std::min<std::int64_t>(o.unlock_rev, (*after)["header"]["revision"].get<std::int64_t>());

  std::vector<std::string> watch = e.base_args();
  watch.insert(watch.end(), {"watch", fmt::format("--rev={}", o.b_create), a_key});
  Child w(watch, dir / "watch.out", dir / "watch.err");
  auto jw = read_json_line(dir / "watch.out", 15000ms, w);
  if (jw) {
    for (const auto& ev : (*jw)["Events"]) {
      if (ev.value("type", 0) == 1) o.watch_delete_rev = ev["kv"]["mod_revision"].get<std::int64_t>();
    }
  }
  w.stop(1000ms);
  b.signal(SIGTERM);
  b.wait_for(5000ms);
  return o;
}

MutexObservation model_mutex(ModelEtcdBackend& m) {
  MutexObservation o;
  auto grant = [&] {
    auto req = ModelEtcdBackend::request(etcd::ReqKind::kLeaseGrant);
    req->ttl = 60s;  // etcdctl lock's session TTL
    return m.call(req)->lease;
  };
  auto txn = [&](std::int64_t lease) {
    auto req = ModelEtcdBackend::request(etcd::ReqKind::kLockTxn);
    req->key = fmt::format("mx/{:x}", lease);
    req->lease = lease;
    req->prefix = "mx/";
    return *m.call(req);
  };
  const std::int64_t la = grant();
  const etcd::Response ra = txn(la);
  o.a_key = ra.kv && ra.kv->key == fmt::format("mx/{:x}", la) ? "mx/<A's lease id, hex>" : "?";
  o.a_create = ra.kv ? ra.kv->create_revision : -1;
  o.a_header = ra.header_revision;
  const bool a_owner = ra.owner && ra.kv && ra.owner->create_revision == ra.kv->create_revision;
  if (!a_owner) o.a_key += " (not the owner)";

  const std::int64_t lb = grant();
  const etcd::Response rb = txn(lb);
  o.b_key = rb.kv && rb.kv->key == fmt::format("mx/{:x}", lb) ? "mx/<B's lease id, hex>" : "?";
  o.b_create = rb.kv ? rb.kv->create_revision : -1;
  // waitDeletes: the last key created before ours, then a watch on it.
  auto last = ModelEtcdBackend::request(etcd::ReqKind::kLastCreated);
  last->prefix = "mx/";
  last->revision = o.b_create - 1;
  const etcd::Response lr = *m.call(last);
  const bool b_owner = rb.owner && rb.kv && rb.owner->create_revision == rb.kv->create_revision;
  o.b_waiting = !b_owner && lr.kv.has_value();
  // watch the key before ours from the header revision of that query
  // (concurrency waitDelete: Watch(key, WithRev(resp.Header.Revision))).
  auto watch = ModelEtcdBackend::request(etcd::ReqKind::kWatch);
  watch->key = lr.kv ? lr.kv->key : "";
  watch->revision = lr.header_revision;
  watch->watch_id = 1;
  m.send(watch);
  // Both keys exist (the model has no prefix count: one Get each).
  auto get = [&](const std::string& key, bool lock_check) {
    auto req = ModelEtcdBackend::request(etcd::ReqKind::kGet);
    req->key = key;
    req->lock_check = lock_check;
    return *m.call(req);
  };
  o.keys_after_b =
      (get(fmt::format("mx/{:x}", la), false).kv ? 1 : 0) + (get(fmt::format("mx/{:x}", lb), false).kv ? 1 : 0);
  m.sleep(500ms);
  o.b_waiting = o.b_waiting && m.inbox().events.empty();

  // A unlocks: delete A's key.
  auto del = ModelEtcdBackend::request(etcd::ReqKind::kDelete);
  del->key = fmt::format("mx/{:x}", la);
  o.unlock_rev = m.call(del)->header_revision;
  const Millis deleted_at = m.now();
  while (m.inbox().events.empty() && m.now() - deleted_at < 5000ms) m.sleep(1ms);
  o.watch_delete_rev = m.inbox().events.empty() ? -1 : m.inbox().events.front().revision;
  // B's final check of its own key (the Mutex's Get after waitDeletes).
  const etcd::Response mine = get(fmt::format("mx/{:x}", lb), true);
  o.b_acquired_create = mine.kv ? mine.kv->create_revision : -1;
  o.b_acquired_header = mine.header_revision;
  return o;
}

// --- the tests -------------------------------------------------------------------------------

TEST(EtcdConformance, DeviationList) { announce(); }

TEST(EtcdConformance, RevisionsAfterPutsDeletesAndNoOpTransactions) { run_both(script_revisions); }

TEST(EtcdConformance, PlainPutOverwritesAKey) { run_both(script_put); }

TEST(EtcdConformance, GeneralTxnComparesBranchesAndRefusals) { run_both(script_txn); }

TEST(EtcdConformance, LeaseMinimumTtlKeepaliveExpiryAndRevoke) { run_both(script_leases); }

/// Runs the model side in a child process, so that a crash of the model does
/// not take the test binary with it. The child streams each step as it is
/// recorded; the steps a crash cut off are filled in, named after the real
/// transcript, with "crashed (signal N)".
Transcript run_model_in_child(int members, const Script& script, const Transcript& real) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::cout << std::flush;
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    Transcript t("model");
    t.on_add = [fd = fds[1]](const Step& s) {
      const std::string line = s.name + '\x1f' + s.answer + '\x1f' + s.detail + '\x1f' + s.deviation + '\n';
      if (::write(fd, line.data(), line.size()) < 0) ::_exit(3);
    };
    {
      ModelEtcdBackend m(members);
      m.run([&](ModelEtcdBackend& b) { script(b, t); });
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string data;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  Transcript model("model");
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::size_t nl = data.find('\n', pos);
    const std::string line = data.substr(pos, nl - pos);
    pos = nl == std::string::npos ? data.size() : nl + 1;
    std::vector<std::string> f;
    std::size_t p = 0;
    for (;;) {
      const std::size_t q = line.find('\x1f', p);
      f.push_back(line.substr(p, q == std::string::npos ? std::string::npos : q - p));
      if (q == std::string::npos) break;
      p = q + 1;
    }
    f.resize(4);
    model.append(Step{f[0], f[1], f[2], f[3], false});
  }
  if (WIFSIGNALED(st)) {
    const std::string crashed = fmt::format("crashed (signal {})", WTERMSIG(st));
    for (std::size_t i = model.steps().size(); i < real.steps().size(); ++i) {
      const Step& r = real.steps()[i];
      model.append(Step{r.name, crashed, "the model's process died", r.deviation, false});
    }
  }
  return model;
}

TEST(EtcdConformance, ASingleMemberClusterAnswersWritesAndSurvivesLeaseExpiry) {
  announce();
  Transcript real("etcd");
  {
    TempDir dir("etcd");
    RealEtcd e(dir.path());
    RealEtcdBackend b(e);
    script_single_member(b, real);
  }
  const Transcript model = run_model_in_child(1, script_single_member, real);
  compare_transcripts(real, model, etcd_deviations());
}

TEST(EtcdConformance, TwoMutexAcquisitionsAreOrderedByCreateRevision) {
  announce();
  Transcript real("etcd");
  {
    TempDir dir("etcd");
    RealEtcd e(dir.path());
    record_mutex(real_mutex(e), real);
  }
  Transcript model("model");
  ModelEtcdBackend m;
  m.run([&](ModelEtcdBackend& b) { record_mutex(model_mutex(b), model); });
  compare_transcripts(real, model, etcd_deviations());
}

}  // namespace
}  // namespace fencesim::conformance
