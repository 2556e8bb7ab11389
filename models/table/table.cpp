// models/table/table.cpp — the lock table's database node and its
// descriptor (semantics and sources: table.hpp).
#include "models/table/table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/client/client.hpp"
#include "models/rules.hpp"
#include "models/words.hpp"
#include "sim/time.hpp"

namespace fencesim::table {

const char* to_string(Op op) {
  switch (op) {
    case Op::kInsert: return "INSERT";
    case Op::kAcquire: return "UPDATE (acquire)";
    case Op::kExtend: return "UPDATE (extend)";
    case Op::kUnlock: return "UPDATE (unlock)";
    case Op::kGet: return "GET";
    case Op::kCas: return "UPDATE (compare-and-set)";
  }
  return "?";
}

std::string Statement::describe() const {
  if (op == Op::kCas) return fmt::format("{} version {} holder {}", to_string(op), expected_version, holder);
  return fmt::format("{} {}", to_string(op), holder);
}

std::string Result::describe() const {
  return fmt::format("{} version {}{}", ok ? "OK" : "REFUSED", version, holder.empty() ? "" : " holder " + holder);
}

namespace {

class TableService final : public LockService, public sim::NodeBehaviour {
 public:
  TableService(sim::Simulation& s, History& h, const Scenario& sc, sim::NodeId node)
      : sim_(s), history_(h), lock_(sc.lock), spec_(sc.lock.table()), node_(s.node(node)) {
    node_.set_behaviour(this);
  }

  void start() override {}

  std::unique_ptr<client::LockClient> make_client(sim::Node& node, History& h, const ClientSpec& c,
                                                  std::size_t) override {
    return client::make_table_client(node, h, c, lock_, node_.id());
  }

  void on_message(const sim::Message& m) override {
    const auto* st = m.as<Statement>();
    if (st == nullptr) return;
    auto reply = sim::make_payload<Result>();
    reply->ok = execute(m, *st);
    reply->found = found_;
    reply->holder = holder_;
    reply->version = version_;
    reply->lease_duration = lease_duration_;
    node_.reply(m, reply);
  }

 private:
  Time db_now() const { return node_.clock(sim::ClockKind::kWall); }

  /// The statement's `now` and new lock_until: the request's (holder_clock)
  /// or the database's wall clock (db_clock).
  std::pair<Time, Time> times(const Statement& st) const {
    if (spec_.expiry == TableExpiry::kHolderClock) return {st.now, st.lock_until};
    const Time now = db_now();
    return {now, now + lock_.ttl};
  }

  bool execute(const sim::Message& m, const Statement& st) {
    const std::string client = sim_.node(m.from).name();
    switch (st.op) {
      case Op::kInsert: {
        if (found_) return false;  // duplicate key
        const auto [now, until] = times(st);
        (void)now;
        found_ = true;
        take(client, st, until, "");
        return true;
      }
      case Op::kAcquire: {
        if (!found_) return false;  // UPDATE of no row
        const auto [now, until] = times(st);
        const Time free_at = unlocked_ ? lock_until_ : lock_until_ + spec_.lock_delay;
        if (!(free_at <= now)) return false;
        take(client, st, until,
             fmt::format("{} acquired the record (lock_until {} <= now {}{})", client,
                         sim::format_duration(lock_until_), sim::format_duration(now),
                         !unlocked_ && spec_.lock_delay > Duration::zero()
                             ? " - lock_delay " + sim::format_duration(spec_.lock_delay)
                             : ""));
        return true;
      }
      case Op::kExtend: {
        const auto [now, until] = times(st);
        if (!found_ || holder_ != st.holder || !(lock_until_ > now)) return false;
        lock_until_ = until;
        ++version_;
        watch();
        return true;
      }
      case Op::kUnlock: {
        // holder_clock: `WHERE name = :name` (no locked_by condition).
        if (!found_ || (spec_.expiry == TableExpiry::kDbClock && holder_ != st.holder)) return false;
        const auto [now, until] = times(st);
        (void)until;
        const bool own = holder_ == st.holder && value_ == st.value;
        end_lease(
            own ? "unlocked" : fmt::format("unlocked by {} (ShedLock's unlock has no locked_by condition)", client),
            own ? LeaseEndCause::kReleased : LeaseEndCause::kReleasedBy, own ? "" : client);
        lock_until_ = now;
        unlocked_ = true;
        ++version_;
        ++gen_;
        return true;
      }
      case Op::kGet: return found_;
      case Op::kCas: return cas(client, st);
    }
    return false;
  }

