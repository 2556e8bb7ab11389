// loader/section_clients.cpp — the `clients` section: each client, its policies and its workload (docs/FORMAT.md
// "Clients", "Workloads").
//
// `count` is expanded here (file syntax); the rules are validate_clients'
// (models/validate.cpp).
#include "loader/sections.hpp"

#include "models/lock_service.hpp"

namespace fencesim::loading {

namespace {

struct ClientsSection {
  const json& root_;
  Scenario& s_;
  ScenarioSource& src_;

  void load_clients() {
    const json& v = require(root_, "", "clients", "an array of at least one client");
    if (!v.is_array()) fail("clients", "expected an array of clients, got " + describe(v));
    if (v.size() > static_cast<std::size_t>(Limits::kMaxClients)) fail("clients", too_many_clients());
    // (No clients at all: validate_clients.)
    std::size_t total = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string path = index_path("clients", i);
      const json& c = v[i];
      expect_object(c, path, "a client");
      check_keys(c, path, kClientKeys, "a client");
      const std::string name = get_string(require(c, path, "name", "the client's name, e.g. \"A\""),
                                          key_path(path, "name"), LoaderLimits::kMaxTextLength);
      const int count = client_count(c, path, total);
      const ClientSpec spec = load_client(c, path);
      // `count` is file syntax: N clients name-0 … name-(N-1).
      for (int k = 0; k < count; ++k) {
        ClientSpec copy = spec;
        copy.name = count == 1 ? name : name + "-" + std::to_string(k);
        s_.clients.push_back(std::move(copy));
        src_.clients.push_back(ScenarioSource::Client{i, count > 1});
      }
    }
  }

  static std::string too_many_clients() {
    return "too many clients: at most " + std::to_string(Limits::kMaxClients) + " after count expansion";
  }

  /// The client's `count`, with the running total bounded before anything is expanded.
  static int client_count(const json& c, const std::string& path, std::size_t& total) {
    int count = 1;
    if (const json* x = find(c, "count"))
      count = static_cast<int>(get_int(*x, key_path(path, "count"), Ranges::kCount));
    total += static_cast<std::size_t>(count);
    if (total > static_cast<std::size_t>(Limits::kMaxClients)) {
      // Point at this client's `count` only if it has one; else at the
      // client that tipped the total over (the counts are earlier).
      fail(find(c, "count") != nullptr ? key_path(path, "count") : path,
           too_many_clients() + " (this client makes " + std::to_string(total) + ")");
    }
    return count;
  }

