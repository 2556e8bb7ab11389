// loader/section_resource.cpp — the `resource` section (docs/FORMAT.md "Resource").
//
// Its rules: validate_resource (models/validate.cpp).
#include "loader/sections.hpp"

namespace fencesim::loading {

namespace {

struct ResourceSection {
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
      if (k == "fence_reads" && r.kind == ResourceKind::kProgram) continue;
      if (r.kind != ResourceKind::kFenced && find(v, k)) {
        fail(key_path("resource", k), quote(k) + " applies only to a fenced resource (\"kind\": \"fenced\"), not to " +
                                          quote(to_string(r.kind)));
      }
    }
    load_program_check(v);
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

  /// `"kind": "program"` and its `program` (docs/PROTOCOL.md "Resource programs").
  void load_program_check(const json& v) {
    ResourceSpec& r = s_.resource;
    const json* p = find(v, "program");
    if (r.kind != ResourceKind::kProgram) {
      for (std::string_view k : {"program", "compare_versions"}) {
        if (find(v, k)) {
          fail(key_path("resource", k),
               quote(k) + " belongs to a resource whose check is a program (\"kind\": " + "\"program\"), not to " +
                   quote(to_string(r.kind)),
               "use \"kind\": \"program\" with it, or remove it");
        }
      }
      return;
    }
    if (p == nullptr) {
      fail("resource.program", "a resource of kind \"program\" needs the program that decides its reads and writes",
           "e.g. \"program\": {\"command\": [\"python3\", \"-m\", \"fencesim\", \"check.py\"]}");
    }
    r.program = load_program(*p, "resource.program");
    if (const json* x = find(v, "compare_versions")) r.compare_versions = get_bool(*x, "resource.compare_versions");
  }
};

}  // namespace

void load_resource(const json& root, Scenario& s, ScenarioSource& src) {
  ResourceSection{root, s, src}.load_resource();
}

}  // namespace fencesim::loading
