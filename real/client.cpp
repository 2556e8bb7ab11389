// real/client.cpp — the resource and the client loop (real/client.hpp).
//   PostgreSQL 15: one row; the fencing check is the WHERE clause of one
//     UPDATE (read committed: a concurrent UPDATE re-evaluates the clause on
//     the newest row version, so check and write are atomic).
#include "real/client.hpp"

#include <nlohmann/json.hpp>

#include "models/program/channel.hpp"
#include "models/workloads/arithmetic.hpp"
#include "real/locks.hpp"

namespace fencesim::real {

namespace {

struct Row {
  bool accepted = false;
  std::int64_t value = 0, version = 0, last_written = 0, last_seen = 0, prev_value = 0;
  std::string tag, prev_tag;
};

class Resource {
 public:
  Resource(Run& r, const std::string& client, Sockets& owner) : run_(r) {
    const std::string conninfo = fmt::format("host=127.0.0.1 port={} user=fencesim dbname={} connect_timeout=5",
                                             run_.dial(client, "resource", run_.pg->port), run_.pg_db);
    pg_.c = PQconnectdb(conninfo.c_str());
    if (PQstatus(pg_.c) != CONNECTION_OK) {
      throw std::runtime_error(std::string("fencesim-real: cannot connect to PostgreSQL: ") + PQerrorMessage(pg_.c));
    }
    pg_.register_in(owner);
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

// The values written and the outcomes' words are the model's
// (models/workloads/arithmetic.hpp); the random draws are the runner's own.

Duration draw(Run& run, Duration lo, const std::optional<Duration>& hi) {
  if (!hi || *hi <= lo) return lo;
  std::lock_guard<std::mutex> l(run.rng_mu);
  std::uniform_int_distribution<std::int64_t> d(lo.count(), hi->count());
  return Duration{d(run.rng)};
}

/// The wait before CAS retry `k` (0 for the first): the model's rule
/// (workloads::cas_retry_wait, RegisterWorkload::retry_wait) with the
/// runner's own random numbers.
Duration cas_retry_wait(Run& run, const WorkloadSpec& w, Duration base, int k) {
  return workloads::cas_retry_wait(w, base, k, [&run](Duration lo, Duration hi) { return draw(run, lo, hi); });
}

enum class Step { kDone, kStop, kCrashed };

/// Records the end of iteration `rec` (its outcome; done, if a success)
/// unless the run has ended (kStop) or the client crashed since `epoch`
/// (kCrashed); nullopt when recorded.
std::optional<Step> finish_iteration(ClientState& c, std::size_t rec, bool success, const std::string& outcome,
                                     int epoch) {
  Run& run = c.run;
  std::lock_guard<std::mutex> g(run.hmu);
  const Time now = run.tb.now();
  if (!run.in_run(now)) return Step::kStop;
  if (c.gate.epoch() != epoch) return Step::kCrashed;
  IterationRecord& it = run.h.iterations[rec];
  if (success) {
    it.success = true;
    it.done = now;
  }
  it.outcome = outcome;
  c.iteration.reset();
  return std::nullopt;
}

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
    run.h.iterations.push_back(
        IterationRecord{c.spec.name, index, now, std::nullopt, std::nullopt, false, "started", std::nullopt});
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
    const std::int64_t value = workloads::next_register_value(w, seen->value);
    const auto refused =
        res.write(c, index, lease->value, token, *seen, value, w.kind == WorkloadKind::kWriter ? c.spec.name : "");
    if (!c.gate.pass(run.stop)) return Step::kStop;
    if (crashed()) return Step::kCrashed;
    if (!refused) {
      outcome = "write timed out";
    } else if (refused->empty()) {
      success = true;
      outcome = workloads::register_success_text(w, seen->value, seen->tag, value);
    } else {
      outcome = "write rejected: " + *refused;
      conflict = run.s.resource.kind == ResourceKind::kCas;
    }
    if (!conflict || retries >= w.retries) break;
    if (!c.sleep_for(cas_retry_wait(run, w, c.spec.retry_interval, retries))) return Step::kStop;
    ++retries;
    if (crashed()) return Step::kCrashed;
  }
  outcome += workloads::retries_suffix(retries);
  if (const auto step = finish_iteration(c, rec, success, outcome, epoch)) return *step;
  c.lock->release();
  return crashed() ? Step::kCrashed : Step::kDone;
}

}  // namespace

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

// ------------------------------------------------------- program clients --

namespace {

using pjson = nlohmann::json;

std::optional<std::int64_t> token_of(const pjson& j) {
  const auto t = j.find("token");
  return t != j.end() && t->is_number_integer() ? std::optional(t->get<std::int64_t>()) : std::nullopt;
}

/// held / released / lost.
void program_belief(ClientState& c, const std::string& type, const pjson& j, Time now) {
  Run& run = c.run;
  if (type == "held") {
    const std::string value = j.value("value", "");
    const std::optional<std::int64_t> token = token_of(j);
    {
      // The runner does not see the program's commands: its belief is
      // when the grant is recorded (a few ms after the server's).
      std::lock_guard<std::mutex> g(run.hmu);
      if (run.in_run(now)) {
        run.h.grant(now, c.spec.name, value, token, !run.etcd.empty() ? run.etcd.front().name : std::string("redis-0"));
      }
      run.live.emplace(value, Clock::now());
    }
    c.begin_belief(RealLock::Lease{value, token}, now);
  } else if (type == "released") {
    {
      std::lock_guard<std::mutex> g(run.hmu);
      run.released.insert(c.lease_value);
    }
    c.end_belief("release", false);
  } else {
    c.end_belief(j.value("reason", "lease lost"), true);
  }
}

/// iteration start / acquired / end.
void program_iteration(ClientState& c, const pjson& j, Time now) {
  Run& run = c.run;
  std::lock_guard<std::mutex> g(run.hmu);
  const std::string ev = j.value("event", "");
  if (ev == "start" && run.in_run(now)) {
    const auto index = std::count_if(run.h.iterations.begin(), run.h.iterations.end(),
                                     [&](const IterationRecord& r) { return r.client == c.spec.name; });
    run.h.iterations.push_back(
        IterationRecord{c.spec.name, static_cast<int>(index), now, std::nullopt, std::nullopt, false, "started", now});
    c.iteration = run.h.iterations.size() - 1;
  } else if (ev == "acquired" && c.iteration) {
    run.h.iterations[*c.iteration].acquired = now;
  } else if (ev == "end" && c.iteration) {
    IterationRecord& r = run.h.iterations[*c.iteration];
    r.success = j.value("success", false);
    r.outcome = j.value("outcome", r.success ? "ok" : "failed");
    if (r.success) r.done = now;
    c.iteration.reset();
  }
}

/// A resource read or write on the PostgreSQL row; the reply line.
std::string program_resource(ClientState& c, Resource& res, const pjson& j) {
  const pjson id = j.value("id", pjson());
  int iteration = 0;
  {
    std::lock_guard<std::mutex> g(c.run.hmu);
    if (c.iteration) iteration = c.run.h.iterations[*c.iteration].index;
  }
  pjson result;
  if (j.value("op", "") == "read") {
    std::string failure;
    const auto seen = res.read(c, iteration, c.lease_value, token_of(j), failure);
    result = seen ? pjson{{"accepted", true},
                          {"value", seen->value},
                          {"version", seen->version},
                          {"tag", seen->tag},
                          {"reason", ""}}
                  : pjson{{"accepted", false}, {"reason", failure}};
  } else {
    const Resource::Seen seen{j.value("read_value", std::int64_t{0}), j.value("expected_version", std::int64_t{0}), ""};
    const auto reason = res.write(c, iteration, c.lease_value, token_of(j), seen, j.value("value", std::int64_t{0}),
                                  j.value("tag", std::string()));
    if (!reason) return pjson{{"type", "reply"}, {"id", id}, {"error", "timeout"}}.dump();
    result = pjson{{"accepted", reason->empty()}, {"reason", *reason}, {"value", j.value("value", 0)}};
  }
  return pjson{{"type", "reply"}, {"id", id}, {"result", result}}.dump();
}

/// One line of a program under fencesim-real; its answer ("" for none).
std::string program_line(ClientState& c, Resource& res, const pjson& j) {
  Run& run = c.run;
  const std::string type = j.value("type", "");
  const Time now = run.tb.now();
  if (type == "held" || type == "released" || type == "lost") {
    program_belief(c, type, j, now);
  } else if (type == "note") {
    std::lock_guard<std::mutex> g(run.hmu);
    if (run.in_run(now)) run.h.note(now, c.spec.name, "program", j.value("text", ""));
  } else if (type == "iteration") {
    program_iteration(c, j, now);
  } else if (type == "resource") {
    return program_resource(c, res, j);
  } else if (type == "yield") {
    c.program_done = true;  // its main has returned (the SDKs' real backends send one yield then)
  } else if (j.contains("id")) {
    // Timers, now and service requests go to real servers and real time here.
    return pjson{{"type", "reply"}, {"id", j["id"]}, {"error", "not under fencesim-real"}}.dump();
  }
  return "";
}

/// Where the program finds the service, through the client's links (so
/// link faults reach it): FENCESIM_REDIS=host:port of the primary, or
/// FENCESIM_ETCD=host:port of etcd-0, etcd-1, … in member order; with
/// Sentinel also FENCESIM_SENTINELS (each sentinel) and
/// FENCESIM_REDIS_PORTS=real:link,… (a server's port as Sentinel names it
/// → the client's link to that server).
std::map<std::string, std::string> service_address(ClientState& c) {
  Run& run = c.run;
  auto links = [&](const std::vector<RedisProc>& servers, bool pairs) {
    std::string out;
    for (const RedisProc& m : servers) {
      const int link = run.dial(c.spec.name, m.name, m.port);
      out +=
          (out.empty() ? "" : ",") + (pairs ? fmt::format("{}:{}", m.port, link) : fmt::format("127.0.0.1:{}", link));
    }
    return out;
  };
  if (!run.etcd.empty()) return {{"FENCESIM_ETCD", links(run.etcd, false)}};  // the runner started etcd
  const auto port = run.primary_port(c.spec.name);
  if (!port) throw std::runtime_error("no Redis primary to give the program");
  const int link = run.dial(c.spec.name, run.redis_name_of_port(*port), *port);
  std::map<std::string, std::string> env{{"FENCESIM_REDIS", "127.0.0.1:" + std::to_string(link)}};
  if (!run.sentinels.empty()) {
    env["FENCESIM_SENTINELS"] = links(run.sentinels, false);
    env["FENCESIM_REDIS_PORTS"] = links(run.redis, true);
  }
  return env;
}

/// Starts the program; its hello is read, nothing more.
std::unique_ptr<program::Channel> start_program(ClientState& c) {
  const ProgramSpec& p = *c.spec.program;
  program::Launch l{p.command,         p.env, p.cwd, p.yield_timeout, c.spec.name, "client " + c.spec.name, "real",
                    service_address(c)};
  return program::launch(l);
}

/// The node names of the service, as a simulated run's init gives them.
pjson service_nodes(const Run& run) {
  pjson names = pjson::array();
  if (!run.etcd.empty()) {
    for (const RedisProc& m : run.etcd) names.push_back(m.name);
    return pjson{{"etcd", names}};
  }
  for (const RedisProc& m : run.redis) names.push_back(m.name);
  pjson nodes{{"redis", names}};
  if (!run.sentinels.empty()) {
    pjson sentinels = pjson::array();
    for (const RedisProc& m : run.sentinels) sentinels.push_back(m.name);
    nodes["sentinels"] = sentinels;
  }
  return nodes;
}

/// Serves a started program until it exits, crashes or the run stops.
void serve_program(ClientState& c, std::unique_ptr<program::Channel> ch, int restarts, int epoch) {
  Run& run = c.run;
  c.program_pid = ch->pid();
  c.program_done = false;
  Resource res(run, c.spec.name, c.sockets);
  pjson init{
      {"type", "init"},
      {"protocol", 1},
      {"client", c.spec.name},
      {"index", c.index},
      {"restarts", restarts},
      {"scenario", run.s.name},
      {"service", to_string(run.s.lock.service())},
      {"nodes", service_nodes(run)},
      {"lock",
       {{"key", run.s.lock.key}, {"ttl", run.s.lock.ttl.count()}, {"counter_key", redis_counter_key(run.s.lock)}}}};
  if (!run.sentinels.empty()) init["lock"]["sentinel_name"] = kSentinelName;
  ch->send(init.dump());
  std::string line;
  while (!run.stop && c.gate.epoch() == epoch) {
    const auto st = ch->poll_line(std::chrono::milliseconds(50), line);
    if (st == program::Channel::Poll::kExited) break;
    if (st == program::Channel::Poll::kNothing) continue;
    const pjson j = pjson::parse(line, nullptr, false);
    if (!j.is_object()) {
      run.say(c.spec.name + ": the program broke the protocol: " + line.substr(0, 200));
      break;
    }
    if (const std::string answer = program_line(c, res, j); !answer.empty()) ch->send(answer);
  }
  c.program_pid = 0;
  if (run.stop && c.gate.epoch() == epoch) {
    try {
      ch->end(R"({"type":"end"})");
    } catch (const std::exception&) {
    }
  }
  const std::string out = ch->output();
  if (!out.empty()) run.say(c.spec.name + " (stderr): " + out.substr(out.size() > 2000 ? out.size() - 2000 : 0));
}

}  // namespace

void program_main(ClientState& c) {
  Run& run = c.run;
  try {
    // Started before time 0, as the built-in clients connect before it: the
    // interpreter's start-up is not part of the run.
    std::unique_ptr<program::Channel> first;
    try {
      first = start_program(c);
    } catch (const std::exception& e) {
      run.say(c.spec.name + ": " + e.what());
    }
    run.arrive_and_wait();
    if (!first) return;
    while (Clock::now() < run.tb.at(c.spec.start)) {
      if (!c.gate.sleep_until(run.tb.at(c.spec.start), run.stop)) return;
    }
    for (int restarts = 0; !run.stop; ++restarts) {
      if (!c.gate.pass(run.stop)) return;  // down after a crash: until the restart
      const int epoch = c.gate.epoch();
      serve_program(c, restarts == 0 ? std::move(first) : start_program(c), restarts, epoch);
      if (c.gate.epoch() == epoch) return;  // it ended by itself, or the run stopped
    }
  } catch (const std::exception& e) {
    run.say(c.spec.name + ": " + e.what());
  }
}

}  // namespace fencesim::real
