// models/checkers/leader_progress.cpp — progress for the `leader` workload:
// some candidate leads, and nobody is stuck on an error.
// Definition: docs/FORMAT.md "Progress and settle" (the leader workload).
//
// Why not the per-iteration rule of progress.cpp: a leader election has
// standbys by design. client-go's LeaderElector (k8s.io/client-go
// tools/leaderelection/leaderelection.go, v0.36.3, `acquire`) retries
// tryAcquireOrRenew every RetryPeriod for as long as another candidate's
// record is valid, so a standby's first write waits for the whole run while
// the leader is healthy. What an election promises is that *someone* leads:
// after the leader is lost, a waiting candidate takes over once the lease
// has run out (LeaseDuration) and its next retry comes (RetryPeriod with
// jitter) — the bound the scenario's `settle` stands for.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"
#include "models/faults.hpp"

namespace fencesim {

using namespace checkers;

namespace {

struct Span {
  Time from{0}, to{0};
  std::size_t source = 0;  ///< belief (held) or iteration (waiting) index
};

std::string lock_of(const History& h, const std::string& client) {
  auto it = h.client_locks.find(client);
  return it == h.client_locks.end() ? std::string() : it->second;
}

/// Where the lock is held by a belief the service backs: from the grant's
/// handling until the belief ends or the lease ends at the service
/// (whichever is first), per lock.
std::map<std::string, std::vector<Span>> held_spans(const History& h, const CheckContext& ctx,
                                                    const std::set<std::string>& candidates) {
  std::map<std::string, std::vector<Span>> out;
  for (std::size_t i = 0; i < h.beliefs.size(); ++i) {
    const BeliefRecord& b = h.beliefs[i];
    if (!candidates.count(b.client)) continue;
    Time to = belief_end(b, ctx);
    if (auto e = h.lease_ends.find(b.value); e != h.lease_ends.end()) to = std::min(to, e->second.at);
    if (b.start < to) out[b.lock].push_back(Span{b.start, to, i});
  }
  for (auto& [lock, spans] : out) {
    std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) { return x.from < y.from; });
  }
  return out;
}

/// When a candidate stopped waiting to acquire for iteration `it`: the
/// grant, the crash that ended the iteration, or the end of the run.
Time waiting_end(const History& h, const CheckContext& ctx, const IterationRecord& it) {
  if (it.acquired) return *it.acquired;
  if (it.outcome == "crashed") {
    for (const FaultRecord& f : h.faults) {
      if (!f.skipped && fault_info(f.kind).kills && f.target == it.client && f.start >= *it.acquire_sent) {
        return f.start;
      }
    }
  }
  return ctx.run_end;
}

/// The first instant in [from, to) that no span of `held` covers, with the
/// end of that gap (clipped to `to`); nullopt when [from, to) is covered.
std::optional<Span> first_gap(const std::vector<Span>& held, Time from, Time to) {
  Time t = from;
  for (const Span& s : held) {
    if (s.to <= t) continue;
    if (s.from > t) return Span{t, std::min(s.from, to), 0};
    t = s.to;
    if (t >= to) return std::nullopt;
  }
  return t < to ? std::optional<Span>(Span{t, to, 0}) : std::nullopt;
}

/// The story of a gap: who led last, who waited, and the faults around.
std::vector<std::string> gap_story(const History& h, const CheckContext& ctx, const std::vector<Span>& held,
                                   const IterationRecord& waiter, Time from, Time after, sim::Duration settle) {
  std::vector<std::pair<Time, std::string>> steps;
  const BeliefRecord* last = nullptr;
  for (const Span& s : held) {
    if (s.to <= from) last = &h.beliefs[s.source];
  }
  if (last != nullptr) {
    steps.emplace_back(last->start, fmt::format("{}: {} became leader ({})", format_time(last->start), last->client,
                                                token_text(last->token)));
    if (auto e = h.lease_ends.find(last->value); e != h.lease_ends.end() && e->second.at <= belief_end(*last, ctx)) {
      steps.emplace_back(e->second.at, fmt::format("{}: {}'s lease ended at the service: {}", format_time(e->second.at),
                                                   last->client, e->second.reason));
    } else {
      steps.emplace_back(belief_end(*last, ctx),
                         fmt::format("{}: {} stopped leading ({})", format_time(belief_end(*last, ctx)), last->client,
                                     last->end ? last->end_reason : "end of run"));
    }
  }
  if (ctx.any_fault) steps.emplace_back(after, fmt::format("{}: the last fault ended", format_time(after)));
  steps.emplace_back(*waiter.acquire_sent, fmt::format("{}: {} started trying to become leader (iteration {})",
                                                       format_time(*waiter.acquire_sent), waiter.client, waiter.index));
  const Time since = last != nullptr ? last->start : Time{0};
  for (const FaultRecord& f : h.faults) {
    if (!f.skipped && f.start >= since && f.start <= from + settle) steps.emplace_back(f.start, fault_line(f));
  }
  steps.emplace_back(from + settle,
                     fmt::format("{}: still no candidate led, {} after {} — longer than the settle time",
                                 format_time(from + settle), sim::format_duration(settle), format_time(from)));
  const auto next = std::find_if(held.begin(), held.end(), [&](const Span& s) { return s.from >= from; });
  if (next != held.end()) {
    const BeliefRecord& b = h.beliefs[next->source];
    steps.emplace_back(b.start, fmt::format("{}: {} became leader{}, {} after {}", format_time(b.start), b.client,
                                            last != nullptr && last->client == b.client ? " again" : "",
                                            sim::format_duration(b.start - from), format_time(from)));
  } else {
    steps.emplace_back(ctx.run_end, fmt::format("{}: the run ended with no candidate leading and {} still waiting",
                                                format_time(ctx.run_end), waiter.client));
  }
  return story_in_time_order(std::move(steps));
}

