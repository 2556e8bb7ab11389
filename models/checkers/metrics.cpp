// models/checkers/metrics.cpp — the health metrics (docs/REPORTS.md "Metrics") over a History.
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "models/checkers/checkers.hpp"
#include "models/checkers/story.hpp"
#include "models/lock_service.hpp"

namespace fencesim {

using namespace checkers;

sim::Duration nearest_rank(std::vector<sim::Duration> sorted, int p) {
  if (sorted.empty()) return sim::Duration{0};
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  std::size_t rank = (static_cast<std::size_t>(p) * n + 99) / 100;  // ceil(p/100 * n)
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

double updates_lost_fraction(const Metrics& m) {
  return m.writes_accepted == 0 ? 0.0 : static_cast<double>(m.updates_lost) / static_cast<double>(m.writes_accepted);
}

Metrics compute_metrics(const Scenario& s, const History& h, const CheckContext& ctx) {
  Metrics m;
  m.ttl = s.lock.ttl;
  m.updates_lost_applies = !service_descriptor(s.lock.service()).per_message();
  // Per copy (and row, with more than one lock), the value of the last
  // accepted write: the next accepted write there that was computed from
  // another value overwrote it unseen.
  std::map<std::string, std::int64_t, std::less<>> last_value;
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (op.write) {
      (op.accepted ? m.writes_accepted : m.writes_rejected)++;
      if (op.accepted) {
        auto [it, first] =
            last_value.try_emplace(op.lock.empty() ? op.copy : op.copy + std::string(1, '\x1f') + op.lock, op.value);
        if (!first) {
          if (m.updates_lost_applies && op.read_value != it->second) ++m.updates_lost;
          it->second = op.value;
        }
      }
    } else {
      (op.accepted ? m.reads_accepted : m.reads_rejected)++;
    }
  }
  m.grants = static_cast<std::int64_t>(h.grants.size());
  m.acquisitions = static_cast<std::int64_t>(h.beliefs.size());
  m.lease_losses = h.lease_losses;
  m.service_errors = h.service_errors;
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
  // Writes sent after the writer's own belief ended otherwise than by its release.
  std::map<std::pair<std::string, std::string>, const BeliefRecord*> belief_of;  // (client, lease value)
  for (const BeliefRecord& b : h.beliefs) belief_of[{b.client, b.value}] = &b;
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (op.kind != ResourceOpKind::kWrite || op.lease_value.empty()) continue;
    const auto it = belief_of.find({op.client, op.lease_value});
    if (it == belief_of.end()) continue;
    const BeliefRecord& b = *it->second;
    if (!b.end || b.end_reason == "release" || op.sent <= *b.end) continue;
    ++m.writes_after_belief_ended;
    if (!m.first_write_after_belief) {
      m.first_write_after_belief =
          WriteAfterBelief{op.client, op.copy, op.token, *b.end, b.end_reason, op.sent, op.at, op.accepted};
    }
  }
  std::vector<sim::Duration> acq;
  for (const IterationRecord& it : h.iterations) {
    ++m.iterations;
    if (it.success) ++m.iterations_ok;
    if (it.acquire_sent && it.acquired) acq.push_back(*it.acquired - *it.acquire_sent);
  }
  m.acquire_latency.count = static_cast<std::int64_t>(acq.size());
  m.acquire_latency.p50 = nearest_rank(acq, 50);
  m.acquire_latency.p99 = nearest_rank(acq, 99);
  m.acquire_latency.max = nearest_rank(acq, 100);
  return m;
}

}  // namespace fencesim
