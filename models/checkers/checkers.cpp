#include "models/checkers/checkers.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fencesim {

const char* to_string(Status s) {
  switch (s) {
    case Status::kHolds: return "holds";
    case Status::kViolated: return "violated";
    case Status::kNotApplicable: return "not_applicable";
  }
  return "?";
}

std::string format_time(Time t) {
  // Milliseconds with three decimals (microsecond resolution): "12.200s".
  const std::int64_t us = t.count() / 1000;
  const std::int64_t neg = us < 0 ? 1 : 0;
  const std::int64_t a = neg ? -us : us;
  return fmt::format("{}{}.{:06}s", neg ? "-" : "", a / 1'000'000, a % 1'000'000);
}

namespace {

std::string token_text(const std::optional<std::int64_t>& t) { return t ? fmt::format("token {}", *t) : "no token"; }

Time belief_end(const BeliefRecord& b, const CheckContext& ctx) { return b.end ? *b.end : ctx.run_end; }

std::string belief_line(const BeliefRecord& b, const CheckContext& ctx) {
  return fmt::format("{} believed it held the lock ({}, value {}) from {} until {}{}", b.client, token_text(b.token),
                     b.value, format_time(b.start), format_time(belief_end(b, ctx)),
                     b.end ? " (" + b.end_reason + ")" : " (end of run)");
}

const GrantRecord* grant_of(const History& h, const std::string& value) {
  for (const GrantRecord& g : h.grants) {
    if (g.value == value) return &g;
  }
  return nullptr;
}

void add_faults_between(const History& h, Time from, Time to, const std::string& node,
                        std::vector<std::string>& story) {
  for (const FaultRecord& f : h.faults) {
    if (f.skipped) continue;
    const Time end = f.end ? *f.end : f.start;
    if (f.start > to || end < from) continue;
    if (!node.empty() && f.target != node) continue;
    story.push_back(fmt::format("{}: fault {}{}{}", format_time(f.start), to_string(f.kind),
                                f.target.empty() ? "" : " on " + f.target,
                                f.detail.empty() ? "" : " (" + f.detail + ")"));
  }
}

/// Calls f(i, j, start, end), i < j, for every pair of beliefs of two
/// different clients that overlap in true time, with the interval
/// [start, end) they share (start < end). A sweep over the beliefs in order
/// of their start: O(n log n) plus the overlapping pairs, where comparing
/// every pair made checking a long run quadratic in its grants.
template <class F>
void for_each_overlapping_belief_pair(const History& h, const CheckContext& ctx, F f) {
  const std::size_t n = h.beliefs.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const Time sx = h.beliefs[x].start, sy = h.beliefs[y].start;
    return sx != sy ? sx < sy : x < y;
  });
  for (std::size_t p = 0; p < n; ++p) {
    const BeliefRecord& a = h.beliefs[order[p]];
    const Time a_end = belief_end(a, ctx);
    for (std::size_t q = p + 1; q < n; ++q) {
      const BeliefRecord& b = h.beliefs[order[q]];
      // Later beliefs start no earlier than b: none of them overlaps a.
      if (b.start >= a_end) break;
      const Time end = std::min(a_end, belief_end(b, ctx));
      if (b.start >= end || a.client == b.client) continue;
      f(std::min(order[p], order[q]), std::max(order[p], order[q]), b.start, end);
    }
  }
}

void number(std::vector<std::string>& story) {
  for (std::size_t i = 0; i < story.size(); ++i) story[i] = fmt::format("{}. {}", i + 1, story[i]);
}

}  // namespace

