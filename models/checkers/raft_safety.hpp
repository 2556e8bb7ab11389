// models/checkers/raft_safety.hpp — the raft_safety property.
//
// The check itself reads the Raft history (models/etcd/raft/safety.hpp); the
// etcd service runs it after the run and hands the verdict over as its own
// verdict (LockService::own_verdicts), which check_all takes.
#pragma once

#include "models/checkers/verdict.hpp"
#include "models/etcd/raft/safety.hpp"

namespace fencesim {

/// The raft_safety Verdict (no expectation applied) of a Raft check.
Verdict raft_safety_verdict(const raft::SafetyVerdict& r);

}  // namespace fencesim