  /// One entry of clients[] but its name and count.
  ClientSpec load_client(const json& c, const std::string& path) {
    ClientSpec spec;
    auto kp = [&](std::string_view k) { return key_path(path, k); };
    if (const json* x = find(c, "start")) spec.start = get_duration(*x, kp("start"));
    if (const json* x = find(c, "fencing")) spec.fencing = get_bool(*x, kp("fencing"));
    if (const json* x = find(c, "renew")) spec.renew = get_bool(*x, kp("renew"));
    // Left out: a third of the TTL in effect (resolve_defaults).
    spec.renew_interval = kResolveRenewInterval;
    if (const json* x = find(c, "renew_interval")) spec.renew_interval = get_duration(*x, kp("renew_interval"));
    if (const json* x = find(c, "renew_clock")) {
      spec.renew_clock = get_word<sim::ClockKind>(*x, kp("renew_clock"));
    }
    if (const json* x = find(c, "retry_interval")) spec.retry_interval = get_duration(*x, kp("retry_interval"));
    if (const json* x = find(c, "command_timeout")) spec.command_timeout = get_duration(*x, kp("command_timeout"));
    if (const json* x = find(c, "resource")) spec.resource = get_string(*x, kp("resource"), 256);
    if (const json* x = find(c, "lock")) {
      spec.lock = get_string(*x, kp("lock"), 1024);
      if (spec.lock.empty()) fail(kp("lock"), "the lock name must not be empty", "leave \"lock\" out for lock.key");
    }
    load_client_policies(c, path, spec);
    if (const json* x = find(c, "ttl")) spec.ttl = get_duration(*x, kp("ttl"), kPositive);
    if (const json* x = find(c, "library")) {
      spec.library = get_word<ClientLibrary>(*x, kp("library"));
      if (auto why = library_problem(s_, *spec.library)) fail(kp("library"), why->first, why->second);
      if (spec.library == ClientLibrary::kJetcd) {
        for (const char* k : {"renew_interval", "renew_clock"}) {
          if (find(c, k) == nullptr) continue;
          fail(kp(k), jetcd_keepalive_setting_message(k), "remove it, or use \"library\": \"go\"");
        }
      }
    }
    if (const json* x = find(c, "library_version")) {
      spec.library_version = get_string(*x, kp("library_version"), 32);
      if (spec.library_version.empty()) {
        fail(kp("library_version"), "the version must not be empty", "leave \"library_version\" out for the default");
      }
    }
    if (const json* x = find(c, "retry_strategy")) {
      spec.retry_strategy = get_word<RetryStrategy>(*x, kp("retry_strategy"));
    }
    if (const json* x = find(c, "tries")) spec.tries = static_cast<int>(get_int(*x, kp("tries"), Ranges::kTries));
    if (const json* x = find(c, "connection_policy")) {
      spec.connection_policy = get_word<ConnectionPolicy>(*x, kp("connection_policy"));
    }
    if (const json* x = find(c, "program")) {
      // The program is the client: it has no built-in workload.
      if (find(c, "workload") != nullptr) {
        fail(kp("workload"), "a client with \"program\" has no built-in workload: the program is the client",
             "remove \"workload\" (or \"program\", for a built-in client)");
      }
      spec.program = load_program(*x, kp("program"));
      return spec;
    }
    spec.workload = load_workload(
        require(c, path, "workload", "the client's workload, e.g. {\"kind\": \"counter\"}, or a \"program\""),
        kp("workload"));
    return spec;
  }

  /// check_lease_before_write, on_lease_loss, lease_loss_after (their rules: validate_clients).
  static void load_client_policies(const json& c, const std::string& path, ClientSpec& spec) {
    auto kp = [&](std::string_view k) { return key_path(path, k); };
    if (const json* x = find(c, "check_lease_before_write")) {
      if (x->is_boolean() && !x->get<bool>()) {
        spec.check_lease_before_write.reset();
      } else if (x->is_string()) {
        spec.check_lease_before_write = get_duration(*x, kp("check_lease_before_write"));
      } else {
        fail(kp("check_lease_before_write"),
             "expected false or a duration margin such as \"500ms\", got " + describe(*x),
             x->is_boolean() ? "write the margin the check keeps below the TTL, e.g. \"0s\"" : "");
      }
    }
    if (const json* x = find(c, "on_lease_loss")) {
      spec.on_lease_loss = get_word<LeaseLossPolicy>(*x, kp("on_lease_loss"));
    }
    if (const json* x = find(c, "lease_loss_after")) {
      if (x->is_string() && x->get_ref<const std::string&>() == "none") {
        spec.lease_loss_after.reset();
      } else if (x->is_string()) {
        spec.lease_loss_after = get_duration(*x, kp("lease_loss_after"), kPositive);
      } else {
        fail(kp("lease_loss_after"), "expected \"none\" or a duration such as \"10s\", got " + describe(*x));
      }
    }
  }

