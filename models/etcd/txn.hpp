// models/etcd/txn.hpp — etcd's general transaction: compares, then the
// success or the failure branch of puts, ranges and deletes, as one write
// at one revision. What program clients send (docs/PROTOCOL.md "etcd
// requests": Txn, DeleteRange with a range end); the built-in client keeps
// its own Mutex transaction (ReqKind::kLockTxn).
//
// Behaviour modelled, with sources (etcd v3.5):
//  * server/etcdserver/apply.go (v3.5; txn/txn.go in 3.6) applyCompare /
//    compareKV: a compare reads every key in [key, range_end); with none it
//    compares a zero KeyValue (version, revisions and lease 0) — except a
//    VALUE compare, which then fails; VALUE compares bytes (bytes.Compare),
//    the others int64. Every key of the range must satisfy it; every compare
//    must hold for the success branch.
//  * api/v3rpc/key.go checkTxnReqsPermission / checkIntervals: a txn that
//    puts a key twice, or puts a key that a delete of the same branch
//    covers, is refused before Raft with "duplicate key given in txn
//    request".
//  * apply.go checkRequestPut: a put with a lease the lessor does not know
//    fails the whole txn with "lease not found", before anything applies.
//  * mvcc/kvstore_txn.go: the txn's writes share one revision (the store's
//    + 1), made only if something changed (a put always does; a delete only
//    of a key that exists); a range inside the txn sees the txn's earlier
//    writes.
//  * A range end of "" is the key alone; "\0" is every key from `key`
//    (mkGteRange); the clientv3 WithPrefix end is prefix_end(key).
// Not modelled: nested txns, a range's sort order other than by key,
// revision-pinned reads (every read is at the current revision), prev_kv.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fencesim::etcd {

/// clientv3.WithPrefix's range end: `prefix` with its last byte below 0xff
/// incremented and what follows dropped; "\0" (every key) when every byte
/// is 0xff or the prefix is empty.
std::string prefix_end(std::string_view prefix);

/// Whether `key` lies in [from, range_end) (range_end "" : key == from;
/// "\0": key >= from).
bool key_in_range(std::string_view key, std::string_view from, std::string_view range_end);

struct TxnCompare {
  enum class Target : std::uint8_t { kVersion, kCreate, kMod, kValue, kLease };
  enum class Result : std::uint8_t { kEqual, kGreater, kLess, kNotEqual };
  std::string key;
  std::string range_end;  ///< "" for the key alone
  Target target = Target::kVersion;
  Result result = Result::kEqual;
  std::int64_t number = 0;  ///< version, revision or lease
  std::string value;        ///< Target::kValue
};

struct TxnOp {
  enum class Kind : std::uint8_t { kPut, kRange, kDelete };
  Kind kind = Kind::kRange;
  std::string key;
  std::string range_end;   ///< kRange, kDelete: "" for the key alone
  std::string value;       ///< kPut
  std::int64_t lease = 0;  ///< kPut: 0 for none
  std::int64_t limit = 0;  ///< kRange: at most this many keys; 0 for all
};

struct TxnSpec {
  std::vector<TxnCompare> compare;
  std::vector<TxnOp> success;
  std::vector<TxnOp> failure;

  /// "duplicate key given in txn request" when a branch puts a key twice or
  /// puts a key that one of its deletes covers (key.go checkIntervals); ""
  /// otherwise.
  std::string check() const;
  /// A byte string that `parse` turns back into the same txn (for the Raft
  /// command's text); fields are length-prefixed, so any byte may occur.
  std::string serialize() const;
  /// The inverse of serialize; throws sim::ModelBug on malformed text.
  static TxnSpec parse(std::string_view text);
};

}  // namespace fencesim::etcd
