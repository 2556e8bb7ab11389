// loader/section_top.cpp — the top level and `network` (docs/FORMAT.md "Top level", "Network").
//
// Their rules: validate_top and validate_network (models/validate.cpp).
#include "loader/sections.hpp"

#include <algorithm>
#include <cmath>

namespace fencesim::loading {

namespace {

struct TopSection {
  const json& root_;
  Scenario& s_;
  ScenarioSource& src_;

  void load_top() {
    if (const json* v = find(root_, "version")) {
      if (v->is_string() && v->get_ref<const std::string&>() == "1")
        fail("version", "expected the number 1, got the string \"1\"", "write 1 without quotes");
      if (!v->is_number()) fail("version", "expected the number 1, got " + describe(*v));
      s_.version = static_cast<int>(get_int(*v, "version", INT32_MIN, INT32_MAX));  // 1: validate_top
    }
    {
      const json& v = require(root_, "", "scenario", "the scenario's name, e.g. \"worked-example\"");
      s_.name = get_string(v, "scenario", LoaderLimits::kMaxTextLength);  // the name rule: validate_top
    }
    if (const json* v = find(root_, "description")) s_.description = get_string(*v, "description");
    if (const json* v = find(root_, "seed")) s_.seed = get_u64(*v, "seed");
    s_.duration = get_duration(require(root_, "", "duration", "how long to run, e.g. \"60s\""), "duration");
    if (const json* v = find(root_, "settle")) s_.settle = get_duration(*v, "settle");
  }

  void load_network() {
    const json* v = find(root_, "network");
    if (v == nullptr) return;
    expect_object(*v, "network", "the network settings");
    check_keys(*v, "network", kNetworkKeys, "network");
    if (const json* l = find(*v, "latency")) {
      auto [lo, hi] = get_range(*l, "network.latency", kNonNegative);
      s_.network.latency_min = lo;
      s_.network.latency_max = hi;
    }
    if (const json* l = find(*v, "loss")) {
      if (!l->is_number()) fail("network.loss", "expected a number in [0, 1), got " + describe(*l));
      const double x = l->get<double>();
      if (!(x >= 0.0 && x < 1.0)) fail("network.loss", "expected a number in [0, 1) (a probability), got " + l->dump());
      // Parts per billion, rounded to nearest, and never certain loss.
      const double ppb = std::round(x * 1e9);
      s_.network.loss_ppb = std::min<std::uint64_t>(static_cast<std::uint64_t>(ppb), 999'999'999);
    }
  }
};

}  // namespace

void load_top(const json& root, Scenario& s, ScenarioSource& src) { TopSection{root, s, src}.load_top(); }
void load_network(const json& root, Scenario& s, ScenarioSource& src) { TopSection{root, s, src}.load_network(); }

}  // namespace fencesim::loading