  /// client-go's Update of the Lease object: a write conditioned on its
  /// resourceVersion (409 Conflict otherwise).
  bool cas(const std::string& client, const Statement& st) {
    if (version_ != st.expected_version) return false;  // 409 Conflict: the object has been modified
    found_ = true;
    ++version_;
    lease_duration_ = st.lease_duration;
    if (st.holder.empty()) {
      const bool own_value = st.value == value_;
      end_lease(own_value ? "released (holder cleared)" : "released by " + client,
                own_value ? LeaseEndCause::kReleased : LeaseEndCause::kReleasedBy, own_value ? "" : client);
      holder_.clear();
      value_.clear();
      return true;
    }
    if (st.value != value_) {
      end_lease(fmt::format("{} took the record over at version {}", client, version_), LeaseEndCause::kTakenOver,
                client);
      holder_ = st.holder;
      value_ = st.value;
      grant(client);
    }
    return true;
  }

  /// A new holder (insert or acquire): the previous lease ends, a grant.
  void take(const std::string& client, const Statement& st, Time until, const std::string& why) {
    if (why.empty()) {
      end_lease("record replaced", LeaseEndCause::kEnded);
    } else {
      end_lease(why, LeaseEndCause::kTakenOver, client);  // "B acquired the record (lock_until … <= now …)"
    }
    holder_ = st.holder;
    value_ = st.value;
    lock_until_ = until;
    unlocked_ = false;
    ++version_;
    grant(client);
    watch();
  }

  void grant(const std::string& client) {
    const std::optional<std::int64_t> token =
        spec_.token == TableToken::kVersion ? std::optional<std::int64_t>(version_) : std::nullopt;
    history_.grant(sim_.now(), client, value_, token, node_.name());
  }

  void end_lease(const std::string& reason, LeaseEndCause cause, const std::string& who = "") {
    if (value_.empty()) return;
    history_.lease_end(sim_.now(), value_, reason, cause, who);
  }

  /// db_clock: the lease ends when the database's wall clock reaches
  /// lock_until + lock_delay (nothing at the service decides it otherwise).
  void watch() {
    const std::uint64_t gen = ++gen_;
    if (spec_.expiry != TableExpiry::kDbClock) return;
    const Time at = lock_until_ + spec_.lock_delay;
    const std::string value = value_;
    sim_.observe_clock(node_.id(), sim::ClockKind::kWall, at, [this, gen, value] {
      if (gen != gen_ || value != value_) return;
      history_.lease_end(sim_.now(), value,
                         spec_.lock_delay > Duration::zero()
                             ? fmt::format("lock_until passed on db's wall clock, and the lock_delay of {} ran out",
                                           sim::format_duration(spec_.lock_delay))
                             : std::string("lock_until passed on db's wall clock"),
                         LeaseEndCause::kExpired);
    });
  }

