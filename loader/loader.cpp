// loader/loader.cpp — the scenario loader (see loader.hpp and docs/FORMAT.md).
//
// Structure: a guarded SAX pass builds the JSON document (json_guard.cpp:
// bounding nesting depth and refusing duplicate keys), then `Loader` walks the
// document in a fixed order — top level, network, lock, resource, clients,
// faults, nemesis, expect — and stops at the first problem by throwing
// `Failure` (json_reader.hpp), which never leaves loader/. Each section but
// the faults and the nemesis has its own file (sections.hpp); those two stay
// here, beside the node names they resolve.
#include "loader/loader.hpp"

#include "loader/sections.hpp"
#include "models/checkers/metric_expect.hpp"
#include "models/checkers/registry.hpp"
#include "models/etcd/versions.hpp"
#include "models/faults.hpp"
#include "models/lock_service.hpp"
#include "models/validate.hpp"
#include "models/words.hpp"
#include "sim/text.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fencesim {

std::string LoadError::to_string() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
  } else if (!path.empty()) {
    out += ": at " + path + ": " + message;
  } else {
    out += ": " + message;
  }
  if (!suggestion.empty()) out += " (" + suggestion + ")";
  return out;
}

static_assert(LoaderLimits::kMaxScenarioNameLength == NameLimits::kScenario &&
                  LoaderLimits::kMaxNameLength == NameLimits::kClient &&
                  LoaderLimits::kMaxInteger == Ranges::kInitial.hi && LoaderLimits::kMaxBlock == 1'000'000'000,
              "the loader's limits and the rules of models/validate.hpp agree");

namespace {

using nlohmann::json;
using namespace loading;

// Group and role names come from the lock services (models/lock_service.hpp).
bool is_group_name(const std::string& name) {
  const auto all = all_group_names();
  return std::find(all.begin(), all.end(), name) != all.end();
}
bool is_role_name(const std::string& name) { return role_owner(name) != nullptr; }

/// Keys each fault kind takes besides `at` and `kind` (the fault table,
/// models/faults.cpp); which kinds exist and which the nemesis draws come
/// from there too.
const Keys& fault_keys(FaultKind k) { return fault_info(k).keys; }

class Loader {
 public:
  explicit Loader(const json& root) : root_(root) {}

  Scenario run() {
    if (!root_.is_object()) fail("", "expected a JSON object at the top level, got " + describe(root_));
    if (root_.contains("matrix") && root_.contains("base") && !root_.contains("scenario")) {
      fail("",
           "this is a matrix file (docs/FORMAT.md \"Matrix files\"), not a scenario: run it with `fencesim matrix "
           "FILE`");
    }
    check_keys(root_, "", kTopKeys, "the top level");
    // Each block is checked against the rules of models/validate.hpp as soon
    // as it is read, so a file gets its first problem first.
    load_top(root_, s_, src_);
    check(validate_top(s_));
    load_network(root_, s_, src_);
    check(validate_network(s_));
    load_lock(root_, s_, src_);
    resolve_defaults(s_);
    check(validate_lock(s_, src_));
    load_resource(root_, s_, src_);
    check(validate_resource(s_));
    load_clients(root_, s_, src_);
    resolve_defaults(s_);
    check(validate_clients(s_, src_));
    dir_ = directory(s_);
    for (const auto& n : dir_.all()) nodes_.insert(n);
    load_faults();
    check(validate_faults(s_));
    load_nemesis();
    check(validate_nemesis(s_, src_));
    load_expect(root_, s_, src_);
    check(validate_expect(s_));
    // The notes on input without effect (docs/FORMAT.md "Notes").
    resolve_scenario(s_);
    return std::move(s_);
  }

 private:
  /// A rule of models/validate.hpp broken: fail at its path, quoting the
  /// value as the file spells it ("0ms", not the "0s" the rule prints).
  void check(const std::optional<ScenarioProblem>& p) const {
    if (!p) return;
    std::string message = p->message;
    const std::string got = ", got \"";
    const json* v = at_path(p->path);
    if (const auto at = message.rfind(got);
        v != nullptr && v->is_string() && at != std::string::npos && message.back() == '"') {
      message = message.substr(0, at) + ", got " + quote(v->get_ref<const std::string&>());
    }
    fail(p->path, message, p->suggestion);
  }

