// loader/section_resource.cpp — the `resource` section (docs/FORMAT.md "Resource").
//
// Its rules: validate_resource (models/validate.cpp).
#include "loader/sections.hpp"

namespace fencesim::loading {

namespace {

struct Section {
  const json& root_;
  Scenario& s_;
  ScenarioSource& src_;

  void load_resource() {
    const json& v = require(root_, "", "resource", "the protected resource, e.g. {\"kind\": \"fenced\"}");
    expect_object(v, "resource", "the resource");
    check_keys(v, "resource", kResourceKeys, "resource");
    ResourceSpec& r = s_.resource;
    r.kind =
        get_word<ResourceKind>(require(v, "resource", "kind", or_quoted(word_list<ResourceKind>())), "resource.kind");
    for (std::string_view k : {"check", "fence_reads", "idempotent"}) {
      if (r.kind != ResourceKind::kFenced && find(v, k)) {
        fail(key_path("resource", k), quote(k) + " applies only to a fenced resource (\"kind\": \"fenced\"), not to " +
                                          quote(to_string(r.kind)));
      }
    }
    if (const json* x = find(v, "check")) {
      r.check = get_word<FenceCheck>(*x, "resource.check");
    }
    if (const json* x = find(v, "fence_reads")) r.fence_reads = get_bool(*x, "resource.fence_reads");
    if (const json* x = find(v, "idempotent")) r.idempotent = get_bool(*x, "resource.idempotent");
    if (const json* x = find(v, "initial")) {
      r.initial = get_int(*x, "resource.initial", Ranges::kInitial);
    }
    if (const json* x = find(v, "replicas")) {
      r.replicas = static_cast<int>(get_int(*x, "resource.replicas", Ranges::kResourceReplicas));
    }
    if (const json* x = find(v, "replication_delay"))
      r.replication_delay = get_duration(*x, "resource.replication_delay");
  }
};

}  // namespace

void load_resource(const json& root, Scenario& s, ScenarioSource& src) { Section{root, s, src}.load_resource(); }

}  // namespace fencesim::loading
