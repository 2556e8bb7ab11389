// Randomized fault sweep: hundreds of seeds of 3- and 5-member clusters under
// partitions (isolation, one-way isolation, random splits, the leader cut
// off), crashes and restarts, pauses, monotonic clock jumps and drift, with
// a client proposing commands to whoever it believes leads and asking for
// linearizable reads. Every run must satisfy raft_safety and, once the
// faults have ended, settle (one leader, every member caught up). The sweep
// also has to prove that its faults bit: minimum totals of elections, leader
// changes, log truncations and restarts.
//
// The mutation checks run the sweep with one rule switched off and require
// raft_safety to catch it on some seed. Breaking the up-to-date-log vote rule
// is caught by the standard schedule. Breaking the current-term commit rule
// (§5.4.2) needs Figure 8's shape — a leader cut off while its first appends
// are in flight, batches cut to one entry — so that sweep uses a targeted
// schedule (`figure8_schedule`), which the correct Raft must pass as well.
//
// FENCESIM_RAFT_SEEDS=<n> runs n seeds instead of 500 (for exploring; the
// minimum totals then scale with n).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "tests/models/etcd/raft/cluster.hpp"

namespace {

using namespace std::chrono_literals;
using rafttest::Cluster;
using rafttest::Options;
namespace raft = fencesim::raft;

struct SweepConfig {
  std::uint64_t first_seed = 1;
  int seeds = 500;
  /// Seed s runs a cluster of sizes[s % sizes.size()] members.
  std::vector<int> sizes{3, 5};
  sim::Duration fault_window = 30s;  ///< faults start in [0.5 s, fault_window)
  sim::Duration settle = 7s;         ///< then everything heals; the run ends settle later
  raft::Mutations mutations;
  /// 0: drawn per seed from {1, 4, 64}; small values cut a leader's batch in
  /// the middle, as Figure 8 needs.
  std::size_t max_entries_per_append = 0;
  /// Relative weights of the fault kinds (see FaultKind).
  std::vector<int> weights{3, 3, 2, 2, 3, 2, 2, 2, 2, 1};
  sim::Duration min_gap = 200ms, max_gap = 1200ms;  ///< between fault starts
  /// Leader-reactive nemesis (Jepsen-style): when a member becomes leader
  /// during the fault window, with this chance (percent) it is cut off from
  /// the other members (or, one time in four, crashed) a moment later —
  /// uniformly within `cut_new_leader_within`, i.e. while its first appends
  /// are in flight — for 100 ms – 3 s. This is what makes Figure 8 likely.
  int cut_new_leader_percent = 25;
  sim::Duration cut_new_leader_within = 60ms;
  /// E = 10 ticks as in etcd's defaults, at twice their pace so that more
  /// elections fit into a run.
  sim::Duration election_timeout = 500ms, heartbeat = 50ms;
  sim::Duration latency_min = 1ms, latency_max = 15ms;
  sim::Duration wal_fsync{0};  ///< Config::wal_fsync of every member
  bool stop_at_first_violation = false;
  bool check_settled = true;
};

enum FaultKind : int {
  kIsolateMember,  ///< cut off from everybody, the client included
  kCutLeader,      ///< the leader cut off from the other members; the client still reaches both sides
  kSplit,          ///< members split in two random groups; the client reaches both
  kCrashMember,
  kCrashLeader,
  kPauseMember,
  kPauseLeader,
  kClockJump,
  kDrift,
  kOneWayIsolate,
  kLeaderReactive,  ///< the leader-reactive nemesis (cut or crash of a new leader)
  kFaultKinds,
};

const char* const kFaultNames[kFaultKinds] = {"isolate",      "cut leader",      "split",         "crash",
                                              "crash leader", "pause",           "pause leader",  "clock jump",
                                              "drift",        "one-way isolate", "new leader cut"};

/// The schedule that makes Figure 8 likely: every new leader is cut off or
/// crashed within 60 ms of its election, and a leader sends one entry per
/// AppendEntries, so a lagging follower receives old-term entries before
/// the new leader's own.
SweepConfig figure8_schedule() {
  SweepConfig cfg;
  cfg.cut_new_leader_percent = 100;
  cfg.max_entries_per_append = 1;
  return cfg;
}

struct RunOutcome {
  std::uint64_t seed = 0;
  int members = 0;
  raft::SafetyVerdict verdict;
  raft::RaftStats stats;
  std::string unsettled;  ///< why the cluster did not settle, or empty
  std::uint64_t events = 0;
  std::uint64_t fingerprint = 0;  ///< FNV-1a over the Raft history
  std::uint64_t faults = 0;
  std::uint64_t by_kind[kFaultKinds] = {};  ///< faults that fired, by kind
  std::uint64_t proposals_ok = 0;
  std::uint64_t reads_ok = 0;
};

RunOutcome run_seed(std::uint64_t seed, const SweepConfig& cfg) {
  RunOutcome out;
  out.seed = seed;
  out.members = cfg.sizes[seed % cfg.sizes.size()];
  sim::Rng draw = sim::Rng::stream(seed, "sweep");
  std::size_t max_entries = cfg.max_entries_per_append;
  if (max_entries == 0) {
    static constexpr std::size_t kChoices[] = {1, 4, 64};
    max_entries = kChoices[draw.below(3)];
  }
  Cluster c(Options()
                .with_seed(seed)
                .with_members(out.members)
                .with_mutations(cfg.mutations)
                .with_max_entries_per_append(max_entries)
                .with_timeouts(cfg.election_timeout, cfg.heartbeat)
                .with_latency(cfg.latency_min, cfg.latency_max)
                .with_wal_fsync(cfg.wal_fsync)
                .without_trace());
  const int n = out.members;
  const sim::Time faults_end = cfg.fault_window;
  const sim::Time end = faults_end + cfg.settle;
  const sim::Time client_end = end - 1500ms;

  // --- the nemesis: every draw is made now, from the "nemesis" stream;
  // "the leader" is resolved when the fault fires.
  sim::Rng rng = c.sim.rng("nemesis");
  int total_weight = 0;
  for (int w : cfg.weights) total_weight += w;
  auto any_member = [&] { return static_cast<int>(rng.below(static_cast<std::uint64_t>(n))); };
  auto leader_or = [&c](int fallback) {
    const int l = c.leader();
    return l >= 0 ? l : fallback;
  };
  for (sim::Time t = 500ms; t < faults_end; t += rng.uniform(cfg.min_gap, cfg.max_gap)) {
    int pick = static_cast<int>(rng.below(static_cast<std::uint64_t>(total_weight)));
    int kind = 0;
    while (pick >= cfg.weights[kind]) pick -= cfg.weights[kind++];
    const int who = any_member();
    const sim::Duration d = rng.uniform(sim::Duration{100ms}, sim::Duration{4s});
    out.faults++;
    c.at(t, [&out, kind] { out.by_kind[kind]++; });
    switch (kind) {
      case kIsolateMember:
      case kOneWayIsolate:
        c.at(t, [&c, kind, who, d] {
          const std::uint64_t p = c.isolate({who}, kind == kOneWayIsolate);
          c.at(c.sim.now() + d, [&c, p] { c.sim.remove_partition(p); });
        });
        break;
      case kCutLeader:
        c.at(t, [&c, n, who, d, leader_or] {
          const int target = leader_or(who);
          std::vector<int> others;
          for (int i = 0; i < n; ++i) {
            if (i != target) others.push_back(i);
          }
          const std::uint64_t p = c.split({{target}, others});
          c.at(c.sim.now() + d, [&c, p] { c.sim.remove_partition(p); });
        });
        break;
      case kSplit: {
        std::vector<int> a, b;
        for (int i = 0; i < n; ++i) (rng.chance(1, 2) ? a : b).push_back(i);
        c.at(t, [&c, a, b, d] {
          const std::uint64_t p = c.split({a, b});
          c.at(c.sim.now() + d, [&c, p] { c.sim.remove_partition(p); });
        });
        break;
      }
      case kCrashMember:
      case kCrashLeader:
        c.at(t, [&c, kind, who, d, leader_or] {
          const int target = kind == kCrashLeader ? leader_or(who) : who;
          c.crash(target);
          c.at(c.sim.now() + d, [&c, target] { c.restart(target); });
        });
        break;
      case kPauseMember:
      case kPauseLeader: {
        const sim::Duration pd = rng.uniform(sim::Duration{50ms}, sim::Duration{3s});
        c.at(t, [&c, kind, who, pd, leader_or] {
          const int target = kind == kPauseLeader ? leader_or(who) : who;
          c.sim.pause(c.id(target), pd);
        });
        break;
      }
      case kClockJump: {
        const sim::Duration by = rng.uniform(sim::Duration{100ms}, sim::Duration{3s});
        c.at(t, [&c, who, by] { c.sim.clock_jump(c.id(who), sim::ClockKind::kMonotonic, by); });
        break;
      }
      case kDrift: {
        const std::int64_t ppm = (rng.chance(1, 2) ? 1 : -1) * rng.uniform(20'000, 500'000);
        c.at(t, [&c, who, ppm, d] {
          c.sim.set_drift(c.id(who), ppm);
          c.at(c.sim.now() + d, [&c, who] { c.sim.set_drift(c.id(who), 0); });
        });
        break;
      }
    }
  }
  sim::Rng react = c.sim.rng("nemesis/leader");
  c.on_leader = [&c, &react, &cfg, &out, n, faults_end](int who, raft::Term) {
    if (c.sim.now() >= faults_end || !react.chance(static_cast<std::uint64_t>(cfg.cut_new_leader_percent), 100)) return;
    const sim::Duration delay = react.uniform(sim::Duration{0}, cfg.cut_new_leader_within);
    const sim::Duration d = react.uniform(sim::Duration{100ms}, sim::Duration{3s});
    const bool crash = react.chance(1, 4);
    out.faults++;
    out.by_kind[kLeaderReactive]++;
    c.at(c.sim.now() + delay, [&c, n, who, d, crash] {
      if (crash) {
        c.crash(who);
        c.at(c.sim.now() + d, [&c, who] { c.restart(who); });
        return;
      }
      std::vector<int> others;
      for (int i = 0; i < n; ++i) {
        if (i != who) others.push_back(i);
      }
      const std::uint64_t p = c.split({{who}, others});
      c.at(c.sim.now() + d, [&c, p] { c.sim.remove_partition(p); });
    });
  };

  // The faults end: heal, restart, clocks back to their normal rate.
  c.at(faults_end, [&c, n] {
    c.heal();
    for (int i = 0; i < n; ++i) {
      c.restart(i);
      c.sim.set_drift(c.id(i), 0);
    }
  });

  // --- the client: proposes to whoever it believes leads, sometimes reads.
  sim::Node& client = c.sim.add_node("client");
  client.spawn("client", [&c, &out, n, client_end](sim::Process& p) {
    sim::Rng crng = p.sim().rng("client");
    int target = 0;
    std::uint64_t seq = 0;
    while (p.sim().now() < client_end) {
      if (crng.chance(1, 5)) {
        auto reply = p.call(c.id(target), std::make_shared<rafttest::ReadRequest>(), 500ms);
        const auto* r = reply ? reply->as<rafttest::ReadReply>() : nullptr;
        if (r != nullptr && r->result.ok) {
          out.reads_ok++;
        } else {
          target = r != nullptr && r->result.leader != sim::kNoNode ? c.index_of(r->result.leader) : (target + 1) % n;
          p.sleep(30ms);
        }
        continue;
      }
      auto req = std::make_shared<rafttest::ProposeRequest>();
      req->command = "c" + std::to_string(seq++);
      auto reply = p.call(c.id(target), req, 300ms);
      const auto* r = reply ? reply->as<rafttest::ProposeReply>() : nullptr;
      if (r != nullptr && r->ok) {
        out.proposals_ok++;
        p.sleep(crng.uniform(sim::Duration{5ms}, sim::Duration{80ms}));
      } else if (r != nullptr && r->leader != sim::kNoNode && r->leader != c.id(target)) {
        target = c.index_of(r->leader);
      } else {
        target = (target + 1) % n;
        p.sleep(30ms);
      }
    }
  });

  c.run_until(end);
  out.events = c.sim.events_processed();
  std::uint64_t h = sim::fnv1a64("");
  for (const raft::RaftEvent& e : c.history.events) {
    h = sim::fnv1a64(fmt::format("{} {} {} {} {} {} {} {}|", e.at.count(), raft::event_kind_name(e.kind), e.member,
                                 e.term, e.index, e.command.str(), e.commit, e.issued_at.count()),
                     h);
  }
  out.fingerprint = h;
  out.stats = c.history.stats;
  out.verdict = c.check();

  // --- settled: one leader of the highest term, everyone caught up.
  if (cfg.check_settled) {
    const int l = c.leader();
    raft::Term max_term = 0;
    for (int i = 0; i < n; ++i) max_term = std::max(max_term, c.raft(i).term());
    if (l < 0) {
      out.unsettled = "no leader at the end";
    } else if (c.raft(l).term() != max_term) {
      out.unsettled = "the leader's term is not the highest";
    } else {
      for (int i = 0; i < n; ++i) {
        const raft::RaftNode& r = c.raft(i);
        if (!c.members[i]->node.up() || r.commit() != c.raft(l).commit() || r.applied() != r.commit() ||
            r.leader() != c.id(l) || r.log() != c.raft(l).log()) {
          out.unsettled = fmt::format("{} not caught up: commit {} applied {} leader {} vs leader {} commit {}",
                                      c.name(i), r.commit(), r.applied(), r.leader(), c.name(l), c.raft(l).commit());
          break;
        }
      }
    }
  }
  return out;
}

struct SweepResult {
  raft::RaftStats stats;
  int runs = 0;
  std::uint64_t events = 0, faults = 0, proposals_ok = 0, reads_ok = 0;
  std::uint64_t by_kind[kFaultKinds] = {};
  std::vector<RunOutcome> violations;
  std::vector<RunOutcome> unsettled;
};

SweepResult sweep(const SweepConfig& cfg) {
  SweepResult res;
  int seeds = cfg.seeds;
  if (const char* env = std::getenv("FENCESIM_RAFT_SEEDS")) seeds = std::atoi(env);
  for (int k = 0; k < seeds; ++k) {
    RunOutcome o = run_seed(cfg.first_seed + static_cast<std::uint64_t>(k), cfg);
    res.runs++;
    res.stats += o.stats;
    res.events += o.events;
    res.faults += o.faults;
    res.proposals_ok += o.proposals_ok;
    res.reads_ok += o.reads_ok;
    for (int k = 0; k < kFaultKinds; ++k) res.by_kind[k] += o.by_kind[k];
    if (!o.unsettled.empty()) res.unsettled.push_back(o);
    if (!o.verdict.holds) {
      res.violations.push_back(std::move(o));
      if (cfg.stop_at_first_violation) break;
    }
  }
  return res;
}

std::string describe(const RunOutcome& o) {
  std::string s = fmt::format("seed {} ({} members): {} — {}", o.seed, o.members, o.verdict.rule, o.verdict.summary);
  for (const auto& l : o.verdict.story) s += "\n    " + l;
  return s;
}

void print_totals(const char* title, const SweepResult& r) {
  const raft::RaftStats& s = r.stats;
  std::printf(
      "[%s] %d runs, %llu events, %llu faults scheduled\n"
      "  elections %llu, pre-vote rounds %llu, leaders elected %llu, leader changes %llu\n"
      "  step-downs %llu (CheckQuorum %llu), (pre-)votes ignored in lease %llu\n"
      "  log truncations %llu (%llu entries), crashes %llu, restarts %llu\n"
      "  proposals appended %llu (client acks %llu), linearizable reads answered %llu (client %llu)\n"
      "  old-term entries committed by counting replicas %llu\n",
      title, r.runs, static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.faults),
      static_cast<unsigned long long>(s.elections), static_cast<unsigned long long>(s.pre_campaigns),
      static_cast<unsigned long long>(s.leaders_elected), static_cast<unsigned long long>(s.leader_changes),
      static_cast<unsigned long long>(s.step_downs), static_cast<unsigned long long>(s.check_quorum_step_downs),
      static_cast<unsigned long long>(s.votes_ignored_in_lease), static_cast<unsigned long long>(s.truncations),
      static_cast<unsigned long long>(s.entries_truncated), static_cast<unsigned long long>(s.crashes),
      static_cast<unsigned long long>(s.restarts), static_cast<unsigned long long>(s.proposals),
      static_cast<unsigned long long>(r.proposals_ok), static_cast<unsigned long long>(s.reads_answered),
      static_cast<unsigned long long>(r.reads_ok), static_cast<unsigned long long>(s.old_term_commits_by_counting));
  std::string kinds = "  faults fired:";
  for (int k = 0; k < kFaultKinds; ++k)
    kinds += fmt::format(" {} {}{}", kFaultNames[k], r.by_kind[k], k + 1 < kFaultKinds ? "," : "");
  std::printf("%s\n", kinds.c_str());
  std::fflush(stdout);
}

