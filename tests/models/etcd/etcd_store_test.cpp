// The MVCC state machine of the etcd-like service (models/etcd/etcd.cpp),
// driven by raw requests through the harness: the global revision, the
// per-key revisions, the Mutex's lock transaction, range and watch.
//
// etcd sources modelled: mvcc/kvstore_txn.go (a write txn adds one revision
// only when it changed something), client/v3/concurrency/mutex.go
// (tryAcquire's txn, waitDeletes' range), mvcc/watchable_store.go (a watch
// from an old revision replays history).
#include <gtest/gtest.h>

#include "tests/models/etcd/etcd_harness.hpp"

namespace fencesim::testing {
namespace {

TEST(EtcdStore, TheRevisionStartsAtOneOnEveryMemberAndALeaseGrantDoesNotMoveIt) {
  EtcdHarness h;
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{1, 1, 1}));
  std::optional<Response> g;
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 0, h.grant()); });
  h.run(1s);
  ASSERT_TRUE(g && g->error.empty());
  EXPECT_EQ(g->header_revision, 1);
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{1, 1, 1}));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(h.member(i).has_lease(g->lease)) << "etcd-" << i;
}

TEST(EtcdStore, ALockTxnThatCreatesItsKeyAddsOneRevisionAndSetsTheKeysRevisions) {
  EtcdHarness h;
  std::optional<Response> g, l;
  h.at(0s, [&](sim::Process& p) {
    g = h.call(p, 0, h.grant());
    l = h.call(p, 0, h.lock(g->lease));
  });
  h.run(1s);
  ASSERT_TRUE(l && l->error.empty());
  EXPECT_TRUE(l->succeeded);
  ASSERT_TRUE(l->kv);
  EXPECT_EQ(l->kv->key, EtcdHarness::mutex_key("lock/", g->lease));
  EXPECT_EQ(l->kv->create_revision, 2);
  EXPECT_EQ(l->kv->mod_revision, 2);
  EXPECT_EQ(l->kv->version, 1);
  EXPECT_EQ(l->kv->lease, g->lease);
  EXPECT_EQ(l->header_revision, 2);
  // The txn's second half, getOwner: the first-created key under the prefix
  // is our own, so we hold the lock at once.
  ASSERT_TRUE(l->owner);
  EXPECT_EQ(l->owner->create_revision, 2);
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{2, 2, 2}));
  for (int i = 0; i < 3; ++i) {
    const KeyValue* kv = h.key(i, l->kv->key);
    ASSERT_NE(kv, nullptr) << "etcd-" << i;
    EXPECT_EQ(kv->create_revision, 2);
  }
}

TEST(EtcdStore, RetryingTheSameLockTxnAfterALostReplyDoesNotCreateASecondKey) {
  EtcdHarness h;
  std::optional<Response> g, first, retry;
  h.at(0s, [&](sim::Process& p) {
    g = h.call(p, 0, h.grant());
    first = h.call(p, 0, h.lock(g->lease), 2ms);  // gives up before the answer comes
    retry = h.call(p, 1, h.lock(g->lease));       // the client moved on to the next member
  });
  h.run(1s);
  EXPECT_FALSE(first);
  ASSERT_TRUE(retry && retry->error.empty());
  // The compare on create_revision == 0 fails: the retry only reads.
  EXPECT_FALSE(retry->succeeded);
  ASSERT_TRUE(retry->kv && retry->owner);
  EXPECT_EQ(retry->kv->create_revision, 2);
  EXPECT_EQ(retry->owner->create_revision, 2);
  EXPECT_EQ(retry->header_revision, 2);
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(h.member(0).keys().size(), 1u);
}

TEST(EtcdStore, TheSecondLockTxnSeesTheFirstCreatedKeyAsOwnerAndRangeFindsItsPredecessor) {
  EtcdHarness h;
  std::optional<Response> ga, gb, la, lb, before_b, before_a;
  h.at(0s, [&](sim::Process& p) {
    ga = h.call(p, 0, h.grant());
    gb = h.call(p, 0, h.grant());
    la = h.call(p, 0, h.lock(ga->lease));
    lb = h.call(p, 2, h.lock(gb->lease));  // through a follower
    // waitDeletes(prefix, myRev - 1): the last-created key below our own.
    before_b = h.call(p, 1, h.last_created("lock/", lb->kv->create_revision - 1));
    before_a = h.call(p, 1, h.last_created("lock/", la->kv->create_revision - 1));
  });
  h.run(1s);
  ASSERT_TRUE(lb && lb->error.empty() && lb->kv && lb->owner);
  EXPECT_TRUE(lb->succeeded);
  EXPECT_EQ(lb->kv->create_revision, 3);
  EXPECT_EQ(lb->owner->create_revision, 2) << "the owner is the first-created key, A's";
  EXPECT_EQ(lb->owner->key, la->kv->key);
  ASSERT_TRUE(before_b && before_b->kv);
  EXPECT_EQ(before_b->kv->key, la->kv->key);
  ASSERT_TRUE(before_a && before_a->error.empty());
  EXPECT_FALSE(before_a->kv) << "nothing was created before the first key";
  // Reads are not write transactions.
  EXPECT_EQ(before_a->header_revision, 3);
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{3, 3, 3}));
}

