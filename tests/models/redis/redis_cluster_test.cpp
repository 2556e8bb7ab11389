// Redis Cluster mode (lock.cluster, models/redis/cluster.hpp): the slot
// function against the vectors of the Redis Cluster specification and
// issue 16, the slot split, CROSSSLOT before the script runs, the replica
// election after a primary's crash, and the minority primary refusing
// writes with CLUSTERDOWN once node_timeout has passed; the replica's
// data-age check (cluster-replica-validity-factor) on both of its sides.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/redis/cluster.hpp"
#include "models/validate.hpp"
#include "tests/models/scenario_builder.hpp"

namespace fencesim::testing {
namespace {

using redis::crc16_xmodem;
using redis::key_hash_slot;
using redis::shard_of_slot;
using redis::shard_slots;

TEST(RedisClusterSlots, Crc16IsTheXmodemVariant) {
  EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);  // the spec's check value
  EXPECT_EQ(crc16_xmodem(""), 0);
}

TEST(RedisClusterSlots, KeyHashSlotMatchesTheIssueVectors) {
  EXPECT_EQ(key_hash_slot("somekey"), 11058);
  EXPECT_EQ(key_hash_slot("foo{hash_tag}"), 2515);
  EXPECT_EQ(key_hash_slot("{user1}.following"), 8106);
}

TEST(RedisClusterSlots, HashTagsFollowKeyHashSlot) {
  // The tag is what lies between the first '{' and the first '}' after it.
  EXPECT_EQ(key_hash_slot("{user1000}.following"), key_hash_slot("{user1000}.followers"));
  EXPECT_EQ(key_hash_slot("{lock}:key"), key_hash_slot("{lock}:counter"));
  EXPECT_EQ(key_hash_slot("{lock}:key"), key_hash_slot("lock"));
  // An empty tag hashes the whole key; so does a '{' without a '}'.
  EXPECT_EQ(key_hash_slot("foo{}{bar}"), crc16_xmodem("foo{}{bar}") % 16384);
  EXPECT_EQ(key_hash_slot("foo{bar"), crc16_xmodem("foo{bar") % 16384);
  // Only the first tag counts, and the first '}' after the '{'.
  EXPECT_EQ(key_hash_slot("foo{{bar}}zap"), crc16_xmodem("{bar") % 16384);
  EXPECT_EQ(key_hash_slot("foo{bar}{zap}"), key_hash_slot("bar"));
}

TEST(RedisClusterSlots, SlotsAreSplitEvenlyInOrderAsRedisCliDoes) {
  EXPECT_EQ(shard_slots(0, 3), (std::pair<int, int>{0, 5460}));
  EXPECT_EQ(shard_slots(1, 3), (std::pair<int, int>{5461, 10922}));
  EXPECT_EQ(shard_slots(2, 3), (std::pair<int, int>{10923, 16383}));
  EXPECT_EQ(shard_slots(0, 1), (std::pair<int, int>{0, 16383}));
  for (int n = 1; n <= 25; ++n) {
    int next = 0;
    for (int s = 0; s < n; ++s) {
      const auto [first, last] = shard_slots(s, n);
      EXPECT_EQ(first, next) << n << " shards, shard " << s;
      EXPECT_GE(last - first + 1, 16384 / n) << n;
      EXPECT_LE(last - first + 1, 16384 / n + 1) << n;
      EXPECT_EQ(shard_of_slot(first, n), s);
      EXPECT_EQ(shard_of_slot(last, n), s);
      next = last + 1;
    }
    EXPECT_EQ(next, 16384) << n;
  }
}

RedisClusterSpec cluster(int shards, int replicas, Duration node_timeout) {
  RedisClusterSpec c;
  c.shards = shards;
  c.replicas = replicas;
  c.node_timeout = node_timeout;
  return c;
}

int count_notes(const RunResult& r, const std::string& kind, const std::string& node = "") {
  return static_cast<int>(std::count_if(r.history.notes.begin(), r.history.notes.end(), [&](const NoteRecord& n) {
    return n.kind == kind && (node.empty() || n.node == node);
  }));
}

std::optional<Time> first_note(const RunResult& r, const std::string& kind, const std::string& node) {
  for (const NoteRecord& n : r.history.notes) {
    if (n.kind == kind && n.node == node) return n.at;
  }
  return std::nullopt;
}

TEST(RedisCluster, KeysInDifferentSlotsFailWithCrossslotAndNothingIsGranted) {
  Scenario s = ScenarioBuilder("crossslot")
                   .duration(20s)
                   .settle(5s)
                   .redis(4s)
                   .redis_spec([](RedisSpec& r) { r.cluster = cluster(3, 1, 2s); })
                   .fenced()
                   .client("A", counter(100ms, 3, 500ms))
                   .build();
  s.lock.key = "lock";
  s.lock.redis().counter_key = "lock:token";
  resolve_scenario(s);
  ASSERT_NE(key_hash_slot("lock"), key_hash_slot("lock:token"));
  // The loader's note names both keys and both slots.
  bool noted = false;
  for (const std::string& n : s.notes) {
    if (n.find("CROSSSLOT") != std::string::npos &&
        n.find(std::to_string(key_hash_slot("lock"))) != std::string::npos &&
        n.find(std::to_string(key_hash_slot("lock:token"))) != std::string::npos) {
      noted = true;
    }
  }
  EXPECT_TRUE(noted);
  const RunResult r = run_scenario(s);
  EXPECT_TRUE(r.history.grants.empty());
  ASSERT_EQ(r.history.service_errors.size(), 1u);
  EXPECT_EQ(r.history.service_errors.begin()->first, "CROSSSLOT Keys in request don't hash to the same slot");
  EXPECT_EQ(r.history.service_errors.begin()->second, 3);
  EXPECT_EQ(status(r, Property::kProgress), Status::kViolated);
}

TEST(RedisCluster, AHashTagPutsBothKeysInOneSlotAndTheLockWorks) {
  Scenario s = ScenarioBuilder("hash-tag")
                   .duration(20s)
                   .settle(5s)
                   .redis(4s)
                   .redis_spec([](RedisSpec& r) { r.cluster = cluster(3, 1, 2s); })
                   .fenced()
                   .client("A", counter(100ms, 3, 500ms))
                   .build();
  s.lock.key = "{lock}:key";
  s.lock.redis().counter_key = "{lock}:counter";
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  EXPECT_EQ(r.history.grants.size(), 3u);
  EXPECT_TRUE(r.history.service_errors.empty());
  // The grants come from the primary of the shard that owns slot("lock").
  const int shard = shard_of_slot(key_hash_slot("lock"), 3);
  for (const GrantRecord& g : r.history.grants) EXPECT_EQ(g.server, "redis-s" + std::to_string(shard) + "-0");
  EXPECT_EQ(status(r, Property::kProgress), Status::kHolds);
}

TEST(RedisCluster, AReplicaIsElectedAfterNodeTimeoutAndTheOldPrimaryReturnsAsItsReplica) {
  const int shard = shard_of_slot(key_hash_slot("lock"), 3);
  const std::string primary = "redis-s" + std::to_string(shard) + "-0";
  const std::string replica = "redis-s" + std::to_string(shard) + "-1";
  Scenario s = ScenarioBuilder("failover")
                   .duration(40s)
                   .redis(4s)
                   .redis_spec([](RedisSpec& r) { r.cluster = cluster(3, 1, 3s); })
                   .fenced()
                   .client("A", counter(100ms, 20, 1s))
                   .crash(primary, 5s, 15s)
                   .build();
  s.lock.key = "{lock}:key";
  s.lock.redis().counter_key = "{lock}:counter";
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  // PFAIL after node_timeout (3 s) without an answer, FAIL with a majority
  // of the primaries, then the election: 500–999 ms + rank 0.
  const auto won = [&]() -> std::optional<Time> {
    for (const NoteRecord& n : r.history.notes) {
      if (n.node == replica && n.kind == "election" && n.text.find("won the election") != std::string::npos) {
        return n.at;
      }
    }
    return std::nullopt;
  }();
  ASSERT_TRUE(won.has_value());
  EXPECT_GT(*won, 5s + 3s + 500ms);
  EXPECT_LT(*won, 5s + 3s + 1s + 500ms + 1s + 500ms);
  // The primaries of the other two shards voted.
  EXPECT_EQ(count_notes(r, "vote"), 2);
  // The old primary restarts at 20 s with its saved view, sees the new
  // owner's higher config epoch and becomes its replica.
  const auto demoted = first_note(r, "cluster-demoted", primary);
  ASSERT_TRUE(demoted.has_value());
  EXPECT_GE(*demoted, 20s);
  EXPECT_LT(*demoted, 22s);
  // Grants after the failover come from the new primary.
  bool granted_by_new = false;
  for (const GrantRecord& g : r.history.grants) {
    if (g.at > *won) {
      EXPECT_EQ(g.server, replica);
      granted_by_new = true;
    }
  }
  EXPECT_TRUE(granted_by_new);
}

TEST(RedisCluster, APrimaryCutOffWithAMinorityRefusesWritesAfterNodeTimeout) {
  const int shard = shard_of_slot(key_hash_slot("lock"), 3);
  const std::string primary = "redis-s" + std::to_string(shard) + "-0";
  Scenario s = ScenarioBuilder("minority")
                   .duration(30s)
                   .redis(4s)
                   .redis_spec([](RedisSpec& r) { r.cluster = cluster(3, 1, 2s); })
                   .fenced()
                   .client("A", counter(100ms, 40, 200ms))
                   .build();
  s.lock.key = "{lock}:key";
  s.lock.redis().counter_key = "{lock}:counter";
  std::vector<std::string> others;
  for (int sh = 0; sh < 3; ++sh) {
    for (int i = 0; i < 2; ++i) {
      const std::string n = "redis-s" + std::to_string(sh) + "-" + std::to_string(i);
      if (n != primary) others.push_back(n);
    }
  }
  FaultSpec f;
  f.at = 3s;
  f.kind = FaultKind::kPartition;
  f.groups = {{primary, "A"}, others};
  s.faults.push_back(f);
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  // The old primary turns its state to fail once it has flagged the other
  // primaries PFAIL (node_timeout after the first unanswered ping).
  const auto down = first_note(r, "cluster-state", primary);
  ASSERT_TRUE(down.has_value());
  EXPECT_GT(*down, 3s + 2s);
  EXPECT_LT(*down, 3s + 2s + 1s + 200ms);
  // A, on the minority side, gets no grant after that.
  for (const GrantRecord& g : r.history.grants) {
    if (g.client == "A") {
      EXPECT_LT(g.at, *down);
    }
  }
}

// A failover fault after a replica has already won the election (its
// primary paused past node_timeout) finds no replica of the old primary to
// promote; it used to dereference the new primary's missing primary and
// crash (found by a new-user trial).
TEST(RedisCluster, AFailoverAfterTheReplicaWonTheElectionDoesNotCrash) {
  Scenario s = ScenarioBuilder("failover-after-election")
                   .duration(20s)
                   .redis(10s)
                   .redis_spec([](RedisSpec& r) { r.cluster = cluster(3, 1, 1s); })
                   .fenced()
                   .client("A", counter(1s, 5, 200ms))
                   .build();
  s.lock.key = "{l}k";
  s.lock.redis().counter_key = "{l}c";
  FaultSpec pause;
  pause.at = 2s;
  pause.kind = FaultKind::kPause;
  pause.target = "redis-primary";
  pause.duration = 10s;
  FaultSpec failover;
  failover.at = 5s;
  failover.kind = FaultKind::kFailover;
  failover.target = "redis";
  s.faults = {pause, failover};
  resolve_scenario(s);
  const RunResult r = run_scenario(s);
  const auto f = std::find_if(r.history.faults.begin(), r.history.faults.end(),
                              [](const FaultRecord& x) { return x.kind == FaultKind::kFailover; });
  ASSERT_NE(f, r.history.faults.end());
  EXPECT_TRUE(f->skipped);
  EXPECT_EQ(f->skip_reason, "no live replica to promote");
}

// cluster-replica-validity-factor (cluster.c clusterHandleSlaveFailover):
// the lock key's shard (shard 1 for "{lock}") with a primary, one replica
// and node_timeout 5 s; the link between the two breaks silently at 5 s
// (the replica's last data is from 4 s) and the primary crashes at `crash`.
struct StaleReplica {
  Duration crash = 100s;
  int factor = 10;
  Duration repl_timeout = 60s;
  std::optional<Duration> replica_restart{};  ///< the replica crashes at 10 s and restarts this much later
  bool one_way = false;                       ///< the break blocks only what the replica sends
  std::optional<Duration> replica_jump{};     ///< the replica's wall clock steps this much at 60 s
};

RunResult run_stale_replica(const StaleReplica& c) {
  ScenarioBuilder b("stale-replica");
  b.duration(c.crash + 40s)
      .redis(10s)
      .redis_spec([&](RedisSpec& r) {
        r.cluster = cluster(3, 1, 5s);
        r.cluster->replica_validity_factor = c.factor;
        r.cluster->repl_timeout = c.repl_timeout;
      })
      .fenced()
      .client("A", counter(500ms, 1000, 1s))
      .partition(5s, {{"redis-s1-1"}, {"redis-s1-0"}}, std::nullopt, c.one_way)
      .crash("redis-s1-0", c.crash);
  if (c.replica_restart) b.crash("redis-s1-1", 10s, *c.replica_restart);
  if (c.replica_jump) b.clock_jump("redis-s1-1", 60s, *c.replica_jump);
  Scenario s = b.build();
  s.lock.key = "{lock}:key";
  s.lock.redis().counter_key = "{lock}:counter";
  EXPECT_EQ(shard_of_slot(key_hash_slot("lock"), 3), 1);
  resolve_scenario(s);
  return run_scenario(s);
}

std::optional<NoteRecord> note_of(const RunResult& r, const std::string& kind, const std::string& node,
                                  const std::string& containing = "") {
  for (const NoteRecord& n : r.history.notes) {
    if (n.kind == kind && n.node == node && n.text.find(containing) != std::string::npos) return n;
  }
  return std::nullopt;
}

TEST(RedisClusterReplicaValidity, ASilentlyBrokenLinkNoticedLateStillLetsAStaleReplicaWin) {
  const RunResult r = run_stale_replica({});
  // Noticed at 4 + 60 + 1 s; FAIL at about 106 s: 41 s - 5 s <= 10 s + 5 s × 10.
  const auto scheduled = note_of(r, "election", "redis-s1-1", "schedules");
  ASSERT_TRUE(scheduled.has_value());
  EXPECT_NE(scheduled->text.find("noticed down at 65 s"), std::string::npos) << scheduled->text;
  EXPECT_TRUE(note_of(r, "election", "redis-s1-1", "won the election").has_value());
  EXPECT_FALSE(note_of(r, "cant-failover", "redis-s1-1").has_value());
  EXPECT_EQ(status(r, Property::kTokenMonotonic), Status::kViolated);
}

TEST(RedisClusterReplicaValidity, ALinkNoticedDownLongBeforeTheFailureKeepsTheReplicaFromFailingOver) {
  const RunResult r = run_stale_replica({.crash = 150s});
  const auto refused = note_of(r, "cant-failover", "redis-s1-1");
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->text.find("noticed down at 65 s"), std::string::npos) << refused->text;
  EXPECT_NE(refused->text.find("= 86s > 60s"), std::string::npos) << refused->text;
  EXPECT_EQ(count_notes(r, "cant-failover"), 1);  // noted once while the reason stays
  EXPECT_FALSE(note_of(r, "election", "redis-s1-1").has_value());
  EXPECT_EQ(status(r, Property::kTokenMonotonic), Status::kHolds);
  for (const GrantRecord& g : r.history.grants) EXPECT_EQ(g.server, "redis-s1-0");
}