  /// The value at a path such as "clients[1].renew_interval", or nullptr.
  const json* at_path(const std::string& path) const {
    const json* v = &root_;
    std::size_t i = 0;
    while (i < path.size() && v != nullptr) {
      if (path[i] == '.') ++i;
      if (path[i] == '[') {
        const std::size_t close = path.find(']', i);
        if (close == std::string::npos || path[i + 1] == '"' || !v->is_array()) return nullptr;
        const std::size_t n = std::stoul(path.substr(i + 1, close - i - 1));
        v = n < v->size() ? &(*v)[n] : nullptr;
        i = close + 1;
      } else {
        const std::size_t end = path.find_first_of(".[", i);
        const std::string k = path.substr(i, end == std::string::npos ? std::string::npos : end - i);
        v = v->is_object() ? find(*v, k) : nullptr;
        i = end == std::string::npos ? path.size() : end;
      }
    }
    return v;
  }

  // -- node names ----------------------------------------------------------------

  std::string service_word() const { return to_string(s_.lock.service()); }

  /// Why a role alias is not valid here, or "" if it is.
  std::string role_problem(const std::string& name) const {
    const auto& roles = dir_.roles();
    if (std::find(roles.begin(), roles.end(), name) != roles.end()) return "";
    const ServiceDescriptor* owner = role_owner(name);
    return "the role " + quote(name) + " needs the " + (owner ? owner->display_name() : std::string("?")) +
           " service; this scenario's lock service is " + service_word();
  }

  std::vector<std::string> known_names() const {
    std::vector<std::string> out = dir_.all();
    for (const auto& r : dir_.roles()) out.push_back(r);
    return out;
  }

  [[noreturn]] void unknown_node(const std::string& name, const std::string& path, bool groups_ok) const {
    std::vector<std::string> cands = known_names();
    // Only the groups with nodes here (a registered service's groups are
    // empty unless it is this scenario's): a suggestion never names an
    // empty group.
    std::vector<std::string> groups;
    for (const NodeGroup& g : dir_.groups) {
      if (!g.nodes.empty()) groups.push_back(g.name);
    }
    if (groups_ok) cands.insert(cands.end(), groups.begin(), groups.end());
    fail(path,
         "unknown node " + quote(name) + "; nodes in this scenario are " + join_list(dir_.all(), 16) +
             (dir_.roles().empty() ? "" : ", roles " + join_list(dir_.roles())) +
             (groups_ok ? ", groups " + join_list(groups) : ""),
         suggest(name, cands));
  }

  /// A single node or a role alias.
  std::string get_target(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a node name (a string), got " + describe(v));
    const auto& name = v.get_ref<const std::string&>();
    if (nodes_.count(name) != 0) return name;
    if (is_role_name(name)) {
      if (auto why = role_problem(name); !why.empty()) fail(path, why);
      return name;
    }
    if (is_group_name(name)) {
      std::string roles;
      for (const auto& r : all_role_names()) roles += (roles.empty() ? "" : ", ") + r;
      fail(path, quote(name) + " is a group; a target is a single node or a role (" + roles + ")",
           "write one fault per node, or use the node list of a partition");
    }
    unknown_node(name, path, false);
  }

  /// A node list: node names, role aliases and group names, expanded in
  /// declaration order, duplicates dropped.
  std::vector<std::string> get_node_list(const json& v, const std::string& path) const {
    if (!v.is_array()) fail(path, "expected a list of node names, e.g. [\"A\", \"redis\"], got " + describe(v));
    if (v.empty()) fail(path, "the node list is empty; name at least one node or group");
    std::vector<std::string> out;
    std::set<std::string> seen;
    auto add = [&](const std::string& n) {
      if (seen.insert(n).second) out.push_back(n);
    };
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = index_path(path, i);
      if (!v[i].is_string()) fail(p, "expected a node or group name (a string), got " + describe(v[i]));
      const auto& name = v[i].get_ref<const std::string&>();
      if (nodes_.count(name) != 0) {
        add(name);
      } else if (auto g = dir_.group(name)) {
        if (g->empty())
          fail(p, "the group " + quote(name) + " has no nodes in this scenario (lock service " + service_word() + ")");
        for (const auto& n : *g) add(n);
      } else if (is_role_name(name)) {
        if (auto why = role_problem(name); !why.empty()) fail(p, why);
        add(name);
      } else {
        unknown_node(name, p, true);
      }
    }
    return out;
  }

