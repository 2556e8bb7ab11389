// models/words.hpp — the JSON words of every enum of the scenario format, one
// table per enum.
//
// The loader reads a value with `from_word`, lists the choices in its
// messages with `word_list` (in table order), and the writer, the reports and
// `to_string` spell a value with `word`. A word is therefore spelt in exactly
// one place; tests/loader/words_schema_test.cpp checks that the JSON Schema's
// enums accept exactly these words.
//
//   word(RedisToken::kIncr)                    // "incr"
//   from_word<RedisToken>("none")              // RedisToken::kNone
//   word_list<RedisToken>()                    // {"incr", "none"}
//
// A new enum gets a `Words<E>` specialisation here; a new value gets a row.
// (lock.service's words are the service descriptors' names, in the
// registry's order: models/lock_service.hpp; a fault kind's, its row of the
// fault table: models/faults.hpp.)
// `word` of a value with no row returns "?" (a bug: every value has a row).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario.hpp"
#include "sim/clock.hpp"

namespace fencesim {

/// One value and its JSON word.
template <class E>
struct Word {
  E value;
  std::string_view text;
};

/// The table of enum E: `Words<E>::kTable`, in the order messages list them.
template <class E>
struct Words;

template <>
struct Words<RedisToken> {
  static constexpr std::array<Word<RedisToken>, 2> kTable = {
      {{RedisToken::kIncr, "incr"}, {RedisToken::kNone, "none"}}};
};
template <>
struct Words<RedisPersistence> {
  static constexpr std::array<Word<RedisPersistence>, 3> kTable = {{{RedisPersistence::kNone, "none"},
                                                                    {RedisPersistence::kAofAlways, "aof_always"},
                                                                    {RedisPersistence::kAofEverysec, "aof_everysec"}}};
};
template <>
struct Words<EtcdToken> {
  static constexpr std::array<Word<EtcdToken>, 3> kTable = {{{EtcdToken::kCreateRevision, "create_revision"},
                                                             {EtcdToken::kHeaderRevision, "header_revision"},
                                                             {EtcdToken::kNone, "none"}}};
};
template <>
struct Words<TableExpiry> {
  static constexpr std::array<Word<TableExpiry>, 3> kTable = {{{TableExpiry::kHolderClock, "holder_clock"},
                                                               {TableExpiry::kDbClock, "db_clock"},
                                                               {TableExpiry::kObserved, "observed"}}};
};
template <>
struct Words<TableToken> {
  static constexpr std::array<Word<TableToken>, 2> kTable = {
      {{TableToken::kNone, "none"}, {TableToken::kVersion, "version"}}};
};
template <>
struct Words<ResourceKind> {
  static constexpr std::array<Word<ResourceKind>, 5> kTable = {{{ResourceKind::kUnfenced, "unfenced"},
                                                                {ResourceKind::kFenced, "fenced"},
                                                                {ResourceKind::kCas, "cas"},
                                                                {ResourceKind::kIdempotent, "idempotent"},
                                                                {ResourceKind::kProgram, "program"}}};
};
template <>
struct Words<FenceCheck> {
  static constexpr std::array<Word<FenceCheck>, 2> kTable = {
      {{FenceCheck::kStrict, "strict"}, {FenceCheck::kMonotonic, "monotonic"}}};
};
template <>
struct Words<WorkloadKind> {
  static constexpr std::array<Word<WorkloadKind>, 5> kTable = {
      {{WorkloadKind::kSequenceAllocator, "sequence_allocator"},
       {WorkloadKind::kCounter, "counter"},
       {WorkloadKind::kWriter, "writer"},
       {WorkloadKind::kQueueWorker, "queue_worker"},
       {WorkloadKind::kLeader, "leader"}}};
};
template <>
struct Words<RetryBackoff> {
  static constexpr std::array<Word<RetryBackoff>, 2> kTable = {
      {{RetryBackoff::kJitter, "jitter"}, {RetryBackoff::kFixed, "fixed"}}};
};
template <>
struct Words<RetryStrategy> {
  static constexpr std::array<Word<RetryStrategy>, 3> kTable = {{{RetryStrategy::kNone, "none"},
                                                                 {RetryStrategy::kLinear, "linear"},
                                                                 {RetryStrategy::kExponential, "exponential"}}};
};
template <>
struct Words<LeaseLossPolicy> {
  static constexpr std::array<Word<LeaseLossPolicy>, 2> kTable = {
      {{LeaseLossPolicy::kContinue, "continue"}, {LeaseLossPolicy::kAbort, "abort"}}};
};
template <>
struct Words<ClientLibrary> {
  static constexpr std::array<Word<ClientLibrary>, 11> kTable = {{{ClientLibrary::kGo, "go"},
                                                                  {ClientLibrary::kJetcd, "jetcd"},
                                                                  {ClientLibrary::kCurator, "curator"},
                                                                  {ClientLibrary::kKazoo, "kazoo"},
                                                                  {ClientLibrary::kGeneric, "generic"},
                                                                  {ClientLibrary::kRedisson, "redisson"},
                                                                  {ClientLibrary::kRedissonFenced, "redisson-fenced"},
                                                                  {ClientLibrary::kRedsync, "redsync"},
                                                                  {ClientLibrary::kBsmRedislock, "bsm-redislock"},
                                                                  {ClientLibrary::kShedLock, "shedlock"},
                                                                  {ClientLibrary::kClientGo, "client-go"}}};
};
template <>
struct Words<ZkToken> {
  static constexpr std::array<Word<ZkToken>, 3> kTable = {
      {{ZkToken::kCzxid, "czxid"}, {ZkToken::kSequence, "sequence"}, {ZkToken::kNone, "none"}}};
};
template <>
struct Words<HzToken> {
  static constexpr std::array<Word<HzToken>, 2> kTable = {{{HzToken::kFence, "fence"}, {HzToken::kNone, "none"}}};
};
template <>
struct Words<ConnectionPolicy> {
  static constexpr std::array<Word<ConnectionPolicy>, 3> kTable = {{{ConnectionPolicy::kStandard, "standard"},
                                                                    {ConnectionPolicy::kSession, "session"},
                                                                    {ConnectionPolicy::kNone, "none"}}};
};
template <>
struct Words<ClockSelect> {
  static constexpr std::array<Word<ClockSelect>, 3> kTable = {
      {{ClockSelect::kWall, "wall"}, {ClockSelect::kMonotonic, "monotonic"}, {ClockSelect::kBoth, "both"}}};
};
/// A node's clock, as `lock.expiry_clock` and `clients[].renew_clock` name it.
template <>
struct Words<sim::ClockKind> {
  static constexpr std::array<Word<sim::ClockKind>, 2> kTable = {
      {{sim::ClockKind::kWall, "wall"}, {sim::ClockKind::kMonotonic, "monotonic"}}};
};
template <>
struct Words<Expectation> {
  static constexpr std::array<Word<Expectation>, 2> kTable = {
      {{Expectation::kHolds, "holds"}, {Expectation::kViolated, "violated"}}};
};
template <>
struct Words<Property> {
  static constexpr std::array<Word<Property>, 7> kTable = {{{Property::kMutualExclusion, "mutual_exclusion"},
                                                            {Property::kNoStaleWrite, "no_stale_write"},
                                                            {Property::kNoLostUpdate, "no_lost_update"},
                                                            {Property::kTokenMonotonic, "token_monotonic"},
                                                            {Property::kProgress, "progress"},
                                                            {Property::kRaftSafety, "raft_safety"},
                                                            {Property::kNoDuplicateEffect, "no_duplicate_effect"}}};
};

/// The word of `e`, or "?" for a value with no row.
template <class E>
constexpr const char* word(E e) {
  for (const Word<E>& w : Words<E>::kTable) {
    if (w.value == e) return w.text.data();
  }
  return "?";
}

/// The value whose word is `text`, or nullopt.
template <class E>
constexpr std::optional<E> from_word(std::string_view text) {
  for (const Word<E>& w : Words<E>::kTable) {
    if (w.text == text) return w.value;
  }
  return std::nullopt;
}

/// Every word of E, in table order (the order messages list them).
template <class E>
std::vector<std::string> word_list() {
  std::vector<std::string> out;
  for (const Word<E>& w : Words<E>::kTable) out.emplace_back(w.text);
  return out;
}

}  // namespace fencesim
