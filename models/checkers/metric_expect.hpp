// models/checkers/metric_expect.hpp — `expect.metrics`: bounds on the
// report's metrics (docs/FORMAT.md "Metric expectations").
//
//   "expect": {"metrics": {"writes_rejected": {"min": 1}, "longest_overlap": {"max": "0s"}}}
//
// Each named metric is one number of Metrics (docs/REPORTS.md "Metrics"):
// a count (an integer) or a duration (a duration string in a file,
// nanoseconds in MetricBound). A bound is met when min ≤ value ≤ max (either
// side may be left out). The run's exit code counts an unmet bound like an
// unmet property expectation (RunResult::all_met).
//
// The seed article's audit — a rejection counter that stays at zero is
// ambiguous: the lock may be perfect, or the resource may not be checking —
// is `{"writes_rejected": {"min": 1}}` in a scenario that provokes a stale
// write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace fencesim {

struct Metrics;  // models/checkers/checkers.hpp

struct MetricInfo {
  const char* name;   ///< the key in expect.metrics, e.g. "renewal_latency_p99"
  bool duration;      ///< a duration (ns) rather than a count
  const char* where;  ///< where report.json has it, e.g. "renewal_latency.p99"
};

/// Every metric expect.metrics may name, in report order.
const std::vector<MetricInfo>& metric_infos();
/// The metric called `name`; nullptr if there is none.
const MetricInfo* find_metric(const std::string& name);
/// The value of `info` in `m` (nanoseconds for a duration metric).
std::int64_t metric_value(const Metrics& m, const MetricInfo& info);

/// One bound of expect.metrics and what the run measured.
struct MetricVerdict {
  std::string metric;
  bool duration = false;
  MetricBound bound;
  std::int64_t value = 0;  ///< ns for a duration metric
  bool met = false;
};

/// One verdict per entry of `s.expect_metrics`, in name order. Every name
/// must be a known metric (validate_expect checks it).
std::vector<MetricVerdict> check_metric_expectations(const Scenario& s, const Metrics& m);

/// "min 1", "max 3s", "min 1, max 5".
std::string bound_text(const MetricVerdict& v);
/// The value as the report prints it: "2" or "1.5s".
std::string value_text(const MetricVerdict& v);

}  // namespace fencesim