  // -- faults ------------------------------------------------------------------

  void load_faults() {
    const json* v = find(root_, "faults");
    if (v == nullptr) return;
    if (!v->is_array()) fail("faults", "expected an array of faults, got " + describe(*v));
    if (v->size() > static_cast<std::size_t>(Limits::kMaxFaults)) {
      fail("faults", "too many faults: at most " + std::to_string(Limits::kMaxFaults));
    }
    for (std::size_t i = 0; i < v->size(); ++i) s_.faults.push_back(load_fault((*v)[i], index_path("faults", i)));
  }

  static Keys fault_kind_names() {
    Keys out;
    for (const FaultKindInfo& k : fault_kinds()) out.push_back(k.name);
    return out;
  }

  FaultSpec load_fault(const json& v, const std::string& path) {
    expect_object(v, path, "a fault");
    const Keys kinds = fault_kind_names();
    const json& kind_v = require(v, path, "kind", "one of " + join_list(kinds));
    FaultSpec f;
    f.kind = fault_kinds()[get_enum(kind_v, key_path(path, "kind"), kinds)].kind;
    check_fault_keys(v, path, f.kind);
    f.origin = path;
    auto [at, at_max] =
        get_range(require(v, path, "at", "when the fault starts, e.g. \"5s\""), key_path(path, "at"), kNonNegative);
    f.at = at;
    if (at_max != at) f.at_max = at_max;  // max below min: validate's fault()
    parse_fault_params(v, path, f);
    return f;
  }