  sim::Simulation& sim_;
  History& history_;
  LockSpec lock_;
  TableSpec spec_;
  sim::Node& node_;
  // The one lock record (durable: a crash keeps it).
  bool found_ = false;
  std::string holder_;  ///< locked_by / holderIdentity
  std::string value_;   ///< the lease value of the current holder's acquisition
  Time lock_until_{0};
  bool unlocked_ = false;  ///< the last change was an unlock: no lock_delay
  std::int64_t version_ = 0;
  Duration lease_duration_{0};
  std::uint64_t gen_ = 0;  ///< bumps with every new deadline
};

using namespace rules;  // problem, key, positive, … (models/rules.hpp)

/// The lock table (models/table/table.hpp).
Problem validate_table(const Scenario& s) {
  const TableSpec& t = s.lock.table();
  FENCESIM_CHECK(non_negative("lock.lock_delay", t.lock_delay));
  if (t.expiry == TableExpiry::kObserved && t.lock_delay > Duration::zero()) {
    return problem("lock.lock_delay",
                   "lock_delay needs a service that decides when a lease runs out (lock.expiry \"db_clock\" or "
                   "\"holder_clock\"); with \"observed\" each candidate decides it on its own clock, so the "
                   "table cannot hold a lock back after it",
                   "remove lock_delay, or use \"expiry\": \"db_clock\"");
  }
  return std::nullopt;
}

/// The lock table's "observed" expiry: client-go's NewLeaderElector refuses
/// a config without a RenewDeadline, with LeaseDuration <= RenewDeadline, or
/// with RenewDeadline <= JitterFactor (1.2) × RetryPeriod
/// (client-go tools/leaderelection/leaderelection.go NewLeaderElector).
Problem leader_election_client(const Scenario& s, const ClientSpec& c, const std::string& path) {
  if (s.lock.table().expiry != TableExpiry::kObserved) return std::nullopt;
  const std::string p = key(path, "lease_loss_after");
  if (!c.lease_loss_after) {
    return problem(p,
                   "with lock.expiry \"observed\" every client needs lease_loss_after: it is client-go's "
                   "RenewDeadline, after which a leader that could not renew stops leading (client-go refuses a "
                   "leader elector without one)",
                   "add \"lease_loss_after\": \"10s\" (client-go's default with a 15s lease duration)");
  }
  if (*c.lease_loss_after >= s.lock.ttl) {
    return problem(p, "lease_loss_after (RenewDeadline, " + fmt_d(*c.lease_loss_after) +
                          ") must be shorter than lock.ttl (LeaseDuration, " + fmt_d(s.lock.ttl) +
                          "), as client-go requires (\"leaseDuration must be greater than renewDeadline\")");
  }
  if (*c.lease_loss_after * 5 <= c.renew_interval * 6) {
    return problem(p, "lease_loss_after (RenewDeadline, " + fmt_d(*c.lease_loss_after) +
                          ") must be longer than 1.2 x renew_interval (RetryPeriod, " + fmt_d(c.renew_interval) +
                          "), as client-go requires (\"renewDeadline must be greater than retryPeriod*JitterFactor\")");
  }
  return std::nullopt;
}

class TableDescriptor final : public ServiceDescriptor {
 public:
  ServiceKind kind() const override { return ServiceKind::kTable; }
  std::string name() const override { return "table"; }
  std::string display_name() const override { return "lock table"; }

  std::vector<std::string> group_names() const override { return {"tables"}; }
  /// "tables": the one durable database node `db`.
  std::vector<NodeGroup> groups(const Scenario&) const override { return {NodeGroup{"tables", {"db"}}}; }

  bool hands_out_tokens(const Scenario& s) const override { return s.lock.table().token == TableToken::kVersion; }

