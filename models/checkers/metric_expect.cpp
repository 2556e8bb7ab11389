// models/checkers/metric_expect.cpp — expect.metrics against the run's Metrics.
#include "models/checkers/metric_expect.hpp"

#include <stdexcept>

#include "models/checkers/checkers.hpp"

namespace fencesim {

const std::vector<MetricInfo>& metric_infos() {
  static const std::vector<MetricInfo> kInfos = {
      {"writes_accepted", false, "writes_accepted"},
      {"writes_rejected", false, "writes_rejected"},
      {"reads_accepted", false, "reads_accepted"},
      {"reads_rejected", false, "reads_rejected"},
      {"grants", false, "grants"},
      {"acquisitions", false, "acquisitions"},
      {"lease_losses", false, "lease_losses"},
      {"renewals", false, "renewal_latency.count"},
      {"renewal_latency_p50", true, "renewal_latency.p50"},
      {"renewal_latency_p99", true, "renewal_latency.p99"},
      {"renewal_latency_max", true, "renewal_latency.max"},
      {"longest_overlap", true, "longest_two_holder_overlap"},
      {"holder_audit_findings", false, "holder_audit_findings"},
      {"writes_after_belief_ended", false, "writes_after_belief_ended"},
      {"iterations", false, "iterations"},
      {"iterations_succeeded", false, "iterations_succeeded"},
      {"acquires", false, "acquire_latency.count"},
      {"acquire_latency_p50", true, "acquire_latency.p50"},
      {"acquire_latency_p99", true, "acquire_latency.p99"},
      {"acquire_latency_max", true, "acquire_latency.max"},
  };
  return kInfos;
}

const MetricInfo* find_metric(const std::string& name) {
  for (const MetricInfo& i : metric_infos()) {
    if (name == i.name) return &i;
  }
  return nullptr;
}

std::int64_t metric_value(const Metrics& m, const MetricInfo& info) {
  const std::string n = info.name;
  if (n == "writes_accepted") return m.writes_accepted;
  if (n == "writes_rejected") return m.writes_rejected;
  if (n == "reads_accepted") return m.reads_accepted;
  if (n == "reads_rejected") return m.reads_rejected;
  if (n == "grants") return m.grants;
  if (n == "acquisitions") return m.acquisitions;
  if (n == "lease_losses") return m.lease_losses;
  if (n == "renewals") return m.renewal_latency.count;
  if (n == "renewal_latency_p50") return m.renewal_latency.p50.count();
  if (n == "renewal_latency_p99") return m.renewal_latency.p99.count();
  if (n == "renewal_latency_max") return m.renewal_latency.max.count();
  if (n == "longest_overlap") return m.longest_overlap.count();
  if (n == "holder_audit_findings") return m.audit_findings;
  if (n == "writes_after_belief_ended") return m.writes_after_belief_ended;
  if (n == "iterations") return m.iterations;
  if (n == "iterations_succeeded") return m.iterations_ok;
  if (n == "acquires") return m.acquire_latency.count;
  if (n == "acquire_latency_p50") return m.acquire_latency.p50.count();
  if (n == "acquire_latency_p99") return m.acquire_latency.p99.count();
  if (n == "acquire_latency_max") return m.acquire_latency.max.count();
  throw std::invalid_argument("metric_value: unknown metric " + n);
}

std::vector<MetricVerdict> check_metric_expectations(const Scenario& s, const Metrics& m) {
  std::vector<MetricVerdict> out;
  for (const auto& [name, bound] : s.expect_metrics) {
    const MetricInfo* info = find_metric(name);
    if (info == nullptr) throw std::invalid_argument("check_metric_expectations: unknown metric " + name);
    MetricVerdict v{name, info->duration, bound, metric_value(m, *info), true};
    if (bound.min && v.value < *bound.min) v.met = false;
    if (bound.max && v.value > *bound.max) v.met = false;
    out.push_back(std::move(v));
  }
  return out;
}

namespace {
std::string number_text(bool duration, std::int64_t x) {
  return duration ? sim::format_duration(sim::Duration{x}) : std::to_string(x);
}
}  // namespace

std::string bound_text(const MetricVerdict& v) {
  std::string out;
  if (v.bound.min) out = "min " + number_text(v.duration, *v.bound.min);
  if (v.bound.max) out += (out.empty() ? "max " : ", max ") + number_text(v.duration, *v.bound.max);
  return out;
}

std::string value_text(const MetricVerdict& v) { return number_text(v.duration, v.value); }

}  // namespace fencesim
