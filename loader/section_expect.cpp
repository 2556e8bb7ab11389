// loader/section_expect.cpp — the `expect` section: properties and metric bounds (docs/FORMAT.md "Expectations").
//
// Its rules: validate_expect (models/validate.cpp).
#include "loader/sections.hpp"

#include "models/checkers/metric_expect.hpp"
#include "models/checkers/registry.hpp"

namespace fencesim::loading {

namespace {

struct ExpectSection {
  const json& root_;
  Scenario& s_;
  ScenarioSource& src_;

  void load_expect() {
    const json* v = find(root_, "expect");
    if (v == nullptr) return;
    expect_object(*v, "expect", "a map of property to \"holds\" or \"violated\"");
    Keys props;
    for (Property p : all_properties()) props.push_back(to_string(p));
    for (auto it = v->begin(); it != v->end(); ++it) {
      const std::string p = key_path("expect", it.key());
      if (it.key() == "metrics") {
        load_expect_metrics(it.value(), p);
        continue;
      }
      auto prop = property_from_string(it.key());
      if (!prop) {
        Keys words = props;
        words.push_back("metrics");
        fail(p,
             "unknown property " + quote(it.key()) + "; properties are " + join_list(props) +
                 " (and \"metrics\" for bounds on metrics)",
             suggest(it.key(), words));
      }
      // A property that does not apply to the design: validate_expect.
      s_.expect[*prop] = get_word<Expectation>(it.value(), p);
    }
  }

  /// expect.metrics: {"writes_rejected": {"min": 1}, "longest_overlap": {"max": "0s"}}.
  void load_expect_metrics(const json& v, const std::string& path) {
    expect_object(v, path, "a map of metric name to {\"min\": …, \"max\": …}");
    Keys names;
    for (const MetricInfo& i : metric_infos()) names.push_back(i.name);
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string p = key_path(path, it.key());
      const MetricInfo* info = find_metric(it.key());
      if (info == nullptr) {
        fail(p, "unknown metric " + quote(it.key()) + "; metrics are " + join_list(names, 20),
             suggest(it.key(), names));
      }
      expect_object(it.value(), p,
                    std::string("a bound such as {\"min\": ") + (info->duration ? "\"1s\"" : "1") +
                        "} or {\"max\": " + (info->duration ? "\"3s\"" : "0") + "}");
      check_keys(it.value(), p, kMetricBoundKeys, "a metric bound");
      MetricBound b;
      for (const char* side : {"min", "max"}) {
        const json* x = find(it.value(), side);
        if (x == nullptr) continue;
        const std::string sp = key_path(p, side);
        std::int64_t value = 0;
        if (info->duration) {
          value = get_duration(*x, sp).count();
        } else {
          if (x->is_string()) {
            fail(sp, std::string(info->name) + " is a count: expected an integer from 0, got " + describe(*x));
          }
          value = get_int(*x, sp, Ranges::kMetricCount);
        }
        (std::string_view(side) == "min" ? b.min : b.max) = value;
      }
      if (!b.min && !b.max) fail(p, "a metric bound needs \"min\", \"max\" or both, e.g. {\"min\": 1}");
      // min above max: validate_expect.
      s_.expect_metrics[it.key()] = b;
    }
  }
};

}  // namespace

void load_expect(const json& root, Scenario& s, ScenarioSource& src) { ExpectSection{root, s, src}.load_expect(); }

}  // namespace fencesim::loading