Verdict check_mutual_exclusion(const History& h, const CheckContext& ctx) {
  Verdict v;
  v.property = Property::kMutualExclusion;
  v.checked = static_cast<std::int64_t>(h.beliefs.size());
  // The first overlap in true time between beliefs of two different clients.
  // Ties in start go to the pair that comes first in (i, j) order.
  std::optional<std::pair<std::size_t, std::size_t>> first;
  std::pair<std::size_t, std::size_t> first_ij;
  Time first_at = sim::kTimeMax;
  for_each_overlapping_belief_pair(h, ctx, [&](std::size_t i, std::size_t j, Time start, Time) {
    if (start < first_at || (start == first_at && std::make_pair(i, j) < first_ij)) {
      first_at = start;
      first_ij = {i, j};
      first = h.beliefs[i].start <= h.beliefs[j].start ? std::make_pair(i, j) : std::make_pair(j, i);
    }
  });
  if (!first) {
    v.summary = fmt::format("no two of {} beliefs overlapped", h.beliefs.size());
    return v;
  }
  const BeliefRecord& a = h.beliefs[first->first];
  const BeliefRecord& b = h.beliefs[first->second];
  const Time end = std::min(belief_end(a, ctx), belief_end(b, ctx));
  v.status = Status::kViolated;
  v.at = first_at;
  v.summary = fmt::format("{} and {} both believed they held the lock from {} to {} ({})", a.client, b.client,
                          format_time(first_at), format_time(end), sim::format_duration(end - first_at));
  std::vector<std::string> story;
  story.push_back(belief_line(a, ctx));
  add_faults_between(h, a.start, first_at, a.client, story);
  if (auto it = h.lease_ends.find(a.value); it != h.lease_ends.end()) {
    story.push_back(fmt::format("{}: {}'s lease ended at the service: {}", format_time(it->second.at), a.client,
                                it->second.reason));
  }
  story.push_back(belief_line(b, ctx));
  story.push_back(fmt::format("both beliefs overlapped from {} to {}", format_time(first_at), format_time(end)));
  number(story);
  v.story = std::move(story);
  return v;
}

Verdict check_no_stale_write(const History& h) {
  Verdict v;
  v.property = Property::kNoStaleWrite;
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (!op.write || !op.accepted) continue;
    ++v.checked;
    auto it = h.lease_ends.find(op.lease_value);
    if (it == h.lease_ends.end() || !(op.at > it->second.at)) continue;
    v.status = Status::kViolated;
    v.at = op.at;
    v.summary = fmt::format("{} wrote {} at {} on {} with {}, after its lease ended at {}", op.client, op.value,
                            format_time(op.at), op.copy, token_text(op.token), format_time(it->second.at));
    std::vector<std::string> story;
    Time from{0};
    if (const GrantRecord* g = grant_of(h, op.lease_value)) {
      story.push_back(fmt::format("{}: {} granted the lock to {} ({})", format_time(g->at), g->server, g->client,
                                  token_text(g->token)));
      from = g->at;
    }
    add_faults_between(h, from, op.at, op.client, story);
    story.push_back(fmt::format("{}: {}'s lease ended at the service: {}", format_time(it->second.at), op.client,
                                it->second.reason));
    for (const GrantRecord& g : h.grants) {
      if (g.at >= it->second.at && g.at <= op.at && g.value != op.lease_value) {
        story.push_back(fmt::format("{}: {} granted the lock to {} ({})", format_time(g.at), g.server, g.client,
                                    token_text(g.token)));
        break;
      }
    }
    story.push_back(fmt::format("{}: {} accepted {}'s write of {} ({}; marks after: last_written {}, last_seen {})",
                                format_time(op.at), op.copy, op.client, op.value, token_text(op.token), op.last_written,
                                op.last_seen));
    number(story);
    v.story = std::move(story);
    return v;
  }
  v.summary = v.checked == 1 ? std::string("the one accepted write came from a live lease")
                             : fmt::format("every one of {} accepted writes came from a live lease", v.checked);
  return v;
}