TEST(EtcdStore, DeletingAKeyAddsOneRevisionButDeletingAMissingKeyChangesNothing) {
  EtcdHarness h;
  std::optional<Response> g, l, d1, d2, d3, get;
  h.at(0s, [&](sim::Process& p) {
    g = h.call(p, 0, h.grant());
    l = h.call(p, 0, h.lock(g->lease));
    d1 = h.call(p, 0, h.del("lock/nothing-here"));
    d2 = h.call(p, 1, h.del(l->kv->key));
    d3 = h.call(p, 0, h.del(l->kv->key));  // Unlock retried: the key is gone already
    get = h.call(p, 2, h.get(l->kv->key));
  });
  h.run(1s);
  ASSERT_TRUE(d1 && d2 && d3 && get);
  EXPECT_EQ(d1->header_revision, 2);
  EXPECT_EQ(d2->header_revision, 3);
  EXPECT_EQ(d3->header_revision, 3);
  EXPECT_FALSE(get->kv);
  EXPECT_EQ(get->header_revision, 3);
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{3, 3, 3}));
  EXPECT_TRUE(h.member(0).keys().empty());
  // The session's lease lives on: Unlock deletes only the key.
  EXPECT_TRUE(h.member(0).has_lease(g->lease));
}

TEST(EtcdStore, ALockTxnWithAnUnknownLeaseFailsAndChangesNothing) {
  EtcdHarness h;
  std::optional<Response> l;
  h.at(0s, [&](sim::Process& p) { l = h.call(p, 0, h.lock(/*lease=*/999)); });
  h.run(1s);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->error, "lease not found");
  EXPECT_FALSE(l->succeeded);
  EXPECT_EQ(h.revisions(), (std::vector<std::int64_t>{1, 1, 1}));
  EXPECT_TRUE(h.member(0).keys().empty());
}

TEST(EtcdStore, AWatchFromAnOldRevisionDeliversADeletionThatHappenedBeforeTheWatchWasCreated) {
  EtcdHarness h;
  std::optional<Response> g, l, range;
  std::string key;
  h.at(0s, [&](sim::Process& p) {
    g = h.call(p, 0, h.grant());
    l = h.call(p, 0, h.lock(g->lease));
    key = l->kv->key;
    range = h.call(p, 0, h.get(key));  // the waiter's range: header revision 2
    (void)h.call(p, 0, h.del(key));    // deleted at revision 3 ...
    p.sleep(50ms);
    h.send(p, 1, h.watch(key, range->header_revision, 7));  // ... before the watch from revision 2 exists
  });
  h.run(1s);
  ASSERT_EQ(h.inboxes[0]->events.size(), 1u);
  const etcd::WatchEvent& ev = h.inboxes[0]->events[0].event;
  EXPECT_EQ(ev.watch_id, 7u);
  EXPECT_EQ(ev.key, key);
  EXPECT_EQ(ev.revision, 3);
}

TEST(EtcdStore, AWatchFromTheCurrentRevisionDeliversALaterDeletionOnce) {
  EtcdHarness h;
  std::optional<Response> g, l;
  Time deleted_at{0};
  h.at(0s, [&](sim::Process& p) {
    g = h.call(p, 0, h.grant());
    l = h.call(p, 0, h.lock(g->lease));
    h.send(p, 2, h.watch(l->kv->key, l->header_revision + 1, 1));  // a follower serves the watch
    p.sleep(500ms);
    deleted_at = p.sim().now();
    (void)h.call(p, 0, h.del(l->kv->key));
  });
  h.run(2s);
  ASSERT_EQ(h.inboxes[0]->events.size(), 1u);
  EXPECT_GT(h.inboxes[0]->events[0].at, deleted_at);
  EXPECT_EQ(h.inboxes[0]->events[0].event.revision, 3);
}

TEST(EtcdStore, AFollowerForwardsAWriteToTheLeaderAndAnswersOnceItHasAppliedIt) {
  EtcdHarness h;
  std::optional<Response> g;
  h.at(0s, [&](sim::Process& p) { g = h.call(p, 1, h.grant()); });
  h.run(1s);
  ASSERT_TRUE(g && g->error.empty());
  EXPECT_EQ(g->ttl, 3s);
  EXPECT_TRUE(h.member(1).has_lease(g->lease));
  EXPECT_TRUE(h.raft_safety().holds);
}

TEST(EtcdStore, AMemberThatKnowsNoLeaderAnswersNoLeaderAtOnce) {
  EtcdHarness h;
  std::optional<Response> g;
  Time answered{0};
  // etcd-1 alone: after its election timeout it campaigns, loses contact
  // with any leader and then knows none.
  h.observe(100ms, [&] { h.isolate({h.members[1]}); });
  h.at(5s, [&](sim::Process& p) {
    g = h.call(p, 1, h.grant());
    answered = p.sim().now();
  });
  // The tester must reach etcd-1 although it is isolated from the cluster.
  h.observe(4900ms, [&] {
    h.sim.heal();
    sim::Partition part;
    part.groups = {{h.members[1], h.tester(0)}, {h.members[0], h.members[2]}};
    h.sim.add_partition(part);
  });
  h.run(7s);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->error, "no leader");
  EXPECT_EQ(answered, 5s + 2ms) << "answered at once, one round trip";
}

}  // namespace
}  // namespace fencesim::testing