  /// Refuses a key the kind does not take (fault_keys), naming the kinds
  /// that do take it.
  static void check_fault_keys(const json& v, const std::string& path, FaultKind kind) {
    const std::string kname = to_string(kind);
    Keys allowed = {"at", "kind"};
    const Keys& own = fault_keys(kind);
    allowed.insert(allowed.end(), own.begin(), own.end());
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (contains(allowed, it.key())) continue;
      // A key of another kind: say whose it is.
      std::vector<std::string> owners;
      for (const FaultKindInfo& other : fault_kinds()) {
        if (contains(other.keys, it.key())) owners.push_back(other.name);
      }
      const std::string p = key_path(path, it.key());
      const std::string takes = "a " + kname + " fault takes " + join_list(allowed);
      if (!owners.empty()) {
        fail(p, quote(it.key()) + " does not apply to a " + kname + " fault (it belongs to " + join_list(owners) +
                    "); " + takes);
      }
      fail(p, "unknown key " + quote(it.key()) + " in a " + kname + " fault; " + takes, suggest(it.key(), allowed));
    }
  }

  /// The loader's KeyReader (models/key_reader.hpp) over the object `v` at
  /// `path`: each getter is one of the accessors above, so a model's keys
  /// (a fault kind's) get the loader's words and JSON paths.
  class ObjectReader final : public NodeKeyReader {
   public:
    ObjectReader(Loader& l, const json& v, const std::string& path) : l_(l), v_(v), path_(path), in_(v, path) {}
    std::string path(std::string_view key) const override { return in_.path(key); }
    Shape shape(std::string_view key) const override { return in_.shape(key); }
    std::string spelling(std::string_view key) const override { return in_.spelling(key); }
    std::string_view require(std::string_view key, const std::string& what) override { return in_.require(key, what); }
    [[noreturn]] void fail(std::string_view key, const std::string& message, const std::string& suggestion) override {
      in_.fail(key, message, suggestion);
    }
    using KeyReader::duration;
    std::optional<Duration> duration(std::string_view key, DurationRule rule, const Required& required) override {
      return in_.duration(key, rule, required);
    }
    std::optional<std::int64_t> integer(std::string_view key, const IntRange& r, const Required& required) override {
      return in_.integer(key, r, required);
    }
    std::optional<bool> boolean(std::string_view key, const Required& required) override {
      return in_.boolean(key, required);
    }
    std::optional<std::string> text(std::string_view key, std::size_t max_len, const Required& required) override {
      return in_.text(key, max_len, required);
    }
    std::optional<std::size_t> choice(std::string_view key, const std::vector<std::string>& options,
                                      const Required& required) override {
      return in_.choice(key, options, required);
    }
    void object(std::string_view key, const std::string& what, const std::vector<std::string>& keys,
                const std::function<void(KeyReader&)>& fill) override {
      in_.object(key, what, keys, fill);
    }
    std::optional<std::string> node(std::string_view key, const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(l_.get_target(*x, key_path(path_, key))) : std::nullopt;
    }
    std::optional<std::vector<std::string>> nodes(std::string_view key, const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(l_.get_node_list(*x, key_path(path_, key))) : std::nullopt;
    }
    std::optional<std::vector<std::vector<std::string>>> node_groups(std::string_view key,
                                                                     const Required& required) override {
      const json* x = get(key, required);
      return x ? std::optional(l_.get_partition_groups(*x, key_path(path_, key))) : std::nullopt;
    }

   private:
    /// The key's value; nullptr when it is absent and optional.
    const json* get(std::string_view key, const Required& required) {
      return required ? &loading::require(v_, path_, key, *required) : find(v_, key);
    }
    Loader& l_;
    const json& v_;
    const std::string& path_;
    JsonKeyReader in_;
  };

  /// Parses the keys of f.kind (those fault_keys lists) into `f`: the fault
  /// table's reader for the kind (FaultKindInfo::parse).
  void parse_fault_params(const json& v, const std::string& path, FaultSpec& f) {
    ObjectReader in(*this, v, path);
    fault_info(f.kind).parse(in, f);
  }

  /// A partition's "groups": at least two node lists, no node in two.
  std::vector<std::vector<std::string>> get_partition_groups(const json& groups, const std::string& path) const {
    if (!groups.is_array())
      fail(path, "expected a list of node lists, e.g. [[\"A\"], [\"redis\"]], got " + describe(groups));
    if (groups.size() < 2) fail(path, "a partition needs at least two groups");
    std::vector<std::vector<std::string>> out;
    std::map<std::string, std::size_t> where;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::string gp = index_path(path, g);
      std::vector<std::string> nodes = get_node_list(groups[g], gp);
      for (const auto& n : nodes) {
        auto [it, fresh] = where.emplace(n, g);
        if (!fresh) {
          fail(gp, "node " + quote(n) + " is in groups " + std::to_string(it->second) + " and " + std::to_string(g) +
                       "; each node may be in one group only");
        }
      }
      out.push_back(std::move(nodes));
    }
    return out;
  }

  // -- nemesis -----------------------------------------------------------------

  void load_nemesis() {
    const json* v = find(root_, "nemesis");
    if (v == nullptr) return;
    expect_object(*v, "nemesis", "the nemesis settings");
    check_keys(*v, "nemesis", kNemesisKeys, "nemesis");
    NemesisSpec n;
    Keys names;
    for (FaultKind k : nemesis_fault_kinds()) names.push_back(to_string(k));
    const json& kinds = require(*v, "nemesis", "kinds", "the fault kinds to draw, e.g. [\"pause\"]");
    if (!kinds.is_array())
      fail("nemesis.kinds", "expected a list of fault kinds, e.g. [\"pause\", \"crash\"], got " + describe(kinds));
    // (An empty list: validate_nemesis.)
    if (kinds.size() > 100) fail("nemesis.kinds", "too many entries: at most 100");
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      const std::string p = index_path("nemesis.kinds", i);
      if (kinds[i].is_string()) {
        const auto& s = kinds[i].get_ref<const std::string&>();
        if (!contains(names, s) && fault_kind_from_string(s)) {
          fail(p, quote(s) + " cannot be drawn by the nemesis; nemesis kinds are " + join_list(names));
        }
      }
      n.kinds.push_back(nemesis_fault_kinds()[get_enum(kinds[i], p, names)]);
    }
    if (const json* x = find(*v, "groups")) {
      if (find(*v, "targets") != nullptr) {
        fail("nemesis.groups",
             "give either \"targets\" (one node a draw) or \"groups\" (a whole group a draw), not both");
      }
      if (!x->is_array() || x->empty()) {
        fail("nemesis.groups", "expected a non-empty list of node lists, e.g. [[\"etcd-leader\"], [\"etcd\"]], got " +
                                   (x->is_array() ? std::string("an empty list") : describe(*x)));
      }
      if (x->size() > 100) fail("nemesis.groups", "too many entries: at most 100");
      for (std::size_t i = 0; i < x->size(); ++i) {
        n.groups.push_back(get_node_list((*x)[i], index_path("nemesis.groups", i)));
      }
    } else if (const json* t = find(*v, "targets")) {
      n.targets = get_node_list(*t, "nemesis.targets");
    } else {
      n.targets = dir_.clients();
    }
    if (const json* x = find(*v, "interval")) {
      auto [lo, hi] = get_range(*x, "nemesis.interval", kNonNegative);
      n.interval_min = lo;
      n.interval_max = hi;
    }
    if (const json* x = find(*v, "max_duration")) n.max_duration = get_duration(*x, "nemesis.max_duration");
    if (const json* x = find(*v, "swarm")) n.swarm = get_bool(*x, "nemesis.swarm");
    src_.nemesis_interval_given = find(*v, "interval") != nullptr;
    // Positive interval and max_duration, and the bound on the draws: validate_nemesis.
    s_.nemesis = std::move(n);
  }

  const json& root_;
  Scenario s_;
  NodeDirectory dir_;
  std::set<std::string> nodes_;
  ScenarioSource src_;  ///< where each expanded client came from, and which keys were written
};

}  // namespace

