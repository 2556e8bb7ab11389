// report/history_ops.hpp — a run's History as the operations of an outside
// linearizability checker: invoke/complete pairs per client process. The two
// writers (history_edn.cpp: Jepsen's EDN; history_porcupine.cpp: Porcupine's
// JSON) render this one list, so they agree op for op.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/history.hpp"
#include "models/scenario.hpp"

namespace fencesim::history_export {

/// How an operation completed, in Jepsen's words (jepsen/src/jepsen/history.clj,
/// jepsen 0.3.x: :ok took effect, :fail certainly did not, :info unknown —
/// the op may take effect at any time after its invocation, or never).
enum class Outcome { kOk, kFail, kInfo };

/// What the operation was. The mutex ops follow knossos.model/mutex
/// (knossos 0.3.x src/knossos/model.clj: :acquire when free, :release when
/// held); the register ops follow knossos.model/cas-register (:read a value,
/// :cas [expected new]).
enum class OpKind { kAcquire, kRelease, kRead, kCas };

struct Op {
  OpKind kind = OpKind::kAcquire;
  Outcome outcome = Outcome::kOk;
  std::size_t client = 0;     ///< index into Scenario::clients
  int process = 0;            ///< the checker's process: see build_ops
  sim::Time invoke{0};        ///< true time, ns since the start of the run
  sim::Time complete{0};      ///< true time of the completion (== invoke for :info)
  std::int64_t value = 0;     ///< :read: the value returned; :cas: the new value
  std::int64_t expected = 0;  ///< :cas: the value the client had read (the value it expects to replace)
  /// The lock (lock.keys) or message (the queue design) the op is about, and
  /// so which mutex or register row it belongs to; empty with one lock.
  std::string key;
};

/// Every operation of the run, ordered by (invoke, then the order ops were
/// built: mutex ops of each belief, then register ops, by record order).
/// Processes: client i is process i while its ops follow one another; an op
/// that starts before the client's previous op completed, or after one of
/// its ops ended :info, gets the next unused process number (starting at the
/// number of clients), as Jepsen retires a process whose op crashed.
std::vector<Op> build_ops(const Scenario& s, const History& h);

/// One invoke or completion, in history order (time, then op order; an op's
/// invocation before its completion).
struct Event {
  const Op* op = nullptr;
  bool completion = false;
  sim::Time at{0};
};
std::vector<Event> order_events(const std::vector<Op>& ops);

}  // namespace fencesim::history_export