Verdict check_token_monotonic(const History& h) {
  Verdict v;
  v.property = Property::kTokenMonotonic;
  std::vector<const GrantRecord*> grants;
  for (const GrantRecord& g : h.grants) {
    if (g.token) grants.push_back(&g);
  }
  std::stable_sort(grants.begin(), grants.end(), [](const GrantRecord* a, const GrantRecord* b) {
    return a->at != b->at ? a->at < b->at : a->seq < b->seq;
  });
  const GrantRecord* best = nullptr;
  for (const GrantRecord* g : grants) {
    ++v.checked;
    if (best != nullptr && !(*g->token > *best->token)) {
      v.status = Status::kViolated;
      v.at = g->at;
      v.summary =
          fmt::format("{} granted token {} to {} at {}, not above token {} granted to {} at {}", g->server, *g->token,
                      g->client, format_time(g->at), *best->token, best->client, format_time(best->at));
      // Everything between the two grants, in true-time order.
      std::vector<std::pair<Time, std::string>> steps;
      steps.emplace_back(best->at, fmt::format("{}: {} granted the lock to {} (token {})", format_time(best->at),
                                               best->server, best->client, *best->token));
      for (const FaultRecord& f : h.faults) {
        if (f.skipped || f.start < best->at || f.start > g->at) continue;
        steps.emplace_back(f.start, fmt::format("{}: fault {}{}{}", format_time(f.start), to_string(f.kind),
                                                f.target.empty() ? "" : " on " + f.target,
                                                f.detail.empty() ? "" : " (" + f.detail + ")"));
      }
      for (const NoteRecord& n : h.notes) {
        if (n.at >= best->at && n.at <= g->at) {
          steps.emplace_back(n.at, fmt::format("{}: {} {}", format_time(n.at), n.node, n.text));
        }
      }
      std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<std::string> story;
      for (auto& [t, line] : steps) story.push_back(std::move(line));
      story.push_back(fmt::format("{}: {} granted the lock to {} (token {}): a token already handed out",
                                  format_time(g->at), g->server, g->client, *g->token));
      number(story);
      v.story = std::move(story);
      return v;
    }
    if (best == nullptr || *g->token > *best->token) best = g;
  }
  v.summary = fmt::format("{} grants, tokens strictly increasing", v.checked);
  return v;
}

Verdict check_no_lost_update(const History& h, std::int64_t initial) {
  Verdict v;
  v.property = Property::kNoLostUpdate;
  std::int64_t current = initial;
  const ResourceOpRecord* prev = nullptr;
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (!op.write || !op.accepted) continue;
    ++v.checked;
    if (op.read_value != current) {
      v.status = Status::kViolated;
      v.at = op.at;
      v.summary = fmt::format("{} wrote {} from a read of {}, but the previous accepted write had left {}", op.client,
                              op.value, op.read_value, current);
      std::vector<std::string> story;
      for (const ResourceOpRecord& r : h.resource_ops) {
        if (!r.write && r.accepted && r.client == op.client && r.iteration == op.iteration &&
            r.lease_value == op.lease_value && r.at <= op.at) {
          story.push_back(fmt::format("{}: {} read {} from {} ({})", format_time(r.at), r.client, r.value, r.copy,
                                      token_text(r.token)));
        }
      }
      if (prev != nullptr) {
        story.push_back(fmt::format("{}: {} accepted {}'s write of {} (read {}, {})", format_time(prev->at), prev->copy,
                                    prev->client, prev->value, prev->read_value, token_text(prev->token)));
      }
      story.push_back(
          fmt::format("{}: {} accepted {}'s write of {} computed from the stale read of {} ({}): the "
                      "update to {} is lost",
                      format_time(op.at), op.copy, op.client, op.value, op.read_value, token_text(op.token), current));
      number(story);
      v.story = std::move(story);
      return v;
    }
    current = op.value;
    prev = &op;
  }
  v.summary = v.checked == 1 ? std::string("1 accepted write forms a serial history")
                             : fmt::format("{} accepted writes form a serial history", v.checked);
  return v;
}