LoadResult load_scenario_text(std::string_view text, const std::string& file_label) {
  json root;
  if (auto e = parse_json_text(text, file_label, root, "a scenario")) {
    LoadResult r;
    r.error = std::move(*e);
    return r;
  }
  return load_scenario_json(root, file_label);
}

LoadResult load_scenario_json(const nlohmann::json& root, const std::string& file_label) {
  try {
    Loader loader(root);
    LoadResult r;
    r.scenario = loader.run();
    return r;
  } catch (const Failure& f) {
    return error_result(file_label, f.path, f.message, f.suggestion);
  } catch (const std::bad_alloc&) {
    return error_result(file_label, "", "out of memory while reading the file");
  } catch (const std::exception& e) {
    // Not expected: every rule above fails with Failure. Report, never crash.
    return error_result(file_label, "", std::string("internal error while loading: ") + e.what());
  }
}

LoadResult load_scenario_file(const std::string& path) {
  std::string text;
  if (auto e = read_text_file(path, text, "a scenario file")) {
    LoadResult r;
    r.error = std::move(*e);
    return r;
  }
  LoadResult r = load_scenario_text(text, path);
  if (r.scenario) resolve_program_folders(*r.scenario, path);
  return r;
}

void resolve_program_folders(Scenario& s, const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path base = fs::absolute(fs::path(file), ec).parent_path();
  const auto resolve = [&](std::optional<ProgramSpec>& p) {
    if (p && fs::path(p->cwd).is_relative()) {
      p->cwd = (base / p->cwd).lexically_normal().string();
      while (p->cwd.size() > 1 && p->cwd.back() == '/') p->cwd.pop_back();
    }
  };
  for (ClientSpec& c : s.clients) resolve(c.program);
  resolve(s.resource.program);
}

std::optional<LoadError> read_text_file(const std::string& path, std::string& text, const std::string& what) {
  const auto error_result = [](const std::string& file, std::string p, std::string message) {
    return loading::error_result(file, std::move(p), std::move(message)).error;
  };
  std::error_code ec;
  if (path.empty()) return error_result("\"\"", "", "an empty file name; give the path of " + what);
  if (!std::filesystem::exists(path, ec)) {
    // exists() is false with an error for a link loop or a directory that
    // cannot be searched: name that instead of "no such file".
    if (ec) return error_result(path, "", "cannot read: " + ec.message());
    return error_result(path, "", "no such file");
  }
  if (std::filesystem::is_directory(path, ec)) return error_result(path, "", "is a directory, not " + what);
  // A named pipe would block the read until a writer comes; a device may
  // never end. Only regular files (or links to them) are read.
  if (!std::filesystem::is_regular_file(path, ec)) {
    return error_result(path, "", "is not a regular file (a pipe, socket or device); give " + what);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return error_result(path, "", "cannot open the file for reading");
  text.clear();
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > LoaderLimits::kMaxFileBytes) {
      return error_result(
          path, "", "the file is too large (more than " + std::to_string(LoaderLimits::kMaxFileBytes) + " bytes)");
    }
  }
  if (in.bad()) return error_result(path, "", "read error");
  return std::nullopt;
}

}  // namespace fencesim