/// The minimum totals scale with the number of runs (measured totals for
/// 500 seeds are in docs/RAFT.md; these are about half of them).
std::uint64_t at_least(std::uint64_t per_500, int runs) { return per_500 * static_cast<std::uint64_t>(runs) / 500; }

TEST(RaftSweep, FiveHundredSeedsOfFaultsFindNoSafetyViolationAndTheFaultsBite) {
  const SweepResult r = sweep(SweepConfig{});
  print_totals("raft sweep", r);
  for (const RunOutcome& o : r.violations) ADD_FAILURE() << describe(o);
  for (const RunOutcome& o : r.unsettled) ADD_FAILURE() << "seed " << o.seed << " did not settle: " << o.unsettled;
  EXPECT_GE(r.runs, 1);
  EXPECT_GE(r.stats.elections, at_least(3000, r.runs));
  EXPECT_GE(r.stats.leader_changes, at_least(2000, r.runs));
  EXPECT_GE(r.stats.truncations, at_least(1000, r.runs));
  EXPECT_GE(r.stats.restarts, at_least(2000, r.runs));
  EXPECT_GE(r.stats.check_quorum_step_downs, at_least(1000, r.runs));
  EXPECT_GE(r.stats.votes_ignored_in_lease, at_least(2000, r.runs));
  EXPECT_GE(r.reads_ok, at_least(10000, r.runs));
  EXPECT_GE(r.proposals_ok, at_least(50000, r.runs));
  for (int k = 0; k < kFaultKinds; ++k) EXPECT_GE(r.by_kind[k], at_least(500, r.runs)) << kFaultNames[k];
}

