#include "models/etcd/raft/safety.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

namespace fencesim::raft {

namespace {

std::string t(sim::Time at) { return sim::format_duration(at); }

std::string quoted(const std::string& command) { return command.empty() ? "(empty entry)" : "\"" + command + "\""; }

std::string what(const RaftEvent& e) { return e.kind == EventKind::kCommit ? "committed" : "applied"; }

SafetyVerdict violated(const RaftEvent& e, std::string rule, std::string summary, std::vector<std::string> story,
                       std::uint64_t checked) {
  SafetyVerdict v;
  v.holds = false;
  v.rule = std::move(rule);
  v.summary = std::move(summary);
  v.story = std::move(story);
  v.at = e.at;
  v.checked = checked;
  return v;
}

}  // namespace

namespace {

/// The rules of Raft's Figure 3 (and linearizable reads), checked event by
/// event in history order; each `on_*` returns the first violation, if any.
class SafetyCheck {
 public:
  std::optional<SafetyVerdict> step(const RaftEvent& e) {
    ++n_;
    switch (e.kind) {
      case EventKind::kBecameLeader: return on_leader(e);
      case EventKind::kCommit:
      case EventKind::kApply: return on_commit_or_apply(e);
      case EventKind::kTruncate: return on_truncate(e);
      case EventKind::kCrash:
      case EventKind::kRestart: last_applied_of(e.member) = 0; return std::nullopt;
      case EventKind::kRead: return on_read(e);
      case EventKind::kSteppedDown: return std::nullopt;
    }
    return std::nullopt;
  }
  std::uint64_t checked() const { return n_; }

 private:
  struct Known {
    Term term = 0;
    Command command;
    const RaftEvent* first = nullptr;   ///< first commit or apply of this index; null: none yet
    const RaftEvent* commit = nullptr;  ///< first commit of this index
  };

  /// Election safety: at most one leader per term.
  std::optional<SafetyVerdict> on_leader(const RaftEvent& e) {
    auto [it, fresh] = leader_of_.emplace(e.term, &e);
    if (fresh || it->second->member == e.member) return std::nullopt;
    const RaftEvent& first = *it->second;
    return violated(e, "election safety",
                    fmt::format("two leaders of term {}: {} at {} and {} at {}", e.term, first.member, t(first.at),
                                e.member, t(e.at)),
                    {fmt::format("1. at {} {} became leader of term {}", t(first.at), first.member, e.term),
                     fmt::format("2. at {} {} became leader of the same term {}", t(e.at), e.member, e.term)},
                    n_);
  }

  /// State machine safety (one entry per index, committed entries never
  /// change) and, for applies, apply order.
  std::optional<SafetyVerdict> on_commit_or_apply(const RaftEvent& e) {
    if (e.index >= known_.size()) known_.resize(e.index + 1);
    Known& k = known_[e.index];
    const bool fresh = k.first == nullptr;
    if (fresh) k = Known{e.term, e.command, &e, nullptr};
    if (!fresh && (k.term != e.term || k.command != e.command)) return disagreement(e, k);
    if (e.kind == EventKind::kCommit) {
      if (k.commit == nullptr) k.commit = &e;
      if (e.index > highest_) {
        highest_ = e.index;
        frontier_.emplace_back(e.at, highest_);
      }
      return std::nullopt;
    }
    Index& last = last_applied_of(e.member);
    if (e.index != last + 1) {
      return violated(e, "apply order",
                      fmt::format("at {} {} applied index {} after index {} (incarnation {})", t(e.at), e.member,
                                  e.index, last, e.incarnation),
                      {fmt::format("1. {} had applied up to index {}", e.member, last),
                       fmt::format("2. at {} it applied index {} (term {})", t(e.at), e.index, e.term)},
                      n_);
    }
    last = e.index;
    return std::nullopt;
  }

  SafetyVerdict disagreement(const RaftEvent& e, const Known& k) const {
    const RaftEvent& first = k.commit != nullptr ? *k.commit : *k.first;
    const bool lost = first.kind == EventKind::kCommit;
    return violated(
        e, "state machine safety",
        fmt::format("at {} {} {} index {} as term {} {}, but index {} had been {} as term {} {} by {} at {}", t(e.at),
                    e.member, what(e), e.index, e.term, quoted(e.command), e.index, what(first), first.term,
                    quoted(first.command), first.member, t(first.at)),
        {fmt::format("1. at {} {} {} index {} = term {} {}", t(first.at), first.member, what(first), e.index,
                     first.term, quoted(first.command)),
         fmt::format("2. at {} {} {} index {} = term {} {}{}", t(e.at), e.member, what(e), e.index, e.term,
                     quoted(e.command), lost ? " — the committed entry was lost or changed" : " — members disagree")},
        n_);
  }

  /// A member never removes entries it had committed.
  std::optional<SafetyVerdict> on_truncate(const RaftEvent& e) const {
    if (e.index > e.commit) return std::nullopt;
    return violated(e, "committed entry lost",
                    fmt::format("at {} {} (term {}) removed its log from index {} although its commit index "
                                "was {}: {}",
                                t(e.at), e.member, e.term, e.index, e.commit, e.detail),
                    {fmt::format("1. {} had committed up to index {}", e.member, e.commit),
                     fmt::format("2. at {} a leader of term {} made it remove {}", t(e.at), e.term, e.detail)},
                    n_);
  }

  /// A read sees at least every index committed before it was asked.
  std::optional<SafetyVerdict> on_read(const RaftEvent& e) const {
    // Highest index committed strictly before the read was asked.
    auto it = std::lower_bound(frontier_.begin(), frontier_.end(), e.issued_at,
                               [](const std::pair<sim::Time, Index>& f, sim::Time x) { return f.first < x; });
    if (it == frontier_.begin()) return std::nullopt;
    const auto& [when, idx] = *std::prev(it);
    if (e.index >= idx) return std::nullopt;
    return violated(e, "linearizable read",
                    fmt::format("at {} {} answered a read asked at {} at index {}, but index {} was "
                                "committed at {}",
                                t(e.at), e.member, t(e.issued_at), e.index, idx, t(when)),
                    {fmt::format("1. at {} index {} was committed", t(when), idx),
                     fmt::format("2. at {} a read was asked on {}", t(e.issued_at), e.member),
                     fmt::format("3. at {} it was answered at read index {}: a stale read", t(e.at), e.index)},
                    n_);
  }

  /// Per member, this incarnation: its last applied index; a cluster has a
  /// handful of members, so a linear search.
  Index& last_applied_of(const std::string& member) {
    for (auto& [name, index] : last_applied_) {
      if (name == member) return index;
    }
    return last_applied_.emplace_back(member, 0).second;
  }

  std::map<Term, const RaftEvent*> leader_of_;
  std::vector<Known> known_;  ///< by log index (indices are dense from 1): a vector, not a map
  std::vector<std::pair<std::string, Index>> last_applied_;
  std::vector<std::pair<sim::Time, Index>> frontier_;  ///< (true time, highest index committed so far)
  Index highest_ = 0;
  std::uint64_t n_ = 0;
};

}  // namespace

SafetyVerdict check_raft_safety(const RaftHistory& h) {
  SafetyCheck check;
  for (const RaftEvent& e : h.events) {
    if (auto v = check.step(e)) return std::move(*v);
  }
  SafetyVerdict v;
  v.holds = true;
  v.summary = fmt::format(
      "{} events: one leader per term, every member applied the same entries in order, no "
      "committed entry lost, reads linearizable",
      check.checked());
  v.checked = check.checked();
  return v;
}

}  // namespace fencesim::raft