  WorkloadSpec load_workload(const json& v, const std::string& path) {
    expect_object(v, path, "a workload");
    WorkloadSpec w;
    const json& kind = require(v, path, "kind", or_quoted(word_list<WorkloadKind>()));
    w.kind = get_word<WorkloadKind>(kind, key_path(path, "kind"));
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() == "block" && w.kind != WorkloadKind::kSequenceAllocator) {
        fail(key_path(path, "block"),
             "\"block\" applies only to the sequence_allocator workload, not to " + quote(word(w.kind)));
      }
    }
    check_keys(v, path, kWorkloadKeys, "a workload");
    if (const json* x = find(v, "block")) w.block = get_int(*x, key_path(path, "block"), Ranges::kBlock);
    if (const json* x = find(v, "work")) {
      // A duration, or a range {"min", "max"} drawn per iteration.
      const auto [lo, hi] = get_range(*x, key_path(path, "work"), kNonNegative);
      w.work = lo;
      if (x->is_object() && hi != lo) w.work_max = hi;  // an empty range is a fixed value
    }
    if (const json* x = find(v, "iterations")) {
      w.iterations = static_cast<int>(get_int(*x, key_path(path, "iterations"), Ranges::kIterations));
    }
    if (const json* x = find(v, "think")) {
      const auto [lo, hi] = get_range(*x, key_path(path, "think"), kNonNegative);
      w.think = lo;
      if (x->is_object() && hi != lo) w.think_max = hi;
    }
    // Only with a cas resource: validate_clients.
    if (const json* x = find(v, "retries")) {
      w.retries = static_cast<int>(get_int(*x, key_path(path, "retries"), Ranges::kRetries));
    }
    if (const json* x = find(v, "retry_backoff")) {
      w.retry_backoff = get_word<RetryBackoff>(*x, key_path(path, "retry_backoff"));
    }
    return w;
  }
};

}  // namespace

/// clients[].program and resource.program (docs/FORMAT.md "Program clients");
/// `cwd` stays as written: load_scenario_file joins it to the file's folder.
ProgramSpec load_program(const json& v, const std::string& path) {
  expect_object(v, path, "a program");
  check_keys(v, path, kProgramKeys, "a program");
  ProgramSpec p;
  const json& cmd = require(v, path, "command", "the program's argv, e.g. [\"python3\", \"client.py\"]");
  if (!cmd.is_array() || cmd.empty()) {
    fail(key_path(path, "command"), "expected a non-empty array of strings, got " + describe(cmd),
         "e.g. [\"python3\", \"-m\", \"fencesim\", \"client.py\"]");
  }
  if (cmd.size() > 256) fail(key_path(path, "command"), "at most 256 words");
  for (std::size_t i = 0; i < cmd.size(); ++i) {
    p.command.push_back(get_string(cmd[i], index_path(key_path(path, "command"), i), 4096));
    if (p.command.back().empty() || p.command.back().find('\0') != std::string::npos) {
      fail(index_path(key_path(path, "command"), i), "a word of the command must be non-empty text without NUL");
    }
  }
  if (const json* e = find(v, "env")) {
    const std::string ep = key_path(path, "env");
    expect_object(*e, ep, "an object of environment variables, e.g. {\"PYTHONPATH\": \"sdk/python\"}");
    if (e->size() > 256) fail(ep, "at most 256 variables");
    for (auto it = e->begin(); it != e->end(); ++it) {
      const std::string& k = it.key();
      if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos) {
        fail(key_path(ep, k), "an environment variable's name must be non-empty, without '=' or NUL");
      }
      p.env[k] = get_string(it.value(), key_path(ep, k), 65536);
      if (p.env[k].find('\0') != std::string::npos) fail(key_path(ep, k), "the value must not contain NUL");
    }
  }
  p.cwd = ".";
  if (const json* x = find(v, "cwd")) {
    p.cwd = get_string(*x, key_path(path, "cwd"), 4096);
    if (p.cwd.empty()) fail(key_path(path, "cwd"), "must not be empty", "leave \"cwd\" out for the scenario's folder");
  }
  if (const json* x = find(v, "yield_timeout")) {
    p.yield_timeout = get_duration(*x, key_path(path, "yield_timeout"), kPositive);
    if (p.yield_timeout > std::chrono::hours(1)) {
      fail(key_path(path, "yield_timeout"), "at most 1h: it is the real time fencesim waits for one answer");
    }
  }
  return p;
}

void load_clients(const json& root, Scenario& s, ScenarioSource& src) { ClientsSection{root, s, src}.load_clients(); }

}  // namespace fencesim::loading