TEST(RaftSweep, ASeedReplaysExactly) {
  // The same seed gives the same history, event for event (README.md "Determinism":
  // determinism is enforced, not hoped for); another seed does not.
  const SweepConfig cfg;
  const RunOutcome a = run_seed(7, cfg), b = run_seed(7, cfg), other = run_seed(8, cfg);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.events, b.events);
  EXPECT_NE(a.fingerprint, other.fingerprint);
}

TEST(RaftSweep, TheFigure8ScheduleFindsNoSafetyViolationEither) {
  const SweepResult r = sweep(figure8_schedule());
  print_totals("figure 8 schedule", r);
  for (const RunOutcome& o : r.violations) ADD_FAILURE() << describe(o);
  for (const RunOutcome& o : r.unsettled) ADD_FAILURE() << "seed " << o.seed << " did not settle: " << o.unsettled;
  EXPECT_GE(r.stats.leader_changes, at_least(2000, r.runs));
  EXPECT_GE(r.stats.truncations, at_least(1000, r.runs));
}

TEST(RaftSweep, WithAWalFsyncTheSweepFindsNoSafetyViolationAndStillSettles) {
  // lock.wal_fsync: 150 seeds with a 10 ms fsync on every member (a fifth
  // of a tick here), the same faults; held-back replies must not break Raft.
  SweepConfig cfg;
  cfg.seeds = 150;
  cfg.wal_fsync = 10ms;
  const SweepResult r = sweep(cfg);
  print_totals("raft sweep, wal_fsync 10ms", r);
  for (const RunOutcome& o : r.violations) ADD_FAILURE() << describe(o);
  for (const RunOutcome& o : r.unsettled) ADD_FAILURE() << "seed " << o.seed << " did not settle: " << o.unsettled;
  EXPECT_GE(r.stats.leader_changes, at_least(2000, r.runs));
  EXPECT_GE(r.proposals_ok, at_least(20000, r.runs));
}