Verdict check_progress(const History& h, const CheckContext& ctx, sim::Duration settle) {
  Verdict v;
  v.property = Property::kProgress;
  if (ctx.any_fault && !ctx.last_fault_end) {
    v.summary = "a fault never ends, so no iteration is checked (holds vacuously)";
    return v;
  }
  const Time after = ctx.last_fault_end.value_or(Time{-1});
  const Time last_start = ctx.run_end - settle;
  for (const IterationRecord& it : h.iterations) {
    if (it.start <= after || it.start > last_start) continue;
    ++v.checked;
    const bool ok = it.success && it.done && *it.done - it.start <= settle;
    if (ok) continue;
    v.status = Status::kViolated;
    v.at = it.start;
    v.summary = fmt::format(
        "{}'s iteration {} started at {} (after the last fault ended at {}) and did not succeed "
        "within the settle time {}: {}",
        it.client, it.index, format_time(it.start), format_time(after), sim::format_duration(settle), it.outcome);
    std::vector<std::string> story;
    story.push_back(fmt::format("{}: the last fault ended", format_time(after)));
    story.push_back(fmt::format("{}: {} started iteration {}", format_time(it.start), it.client, it.index));
    if (it.acquired) story.push_back(fmt::format("{}: {} acquired the lock", format_time(*it.acquired), it.client));
    for (const ResourceOpRecord& op : h.resource_ops) {
      if (op.client == it.client && op.iteration == it.index && op.at >= it.start) {
        story.push_back(fmt::format("{}: {} {} {} ({}){}", format_time(op.at), op.copy,
                                    op.accepted ? "accepted" : "rejected", op.write ? "the write" : "the read",
                                    token_text(op.token), op.accepted ? "" : ": " + op.reason));
      }
    }
    story.push_back(fmt::format("outcome: {}", it.outcome));
    number(story);
    v.story = std::move(story);
    return v;
  }
  v.summary = v.checked == 0 ? "no iteration started after the last fault with the settle time left (holds vacuously)"
                             : fmt::format("all {} iterations after the last fault succeeded within {}", v.checked,
                                           sim::format_duration(settle));
  return v;
}

std::vector<Verdict> check_all(const Scenario& s, const History& h, const CheckContext& ctx) {
  std::vector<Verdict> out;
  for (Property p : all_properties()) {
    Verdict v;
    if (!property_applies(s, p)) {
      v.property = p;
      v.status = Status::kNotApplicable;
      v.summary = "does not apply to this design";
    } else {
      switch (p) {
        case Property::kMutualExclusion: v = check_mutual_exclusion(h, ctx); break;
        case Property::kNoStaleWrite: v = check_no_stale_write(h); break;
        case Property::kNoLostUpdate: v = check_no_lost_update(h, s.resource.initial); break;
        case Property::kTokenMonotonic: v = check_token_monotonic(h); break;
        case Property::kProgress: v = check_progress(h, ctx, s.settle); break;
        case Property::kRaftSafety:
          v.property = p;
          v.status = Status::kNotApplicable;
          v.summary = "checked from the Raft history by the world (models/etcd/raft/safety.hpp)";
          break;
      }
    }
    if (auto it = s.expect.find(p); it != s.expect.end()) {
      v.expected = it->second;
      v.met = (it->second == Expectation::kHolds && v.status == Status::kHolds) ||
              (it->second == Expectation::kViolated && v.status == Status::kViolated);
    }
    out.push_back(std::move(v));
  }
  return out;
}

sim::Duration nearest_rank(std::vector<sim::Duration> sorted, int p) {
  if (sorted.empty()) return sim::Duration{0};
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  std::size_t rank = (static_cast<std::size_t>(p) * n + 99) / 100;  // ceil(p/100 * n)
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

Metrics compute_metrics(const Scenario& s, const History& h, const CheckContext& ctx) {
  Metrics m;
  m.ttl = s.lock.ttl;
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (op.write) {
      (op.accepted ? m.writes_accepted : m.writes_rejected)++;
    } else {
      (op.accepted ? m.reads_accepted : m.reads_rejected)++;
    }
  }
  m.grants = static_cast<std::int64_t>(h.grants.size());
  m.acquisitions = static_cast<std::int64_t>(h.beliefs.size());
  m.lease_losses = h.lease_losses;
  std::vector<sim::Duration> lat;
  for (const RenewalRecord& r : h.renewals) {
    if (r.success) lat.push_back(r.replied - r.first_sent);
  }
  m.renewal_latency.count = static_cast<std::int64_t>(lat.size());
  m.renewal_latency.p50 = nearest_rank(lat, 50);
  m.renewal_latency.p99 = nearest_rank(lat, 99);
  m.renewal_latency.max = nearest_rank(lat, 100);
  for_each_overlapping_belief_pair(h, ctx, [&](std::size_t, std::size_t, Time start, Time end) {
    if (end - start > m.longest_overlap) m.longest_overlap = end - start;
  });
  m.audit_findings = static_cast<std::int64_t>(h.audit.size());
  if (!h.audit.empty()) m.first_audit = h.audit.front();
  for (const IterationRecord& it : h.iterations) {
    ++m.iterations;
    if (it.success) ++m.iterations_ok;
  }
  return m;
}

}  // namespace fencesim
