// The lock table (models/table/table.hpp) through whole runs: ShedLock's
// INSERT-then-UPDATE and its clock reading taken before a pause, a client
// clock ahead, the unlock without a locked_by condition, db_clock expiry and
// lock_delay, and client-go's observed expiry (a candidate waits a lease
// duration on its own clock; a fast clock shortens it), the version token
// and the rules on the design's settings.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "models/checkers/checkers.hpp"
#include "models/validate.hpp"
#include "models/world.hpp"

namespace fencesim {
namespace {

const Verdict& verdict(const RunResult& r, Property p) {
  for (const Verdict& v : r.verdicts) {
    if (v.property == p) return v;
  }
  throw std::out_of_range("no verdict");
}

ClientSpec client(const std::string& name, WorkloadKind kind, Duration work, int iterations) {
  ClientSpec c;
  c.name = name;
  c.workload.kind = kind;
  c.workload.work = work;
  c.workload.iterations = iterations;
  c.renew_interval = kResolveRenewInterval;
  return c;
}

FaultSpec fault(FaultKind kind, Duration at, const std::string& target) {
  FaultSpec f;
  f.kind = kind;
  f.at = at;
  f.target = target;
  f.origin = "faults[0]";
  return f;
}

Scenario table(TableExpiry expiry, Duration ttl) {
  Scenario s;
  s.name = "table-test";
  s.duration = 60s;
  s.settle = 20s;
  s.lock.set_service(ServiceKind::kTable);
  s.lock.ttl = s.lock.requested_ttl = ttl;
  s.lock.table().expiry = expiry;
  s.resource.kind = ResourceKind::kUnfenced;
  return s;
}

/// ShedLock#132: B creates the record at 0 s; A reads its clock at 5 s, is
/// paused for 20 s while its INSERT is answered, then UPDATEs.
Scenario gc_pause(TableExpiry expiry) {
  Scenario s = table(expiry, 10s);
  ClientSpec b = client("B", WorkloadKind::kCounter, 1s, 2);
  b.workload.think = 29s;
  ClientSpec a = client("A", WorkloadKind::kCounter, 8s, 1);
  a.start = 5s;
  for (ClientSpec* c : {&a, &b}) {
    c->renew = false;
    c->command_timeout = 30s;
  }
  s.clients = {b, a};
  FaultSpec p = fault(FaultKind::kPause, 5001ms, "A");
  p.duration = 20s;
  s.faults.push_back(p);
  resolve_scenario(s);
  return s;
}

const GrantRecord& grant_of(const History& h, const std::string& client, std::size_t nth = 0) {
  for (const GrantRecord& g : h.grants) {
    if (g.client == client && nth-- == 0) return g;
  }
  throw std::out_of_range("no grant of " + client);
}

TEST(Table, TheFirstAttemptInsertsTheRecordAndLaterOnesUpdateIt) {
  const RunResult r = run_scenario(gc_pause(TableExpiry::kHolderClock));
  // B's INSERT took the lock at once: one round trip.
  EXPECT_EQ(grant_of(r.history, "B").at, 1ms);
  // A's INSERT failed on the duplicate key, its UPDATE came after the pause.
  EXPECT_EQ(grant_of(r.history, "A").at, 25002ms);
  // B's second run goes straight to the UPDATE (read at 30.008 s, one round trip).
  const GrantRecord& b2 = grant_of(r.history, "B", 1);
  EXPECT_EQ(b2.at, 30009ms);
}

TEST(Table, HolderClockUpdateCarriesTheReadingFromBeforeThePause) {
  const RunResult r = run_scenario(gc_pause(TableExpiry::kHolderClock));
  const std::string a_value = grant_of(r.history, "A").value;
  // A's record said lock_until = 5 s + 10 s: B took it over at its next run.
  const LeaseEndRecord& end = r.history.lease_ends.at(a_value);
  EXPECT_NE(end.reason.find("lock_until 15s <= now"), std::string::npos) << end.reason;
  EXPECT_EQ(verdict(r, Property::kMutualExclusion).status, Status::kViolated);
  EXPECT_EQ(verdict(r, Property::kNoLostUpdate).status, Status::kViolated);
}

TEST(Table, DbClockUpdateUsesTheDatabaseClockWhenItRuns) {
  const RunResult r = run_scenario(gc_pause(TableExpiry::kDbClock));
  const GrantRecord& a = grant_of(r.history, "A");
  EXPECT_EQ(a.at, 25002ms);
  // B waited for A's unlock.
  EXPECT_GT(grant_of(r.history, "B", 1).at, r.history.lease_ends.at(a.value).at);
  EXPECT_EQ(r.history.lease_ends.at(a.value).reason, "unlocked");
  EXPECT_EQ(verdict(r, Property::kMutualExclusion).status, Status::kHolds);
  EXPECT_EQ(verdict(r, Property::kNoLostUpdate).status, Status::kHolds);
}

/// A holds for 20 s (ttl 30 s); B, whose wall clock is 30 s ahead, tries at 5 s.
Scenario clock_ahead(TableExpiry expiry) {
  Scenario s = table(expiry, 30s);
  ClientSpec a = client("A", WorkloadKind::kCounter, 20s, 1);
  ClientSpec b = client("B", WorkloadKind::kCounter, 2s, 1);
  b.start = 5s;
  a.renew = b.renew = false;
  s.clients = {a, b};
  FaultSpec j = fault(FaultKind::kClockJump, 0s, "B");
  j.by = 30s;
  s.faults.push_back(j);
  resolve_scenario(s);
  return s;
}

TEST(Table, AClockAheadStealsTheLockOnlyWithHolderClock) {
  const RunResult holder = run_scenario(clock_ahead(TableExpiry::kHolderClock));
  EXPECT_LT(grant_of(holder.history, "B").at, 6s);
  EXPECT_EQ(verdict(holder, Property::kMutualExclusion).status, Status::kViolated);
  const RunResult db = run_scenario(clock_ahead(TableExpiry::kDbClock));
  EXPECT_GT(grant_of(db.history, "B").at, 20s);
  EXPECT_EQ(verdict(db, Property::kMutualExclusion).status, Status::kHolds);
}

TEST(Table, AHolderClockUnlockReleasesWhoeverHoldsTheRecord) {
  // With holder_clock, A's late unlock (at 20 s) has no locked_by condition:
  // in clock_ahead B had released at 7 s, so make B hold longer.
  Scenario s = clock_ahead(TableExpiry::kHolderClock);
  s.clients[1].workload.work = 30s;
  const RunResult r = run_scenario(s);
  const LeaseEndRecord& end = r.history.lease_ends.at(grant_of(r.history, "B").value);
  EXPECT_EQ(end.reason, "unlocked by A (ShedLock's unlock has no locked_by condition)");
  EXPECT_LT(end.at, 21s);
}

TEST(Table, DbClockLeaseEndsOnTheDatabaseClockAfterTheLockDelay) {
  for (const Duration delay : {Duration{0}, Duration{15s}}) {
    Scenario s = table(TableExpiry::kDbClock, 10s);
    s.lock.table().lock_delay = delay;
    ClientSpec a = client("A", WorkloadKind::kCounter, 5s, 1);
    ClientSpec b = client("B", WorkloadKind::kCounter, 1s, 1);
    b.start = 1s;
    s.clients = {a, b};
    FaultSpec p = fault(FaultKind::kPause, 2s, "A");
    p.duration = 40s;
    s.faults.push_back(p);
    resolve_scenario(s);
    const RunResult r = run_scenario(s);
    const GrantRecord& g = grant_of(r.history, "A");
    const LeaseEndRecord& end = r.history.lease_ends.at(g.value);
    // Granted at 1 ms on db's clock; lock_until 10.001 s, never extended.
    EXPECT_EQ(end.at, g.at + 10s + delay) << sim::format_duration(delay);
    // Nobody acquires before the delay has run out.
    EXPECT_GE(grant_of(r.history, "B").at, end.at);
    EXPECT_LT(grant_of(r.history, "B").at, end.at + 200ms);
  }
}

TEST(Table, NoLockDelayAfterAnUnlock) {
  Scenario s = table(TableExpiry::kDbClock, 10s);
  s.lock.table().lock_delay = 15s;
  ClientSpec a = client("A", WorkloadKind::kCounter, 1s, 1);
  ClientSpec b = client("B", WorkloadKind::kCounter, 1s, 1);
  b.start = 100ms;
  s.clients = {a, b};
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  const LeaseEndRecord& end = r.history.lease_ends.at(grant_of(r.history, "A").value);
  EXPECT_EQ(end.reason, "unlocked");
  EXPECT_LT(grant_of(r.history, "B").at, end.at + 200ms);
}

/// client-go defaults; A leads, B is a candidate from 1 s; A paused at 5 s.
Scenario leader_election(std::int64_t b_ppm, TableToken token = TableToken::kNone) {
  Scenario s = table(TableExpiry::kObserved, 15s);
  s.lock.table().token = token;
  for (const char* n : {"A", "B"}) {
    ClientSpec c = client(n, WorkloadKind::kLeader, 1s, 30);
    c.renew_interval = 2s;
    c.lease_loss_after = 10s;
    if (n[0] == 'B') c.start = 1s;
    s.clients.push_back(c);
  }
  FaultSpec p = fault(FaultKind::kPause, 5500ms, "A");
  p.duration = 30s;
  s.faults.push_back(p);
  if (b_ppm != 0) {
    FaultSpec d = fault(FaultKind::kClockDrift, 0s, "B");
    d.ppm = b_ppm;
    d.origin = "faults[1]";
    s.faults.push_back(d);
  }
  resolve_scenario(s);
  return s;
}

/// The last renewal A got in before `t`.
Time last_renewal_before(const History& h, Time t) {
  Time last{0};
  for (const RenewalRecord& r : h.renewals) {
    if (r.client == "A" && r.success && r.replied < t) last = std::max(last, r.replied);
  }
  return last;
}

TEST(Table, ACandidateTakesOverAfterALeaseDurationOnItsOwnClock) {
  const RunResult r = run_scenario(leader_election(0));
  const Time last = last_renewal_before(r.history, 5500ms);
  const Time b = grant_of(r.history, "B").at;
  // B polls every RetryPeriod plus client-go's jitter (2 s + up to 2.4 s):
  // it sees A's last version within one poll of its write, and takes over
  // at its first poll 15 s after that.
  EXPECT_GE(b, last + 15s);
  EXPECT_LE(b, last + 23800ms + 10ms);
  EXPECT_NE(r.history.lease_ends.at(grant_of(r.history, "A").value).reason.find("B took the record over"),
            std::string::npos);
}

TEST(Table, ACandidateWhoseClockRunsTwiceAsFastWaitsHalfAsLong) {
  const RunResult r = run_scenario(leader_election(1'000'000));
  const Time last = last_renewal_before(r.history, 5500ms);
  const Time b = grant_of(r.history, "B").at;
  // The same on B's clock, which runs at twice the rate: 15 s on it are
  // 7.5 s of true time, and its polls come every 1-2.2 s.
  EXPECT_GE(b, last + 7500ms);
  EXPECT_LE(b, last + 11900ms + 10ms);
  // Without the drift B takes over 15 s or more after A's last renewal.
  EXPECT_LT(b, last + 15s);
}

TEST(Table, ACandidatesPollsAreJitteredFromItsOwnStreamSoTheTakeoverMovesWithTheSeed) {
  // wait.JitterUntil(RetryPeriod, 1.2): without the jitter the run (1 ms
  // latency, no drawn fault) would be the same for every seed.
  std::set<Duration> after_last;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    Scenario s = leader_election(0);
    s.seed = seed;
    const RunResult r = run_scenario(s);
    const Time last = last_renewal_before(r.history, 5500ms);
    const Time b = grant_of(r.history, "B").at;
    EXPECT_GE(b, last + 15s) << "seed " << seed;
    EXPECT_LE(b, last + 23800ms + 10ms) << "seed " << seed;
    after_last.insert(b - last);
    // The same seed, the same run.
    EXPECT_EQ(grant_of(run_scenario(s).history, "B").at, b) << "seed " << seed;
  }
  EXPECT_GE(after_last.size(), 4u);
}

TEST(Table, RenewDeadlineCountsFromTheStartOfTheRenewRound) {
  // A renews at about 0, 2 and 4 s; its pause (5.5 s to 35.5 s) falls between
  // two rounds, so no RenewDeadline runs while it sleeps. B took the record
  // over meanwhile: A's round that starts when it wakes fails every 2 s, and
  // A stops leading RenewDeadline (10 s) after that round began.
  const RunResult r = run_scenario(leader_election(0));
  const BeliefRecord* a = nullptr;
  for (const BeliefRecord& b : r.history.beliefs) {
    if (b.client == "A" && a == nullptr) a = &b;  // its first lead (the leader workload re-acquires later)
  }
  ASSERT_TRUE(a && a->end);
  EXPECT_EQ(*a->end, 45500ms);
  EXPECT_NE(a->end_reason.find("of the round's start"), std::string::npos) << a->end_reason;
  EXPECT_EQ(verdict(r, Property::kMutualExclusion).status, Status::kViolated);
}

TEST(Table, TheVersionTokenIsTheVersionOfTheAcquisition) {
  const RunResult r = run_scenario(leader_election(0, TableToken::kVersion));
  const GrantRecord& a = grant_of(r.history, "A");
  const GrantRecord& b = grant_of(r.history, "B");
  ASSERT_TRUE(a.token && b.token);
  EXPECT_EQ(*a.token, 1);  // created the record
  // A's renewals bumped the version in between; B's token is past them.
  EXPECT_GT(*b.token, *a.token + 1);
  EXPECT_EQ(verdict(r, Property::kTokenMonotonic).status, Status::kHolds);
}

/// client-go leader election at `version` ("8.0": before kubernetes#65094;
/// "0.36"): A leads alone or with B; at 10 s A's requests to db go
/// unanswered (a partition, `slow` = 0) or arrive `slow` late, for 40 s.
Scenario hung_renewal(const std::string& version, bool with_b, Duration slow = Duration{0}) {
  Scenario s = table(TableExpiry::kObserved, 15s);
  s.duration = 90s;
  for (const char* n : {"A", "B"}) {
    if (n[0] == 'B' && !with_b) break;
    ClientSpec c = client(n, WorkloadKind::kLeader, 1s, 1000);
    c.workload.think = 1s;
    c.renew_interval = 2s;
    c.lease_loss_after = 10s;
    c.command_timeout = 60s;
    c.library_version = version;
    if (n[0] == 'B') c.start = 1s;
    s.clients.push_back(c);
  }
  if (slow > Duration{0}) {
    FaultSpec f = fault(FaultKind::kSlow, 10s, "A");
    f.delay = slow;
    f.duration = 13s;
    s.faults.push_back(f);
  } else {
    FaultSpec f = fault(FaultKind::kPartition, 10s, "");
    f.target.clear();
    f.groups = {{"A"}, {"db"}};
    f.duration = 40s;
    s.faults.push_back(f);
  }
  resolve_scenario(s);
  return s;
}

const BeliefRecord& first_belief(const History& h, const std::string& client) {
  for (const BeliefRecord& b : h.beliefs) {
    if (b.client == client) return b;
  }
  throw std::out_of_range("no belief of " + client);
}

TEST(Table, ClientGo8KeepsLeadingWhileARenewalHangsPastRenewDeadline) {
  // 8.0: the GET of the try at 10.01 s hangs until command_timeout (70.01 s);
  // only the try after the deadline, which finds B's record, stops A.
  const RunResult before = run_scenario(hung_renewal("8.0", true));
  const BeliefRecord& a = first_belief(before.history, "A");
  ASSERT_TRUE(a.end);
  EXPECT_GT(*a.end, 70s);
  EXPECT_LT(*a.end, 71s);
  EXPECT_NE(a.end_reason.find("after RenewDeadline (10s), failed"), std::string::npos) << a.end_reason;
  EXPECT_LT(grant_of(before.history, "B").at, 30s);
  EXPECT_EQ(verdict(before, Property::kMutualExclusion).status, Status::kViolated);
  // 0.36: the round's deadline cancels the hung try; A stops before B takes over.
  const RunResult after = run_scenario(hung_renewal("0.36", true));
  const BeliefRecord& a2 = first_belief(after.history, "A");
  ASSERT_TRUE(a2.end);
  EXPECT_LT(*a2.end, 21s);
  EXPECT_LT(*a2.end, grant_of(after.history, "B").at);
  EXPECT_EQ(verdict(after, Property::kMutualExclusion).status, Status::kHolds);
}

TEST(Table, ClientGo8CountsATryThatSucceedsAfterRenewDeadline) {
  // A alone; its messages arrive 12 s late from 10 s to 23 s. The try of
  // about 10 s succeeds at about 22 s, after its round's deadline.
  const RunResult before = run_scenario(hung_renewal("8.0", false, 12s));
  const BeliefRecord& a = first_belief(before.history, "A");
  EXPECT_FALSE(a.end && *a.end < 80s) << a.end_reason;  // A led on (the leader workload's release ends it later)
  bool late = false;
  for (const RenewalRecord& r : before.history.renewals) late = late || (r.success && r.replied - r.first_sent > 10s);
  EXPECT_TRUE(late);
  const RunResult after = run_scenario(hung_renewal("0.36", false, 12s));
  const BeliefRecord& a2 = first_belief(after.history, "A");
  ASSERT_TRUE(a2.end);
  EXPECT_LT(*a2.end, 21s);
  EXPECT_NE(a2.end_reason.find("of the round's start"), std::string::npos) << a2.end_reason;
}

TEST(Table, ClientGo036ACancelledTrySendsNothingAfterItsRequestInFlight) {
  // A's fast-path update of about 10 s arrives 12 s late (slow from 9 s for
  // 2 s), after RenewDeadline cancelled its round at about 20 s. Its answer
  // (a conflict) must not lead the cancelled try on to a GET and an update
  // that takes the record again with the ended lease's value.
  Scenario s = hung_renewal("0.36", true);
  s.lock.table().token = TableToken::kVersion;
  s.faults.clear();
  FaultSpec f = fault(FaultKind::kSlow, 9s, "A");
  f.delay = 12s;
  f.duration = 2s;
  s.faults.push_back(f);
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  const BeliefRecord& a = first_belief(r.history, "A");
  ASSERT_TRUE(a.end);
  EXPECT_LT(*a.end, 21s);
  for (const GrantRecord& g : r.history.grants) {
    if (g.client == "A" && g.at > 1s) {
      EXPECT_NE(g.value, a.value) << "a grant to the cancelled try at " << g.at.count();
    }
  }
}

TEST(Table, ClientGo8HasNoFastPathAndNoReleaseOnCancel) {
  // A leads for about 6 s and lets go; B waits. 0.36 renews with one update on the
  // version seen last and clears the record when A lets go (ReleaseOnCancel),
  // so B takes over at its next poll; 8.0 GETs before every update and leaves
  // the record to run out, so B waits a lease duration after A's last renewal.
  struct Seen {
    Duration renewal;  // the median renewal's first send to its answer
    Time b_grant;
    Time a_last_renewal;
  };
  auto run = [](const std::string& version) {
    Scenario s = hung_renewal(version, true);
    s.faults.clear();
    s.clients[0].workload.iterations = 6;  // one write a second, then it lets go
    resolve_scenario(s);
    const RunResult r = run_scenario(s);
    std::vector<Duration> took;
    Time last{0};
    for (const RenewalRecord& x : r.history.renewals) {
      if (x.client != "A" || !x.success) continue;
      took.push_back(x.replied - x.first_sent);
      last = std::max(last, x.replied);
    }
    EXPECT_GE(took.size(), 2u) << version;
    std::sort(took.begin(), took.end());
    return Seen{took.at(took.size() / 2), grant_of(r.history, "B").at, last};
  };
  const Seen before = run("8.0");
  const Seen after = run("0.36");
  EXPECT_EQ(before.renewal, 2 * after.renewal);  // GET + update: two round trips, not one
  EXPECT_GE(before.b_grant, before.a_last_renewal + 15s);
  EXPECT_LT(after.b_grant, after.a_last_renewal + 6s);
}

TEST(Table, ObservedNeedsARenewDeadlineAsClientGoDoes) {
  Scenario s = leader_election(0);
  s.clients[1].lease_loss_after.reset();
  auto p = validate_scenario(s);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->path, "clients[1].lease_loss_after");
  EXPECT_NE(p->message.find("RenewDeadline"), std::string::npos) << p->message;