TEST(RedisClusterReplicaValidity, FactorZeroTurnsTheCheckOff) {
  const RunResult r = run_stale_replica({.crash = 150s, .factor = 0});
  EXPECT_FALSE(note_of(r, "cant-failover", "redis-s1-1").has_value());
  EXPECT_TRUE(note_of(r, "election", "redis-s1-1", "won the election").has_value());
  EXPECT_EQ(status(r, Property::kTokenMonotonic), Status::kViolated);
}

TEST(RedisClusterReplicaValidity, TheLinkIsNoticedDownTheFirstWholeSecondPastReplTimeout) {
  // repl-timeout 20 s: the last data at 4 s, `now - lastinteraction > 20` first at 25 s.
  const RunResult r = run_stale_replica({.crash = 150s, .repl_timeout = 20s});
  const auto refused = note_of(r, "cant-failover", "redis-s1-1");
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->text.find("noticed down at 25 s"), std::string::npos) << refused->text;
}

TEST(RedisClusterReplicaValidity, AConnectedReplicaCountsFromItsPrimarysLastDataUntilItNoticesTheLinkDown) {
  // Factor 1: the bound is 10 s + 5 s. The primary crashes at 30 s, before
  // the replica notices the link (65 s): still connected, its data age is
  // counted from the last data, at 4 s, and is too old. Once it notices the
  // link down the age restarts from 65 s, and the same stale replica is
  // elected: the late notice makes its data look young.
  const RunResult r = run_stale_replica({.crash = 30s, .factor = 1});
  const auto refused = note_of(r, "cant-failover", "redis-s1-1");
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->text.find("connected to redis-s1-0, which last sent data at 4 s"), std::string::npos)
      << refused->text;
  EXPECT_LT(refused->at, 40s);
  const auto scheduled = note_of(r, "election", "redis-s1-1", "schedules");
  ASSERT_TRUE(scheduled.has_value());
  EXPECT_GE(scheduled->at, 65s);
  EXPECT_NE(scheduled->text.find("noticed down at 65 s"), std::string::npos) << scheduled->text;
  EXPECT_TRUE(note_of(r, "election", "redis-s1-1", "won the election").has_value());
}

