// models/resource/check.cpp — the built-in resource checks as
// implementations of ResourceCheck (models/policy.hpp); the rules are those
// of resource.hpp and docs/FORMAT.md "Resource".
#include <fmt/format.h>

#include <algorithm>

#include "models/resource/resource.hpp"

namespace fencesim::resource {

namespace {

class UnfencedCheck final : public ResourceCheck {
 public:
  std::string name() const override { return "unfenced"; }
  ResourceDecision decide(const PolicyContext&, const ResourceRequest&, ResourceMarks&) const override {
    return {true, {}};
  }
};

/// Kleppmann's fencing: the storage remembers the highest token it saw.
class FencedCheck final : public ResourceCheck {
 public:
  FencedCheck(FenceCheck check, bool fence_reads) : strict_(check == FenceCheck::kStrict), reads_(fence_reads) {}
  std::string name() const override { return "fenced"; }
  bool fences_reads() const override { return reads_; }
  ResourceDecision decide(const PolicyContext&, const ResourceRequest& r, ResourceMarks& s) const override {
    if (r.op == ResourceOp::kRead) {
      if (!reads_) return {true, {}};
      if (!r.token) return {false, "read without a token"};
      if (*r.token < s.last_seen) return {false, fmt::format("token {} < last_seen {}", *r.token, s.last_seen)};
      s.last_seen = *r.token;
      return {true, {}};
    }
    if (!r.token) return {false, "write without a token"};
    if (*r.token < s.last_seen) return {false, fmt::format("token {} < last_seen {}", *r.token, s.last_seen)};
    if (strict_ ? *r.token <= s.last_written : *r.token < s.last_written) {
      return {false, fmt::format("token {} {} last_written {}", *r.token, strict_ ? "<=" : "<", s.last_written)};
    }
    s.last_written = *r.token;
    s.last_seen = std::max(s.last_seen, *r.token);
    return {true, {}};
  }

 private:
  bool strict_;
  bool reads_;
};

/// Compare-and-set on the version read (Kleppmann, "How to do distributed
/// locking": the lock-free alternative).
class CasCheck final : public ResourceCheck {
 public:
  std::string name() const override { return "cas"; }
  bool compares_versions() const override { return true; }
  ResourceDecision decide(const PolicyContext&, const ResourceRequest& r, ResourceMarks& s) const override {
    if (r.op == ResourceOp::kRead) return {true, {}};
    if (!r.version_read || *r.version_read != s.version) {
      return {false, fmt::format("version {} != {}", r.version_read ? *r.version_read : -1, s.version)};
    }
    return {true, {}};
  }
};

}  // namespace

std::shared_ptr<const ResourceCheck> builtin_check(const ResourceSpec& spec) {
  switch (spec.kind) {
    case ResourceKind::kFenced: return std::make_shared<FencedCheck>(spec.check, spec.fence_reads);
    case ResourceKind::kCas: return std::make_shared<CasCheck>();
    case ResourceKind::kUnfenced:
    case ResourceKind::kIdempotent: break;  // the queue's ledger (ledger.cpp); its register is never written
    case ResourceKind::kProgram: break;     // a run's ProgramCheck (models/program/program_check.hpp)
  }
  return std::make_shared<UnfencedCheck>();
}

std::shared_ptr<const ResourceCheck> check_of(const ResourceSpec& spec) {
  return spec.custom_check ? spec.custom_check : builtin_check(spec);
}

}  // namespace fencesim::resource