TEST(RaftSweep, WithoutTheUpToDateLogVoteRuleTheSweepFindsASafetyViolation) {
  SweepConfig cfg;
  cfg.mutations.disable_up_to_date_check = true;
  cfg.check_settled = false;
  const SweepResult r = sweep(cfg);
  print_totals("mutation: no up-to-date check", r);
  ASSERT_FALSE(r.violations.empty()) << "raft_safety missed the broken vote rule in " << r.runs << " seeds";
  std::printf("  caught on %zu of %d seeds; the first: %s\n", r.violations.size(), r.runs,
              describe(r.violations.front()).c_str());
}

TEST(RaftSweep, WithoutTheCurrentTermCommitRuleTheFigure8ScheduleFindsASafetyViolation) {
  SweepConfig cfg = figure8_schedule();
  cfg.mutations.disable_current_term_commit_rule = true;
  cfg.check_settled = false;
  const SweepResult r = sweep(cfg);
  print_totals("mutation: no current-term commit rule", r);
  ASSERT_FALSE(r.violations.empty()) << "raft_safety missed the broken commit rule in " << r.runs << " seeds";
  EXPECT_GT(r.stats.old_term_commits_by_counting, 0u);
  std::printf("  caught on %zu of %d seeds; the first: %s\n", r.violations.size(), r.runs,
              describe(r.violations.front()).c_str());
}

}  // namespace