  std::vector<std::string> lock_keys() const override { return {"expiry", "token", "lock_delay"}; }
  /// ShedLock for expiry holder_clock / db_clock, client-go for observed:
  /// the expiry decides the library, so a client may only name that one.
  std::vector<ClientLibrary> client_libraries() const override {
    return {ClientLibrary::kShedLock, ClientLibrary::kClientGo};
  }
  ClientLibrary default_library(const Scenario& s) const override {
    return s.lock.table().expiry == TableExpiry::kObserved ? ClientLibrary::kClientGo : ClientLibrary::kShedLock;
  }
  /// client-go's release lines around kubernetes#65094
  /// (models/client/table_client.cpp).
  std::vector<std::string> library_versions(ClientLibrary lib) const override {
    if (lib != ClientLibrary::kClientGo) return {};
    return {"8.0", "0.36"};
  }
  std::optional<ScenarioProblem> validate_client(const Scenario& s, const ClientSpec& c,
                                                 const std::string& path) const override {
    if (c.library && *c.library != default_library(s)) {
      const bool go = *c.library == ClientLibrary::kClientGo;
      return problem(key(path, "library"),
                     go ? "\"client-go\" is the library of lock.expiry \"observed\" (each candidate times the lease "
                          "on its own clock), and lock.expiry is " +
                              quote_text(word(s.lock.table().expiry))
                        : "\"shedlock\" is the library of lock.expiry \"holder_clock\" and \"db_clock\", and "
                          "lock.expiry is \"observed\"",
                     go ? "set lock.expiry to \"observed\", or leave \"library\" out"
                        : "leave \"library\" out: with \"observed\" the client is client-go");
    }
    return leader_election_client(s, c, path);
  }
  void read(KeyReader& in, LockSpec& l, ScenarioSource&) const override {
    TableSpec& t = l.table();
    if (const auto x = in.word<TableExpiry>("expiry")) t.expiry = *x;
    if (const auto x = in.word<TableToken>("token")) t.token = *x;
    if (const auto x = in.duration("lock_delay")) t.lock_delay = *x;
  }
  void write(const LockSpec& l, KeyWriter& out) const override {
    const TableSpec& t = l.table();
    const TableSpec td;
    if (t.expiry != td.expiry) out.text("expiry", word(t.expiry));
    if (t.token != td.token) out.text("token", word(t.token));
    if (t.lock_delay != td.lock_delay) out.duration("lock_delay", t.lock_delay);
  }
  std::string foreign_key(const std::string&, const ServiceDescriptor&) const override {
    return " is a lock-table setting; it needs \"service\": \"table\"";
  }

  void report_settings(const Scenario& s, KeyWriter& out) const override {
    const TableSpec& t = s.lock.table();
    out.text("expiry", word(t.expiry));
    out.text("token", word(t.token));
    out.duration("lock_delay", t.lock_delay);
  }
  std::string report_design(const Scenario& s) const override {
    const TableSpec& t = s.lock.table();
    static const char* const kWho[] = {
        "expiry on the holder's wall clock (ShedLock)", "expiry on the database's wall clock (ShedLock usingDbTime)",
        "expiry observed by each candidate on its own clock (client-go leader election)"};
    // client-go 8.0 is named when a client runs it (0.36, the default, is not:
    // reports of files without library_version stay as they were).
    std::string who = kWho[static_cast<int>(t.expiry)];
    if (std::any_of(s.clients.begin(), s.clients.end(),
                    [](const ClientSpec& c) { return c.library_version == "8.0"; })) {
      who += ", client-go 8.0 before kubernetes#65094";
    }
    return fmt::format(
               " (one record on db, {}, token {}{})", who,
               t.token == TableToken::kVersion ? "the record version" : "none",
               t.lock_delay > Duration::zero() ? ", lock_delay " + sim::format_duration(t.lock_delay) : std::string()) +
           ServiceDescriptor::report_design(s);
  }
  std::string summary_design(const Scenario& s) const override {
    const TableSpec& t = s.lock.table();
    std::string o =
        ServiceDescriptor::summary_design(s) + fmt::format(" expiry {} token {}", word(t.expiry), word(t.token));
    if (t.lock_delay > Duration::zero()) o += " lock_delay " + sim::format_duration(t.lock_delay);
    return o;
  }

  std::optional<ScenarioProblem> validate(const Scenario& s, const ScenarioSource&) const override {
    return validate_table(s);
  }

  std::unique_ptr<LockService> build(ServiceContext& ctx) const override {
    return std::make_unique<TableService>(ctx.sim, ctx.history, ctx.scenario, ctx.groups.at(0).at(0));
  }
};

}  // namespace

const ServiceDescriptor& descriptor() {
  static const TableDescriptor kTable;
  return kTable;
}

}  // namespace fencesim::table