TEST(RedisClusterReplicaValidity, AReplicaRestartedWithoutReachingItsPrimaryHasNoDataAge) {
  // The replica restarts at 11 s behind the broken link: it never connects
  // again, and repl_down_since 0 ("down since EVER") makes any bound too small.
  const RunResult r = run_stale_replica({.crash = 30s, .replica_restart = 1s});
  const auto refused = note_of(r, "cant-failover", "redis-s1-1");
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->text.find("never connected to redis-s1-0 since it started"), std::string::npos) << refused->text;
}

TEST(RedisClusterReplicaValidity, AReplicaThatHearsItsPrimaryButNeverSynchronisedIsNotElected) {
  // One way: the replica hears redis-s1-0's pings, but its PSYNC after the
  // restart never arrives. Pings come only over an established link, so it
  // stays "never connected" (found by a new-user probe: it was elected).
  const RunResult r = run_stale_replica({.crash = 30s, .replica_restart = 1s, .one_way = true});
  const auto refused = note_of(r, "cant-failover", "redis-s1-1");
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->text.find("never connected"), std::string::npos) << refused->text;
  EXPECT_FALSE(note_of(r, "election", "redis-s1-1").has_value());
}

TEST(RedisClusterReplicaValidity, TheNoticeIsTakenOnTheWallClockAsReplicationCronReadsIt) {
  // The replica's wall clock steps +1000 s at 60 s: replicationCron sees the
  // timeout at once and notes the link down at 1060 s (its clock), so the
  // data age at the failure is counted from there and the replica is elected.
  const RunResult r = run_stale_replica({.replica_jump = 1000s});
  const auto down = note_of(r, "link-down", "redis-s1-1");
  ASSERT_TRUE(down.has_value());
  EXPECT_EQ(down->at, 60s);
  EXPECT_NE(down->text.find("down since 1060 s"), std::string::npos) << down->text;
  EXPECT_TRUE(note_of(r, "election", "redis-s1-1", "won the election").has_value());
  // A step back after the notice keeps repl_down_since: the age goes
  // negative, within any bound (Redis compares it the same way).
  const RunResult back = run_stale_replica({.crash = 150s, .replica_jump = -50s});
  const auto down_back = note_of(back, "link-down", "redis-s1-1");
  ASSERT_TRUE(down_back.has_value());
  EXPECT_GT(down_back->at, 65s);  // the step back made the timeout later
}

}  // namespace
}  // namespace fencesim::testing