  s = leader_election(0);
  s.clients[0].lease_loss_after = 15s;  // not below LeaseDuration
  p = validate_scenario(s);
  ASSERT_TRUE(p);
  EXPECT_NE(p->message.find("leaseDuration must be greater than renewDeadline"), std::string::npos) << p->message;

  s = leader_election(0);
  s.clients[0].lease_loss_after = 2400ms;  // = 1.2 x RetryPeriod
  p = validate_scenario(s);
  ASSERT_TRUE(p);
  EXPECT_NE(p->message.find("retryPeriod*JitterFactor"), std::string::npos) << p->message;
  s.clients[0].lease_loss_after = 2401ms;
  EXPECT_FALSE(validate_scenario(s)) << validate_scenario(s)->to_string();
}

TEST(Table, LockDelayIsRefusedWithObservedExpiry) {
  Scenario s = leader_election(0);
  s.lock.table().lock_delay = 5s;
  const auto p = validate_scenario(s);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->path, "lock.lock_delay");
}

TEST(Table, TheSameScenarioRunsTheSameWay) {
  const Scenario s = leader_election(1'000'000, TableToken::kVersion);
  EXPECT_EQ(run_scenario(s).fingerprint, run_scenario(s).fingerprint);
}

}  // namespace
}  // namespace fencesim
