// models/table/table.hpp — a lock table: lock records in one database node
// whose expiry a clock outside the database may decide (`lock.service:
// "table"`, docs/FORMAT.md "Lock table").
//
// Modelled from the libraries' own sources:
//  * ShedLock (github.com/lukas-krecan/ShedLock), `expiry: "holder_clock"`:
//    shedlock-core support/StorageBasedLockProvider.java (doLock: the first
//    attempt of a process for a lock name INSERTs the record and, when that
//    fails on the duplicate key, UPDATEs it; later attempts only UPDATE),
//    providers/jdbc/shedlock-provider-jdbc-template JdbcTemplateStorageAccessor.java
//    (insertRecord / updateRecord / extend / unlock, each one statement in its
//    own transaction) and SqlStatementsSource.java, whose statements take
//    `:now` and `:lockUntil` = now + lockAtMostFor from the *client's* clock
//    (LockConfiguration, ClockProvider.now(), read when the lock attempt
//    starts):
//        UPDATE shedlock SET lock_until = :lockUntil, locked_at = :now, locked_by = :lockedBy
//          WHERE name = :name AND lock_until <= :now                       -- acquire
//        UPDATE shedlock SET lock_until = :lockUntil
//          WHERE name = :name AND locked_by = :lockedBy AND lock_until > :now  -- extend
//        UPDATE shedlock SET lock_until = :unlockTime WHERE name = :name       -- unlock
//    (the unlock of the client-time statements has no locked_by condition:
//    a late unlock releases whoever holds the record then).
//  * ShedLock's `usingDbTime()`, `expiry: "db_clock"`:
//    PostgresSqlServerTimeStatementsSource.java (and the other
//    *ServerTimeStatementsSource): the same statements with `now` the
//    database's CURRENT_TIMESTAMP and lock_until = now + lockAtMostFor
//    computed in the statement; unlock is `... WHERE name = :name AND
//    locked_by = :lockedBy`.
//  * client-go leader election (k8s.io/client-go, tools/leaderelection/
//    leaderelection.go as in kubernetes/kubernetes staging, and
//    resourcelock/leaselock.go), `expiry: "observed"`: tryAcquireOrRenew
//    reads the record (holder identity, lease duration, renew time), and
//    when the record differs from the one it saw last it stores it with
//    observedTime = clock.Now() (a monotonic reading); it may take the
//    record over only when `observedTime + LeaseDuration` is not after now,
//    i.e. after it has seen the same record for a whole lease duration on
//    its own clock. Every write is an Update of the Lease object carrying the
//    resourceVersion read (optimistic concurrency: a compare-and-set on the
//    version). doc.go: "This implementation does not guarantee that only one
//    client is acting as a leader (a.k.a. fencing)" and it "is not tolerant
//    to arbitrary clock skew rate". The DynamoDB lock client
//    (awslabs/amazon-dynamodb-lock-client, AmazonDynamoDBLockClient.java
//    acquireLock / sendHeartbeat, LockItem.java) works the same way: a
//    record version number that "changes each time the lock is updated", a
//    candidate that waits the lease duration after last seeing it change on
//    its own clock, and conditional writes on that number.
//
// Shape: one durable node `db` (group "tables") holding one lock record
// (LockSpec::key). Its requests are single atomic statements; the database
// is linearizable here, its own replication is out of scope. Every write
// bumps the record's version (a counter, as Kubernetes' resourceVersion
// grows); with `token: "version"` the version after an acquisition is the
// fencing token.
//
//   Insert   (ShedLock) no record yet: create it, held by the sender until
//            lock_until; otherwise a duplicate key (refused).
//   Acquire  (ShedLock) `lock_until [+ lock_delay] <= now`: take it.
//   Extend   (ShedLock) held by the sender and `lock_until > now`: move lock_until.
//   Unlock   (ShedLock) lock_until = now (holder_clock: whoever holds it;
//            db_clock: only the sender's record).
//   Get      (observed) the record: holder, version, lease duration.
//   Cas      (observed) version equal to the expected one: write holder and
//            lease duration (an empty holder releases), new version.
// `now` and `lock_until` come with the request for holder_clock and are the
// database's wall clock for db_clock; `observed` keeps no time at all.
//
// Lease end at the service (History::lease_end, by lease value): when
// another client's acquisition overwrites the record, when it is unlocked or
// released, and for db_clock also when the database's wall clock reaches
// lock_until + lock_delay (an observer: a pause or crash of `db` does not
// delay it). With holder_clock and observed no clock at the service decides
// anything, so the lease is held until someone takes the record over.
// A lock_delay blocks acquisition after a lease ran out, not after an
// unlock: `lock_until + lock_delay <= now` unless the record was unlocked.
// Durable: a crash keeps the record; while down or paused `db` answers nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/lock_service.hpp"

namespace fencesim::table {

enum class Op { kInsert, kAcquire, kExtend, kUnlock, kGet, kCas };
const char* to_string(Op);

/// One statement. `holder` is locked_by (ShedLock: the host name; client-go:
/// the identity), here the client's name; `value` is the attempt's unique
/// lease value (what the History knows the lease by).
struct Statement final : sim::Payload {
  Op op = Op::kAcquire;
  std::string holder;
  std::string value;
  Time now{0};                        ///< holder_clock: the client's wall-clock reading
  Time lock_until{0};                 ///< holder_clock: now + lockAtMostFor
  std::int64_t expected_version = 0;  ///< Cas: the version read (0: no record yet)
  Duration lease_duration{0};         ///< Cas: the record's leaseDurationSeconds
  std::string describe() const override;
};

/// The answer: whether the statement changed a row, and the record after it.
struct Result final : sim::Payload {
  bool ok = false;
  bool found = false;  ///< a record exists
  std::string holder;  ///< "" when free (observed: released)
  std::int64_t version = 0;
  Duration lease_duration{0};
  std::string describe() const override;
};

const ServiceDescriptor& descriptor();

}  // namespace fencesim::table