/// Rule 1: a gap in leadership longer than `settle` while a candidate waits.
bool find_leaderless_gap(const History& h, const CheckContext& ctx, const std::set<std::string>& candidates, Time after,
                         sim::Duration settle, Verdict& v) {
  const auto held = held_spans(h, ctx, candidates);
  static const std::vector<Span> kNone;
  std::optional<std::pair<Time, std::size_t>> first;  // (gap start, waiting iteration)
  for (std::size_t i = 0; i < h.iterations.size(); ++i) {
    const IterationRecord& it = h.iterations[i];
    if (!candidates.count(it.client) || !it.acquire_sent) continue;
    const Time from = std::max(*it.acquire_sent, after), to = waiting_end(h, ctx, it);
    if (from >= to) continue;
    ++v.checked;
    auto lk = held.find(lock_of(h, it.client));
    const std::vector<Span>& spans = lk == held.end() ? kNone : lk->second;
    // The gaps of [from, to): the first one longer than settle counts.
    for (Time t = from; t < to;) {
      const std::optional<Span> gap = first_gap(spans, t, to);
      if (!gap) break;
      if (gap->to - gap->from > settle) {
        if (!first || gap->from < first->first) first = std::make_pair(gap->from, i);
        break;
      }
      t = gap->to;
    }
  }
  if (!first) return false;
  const IterationRecord& it = h.iterations[first->second];
  v.status = Status::kViolated;
  v.at = first->first;
  v.summary = fmt::format(
      "no candidate led from {} for longer than the settle time {} while {} waited to become "
      "leader (iteration {}: {})",
      format_time(first->first), sim::format_duration(settle), it.client, it.index, it.outcome);
  auto lk = held.find(lock_of(h, it.client));
  v.story = gap_story(h, ctx, lk == held.end() ? kNone : lk->second, it, first->first, after, settle);
  return true;
}

/// Rule 2: a candidate stuck on a permanent error of the service.
bool find_stuck_candidate(const History& h, const std::set<std::string>& candidates, Time after, Verdict& v) {
  constexpr std::string_view kFailed = "acquire failed: ";
  for (const IterationRecord& it : h.iterations) {
    if (!candidates.count(it.client) || it.start <= after || !it.outcome.starts_with(kFailed)) continue;
    v.status = Status::kViolated;
    v.at = it.start;
    v.summary = fmt::format(
        "{} cannot become leader: the service answered its acquire (iteration {}, {}) with a "
        "permanent error: {}",
        it.client, it.index, format_time(it.start), it.outcome.substr(kFailed.size()));
    std::vector<std::string> story = {
        fmt::format("{}: {} started trying to become leader (iteration {})", format_time(it.start), it.client,
                    it.index),
        fmt::format("outcome: {} (the error is permanent: every retry gets it)", it.outcome)};
    number(story);
    v.story = std::move(story);
    return true;
  }
  return false;
}

}  // namespace

Verdict check_leader_progress(const History& h, const CheckContext& ctx, sim::Duration settle,
                              const std::set<std::string>& candidates) {
  Verdict v;
  v.property = Property::kProgress;
  if (ctx.any_fault && !ctx.last_fault_end) {
    v.summary = "a fault never ends, so leadership is not checked (holds vacuously)";
    return v;
  }
  const Time after = ctx.last_fault_end.value_or(Time{0});
  if (find_stuck_candidate(h, candidates, after, v)) return v;
  if (find_leaderless_gap(h, ctx, candidates, after, settle, v)) return v;
  const std::string since = ctx.any_fault ? " after the last fault" : " (no fault ran)";
  v.summary = v.checked == 0
                  ? "no candidate waited to become leader" + since + " (holds vacuously)"
                  : fmt::format("some candidate led within {} of every wait to become leader{} ({} {})",
                                sim::format_duration(settle), since, v.checked, v.checked == 1 ? "wait" : "waits");
  return v;
}

}  // namespace fencesim
