// `fencesim matrix FILE`: a matrix file (docs/FORMAT.md "Matrix files")
// loaded into one scenario per cell, each cell run as a small sweep
// (include/fencesim/matrix.hpp).
#include "fencesim/matrix.hpp"

#include "explore/percent.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "models/validate.hpp"

namespace fencesim {

namespace {

using nlohmann::json;

/// A mistake in the matrix file itself (not in a cell's scenario).
struct MatrixFailure {
  std::string path, message, suggestion;
};

[[noreturn]] void fail(const std::string& path, const std::string& message, const std::string& suggestion = "") {
  throw MatrixFailure{path, message, suggestion};
}

std::string quote(std::string_view s) { return quote_text(s); }

const std::vector<std::string> kTopKeys = {"version", "matrix", "title", "description",
                                           "base",    "seeds",  "rows",  "columns"};
const std::vector<std::string> kRowKeys = {"name", "title", "overrides", "not_applicable", "cells"};
const std::vector<std::string> kColumnKeys = {"name", "title", "overrides", "metrics"};
const std::vector<std::string> kCellKeys = {"overrides", "not_applicable"};

constexpr std::size_t kMaxAxis = 100;        ///< rows, columns
constexpr std::size_t kMaxNameLength = 100;  ///< matrix, row and column names and titles

void check_keys(const json& v, const std::string& path, const std::vector<std::string>& keys, const char* what) {
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) != keys.end()) continue;
    fail(path.empty() ? it.key() : path + "." + it.key(),
         "unknown key " + quote(it.key()) + " in " + what + "; expected one of " + join_names(keys),
         suggest_nearest(it.key(), keys));
  }
}

const json* find(const json& v, const char* key) {
  auto it = v.find(key);
  return it == v.end() ? nullptr : &*it;
}

/// A name from a-z 0-9 _ - (the matrix's and the columns').
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

std::string get_text(const json& v, const std::string& path, const std::string& what, bool plain) {
  if (!v.is_string()) fail(path, "expected " + what + " (a string)");
  const std::string& s = v.get_ref<const std::string&>();
  if (plain && !plain_name(s)) {
    fail(path, "invalid name " + quote(s) + ": use 1 to " + std::to_string(kMaxNameLength) +
                   " characters from a-z, 0-9, '_' and '-'");
  }
  if (s.empty() || s.size() > kMaxNameLength)
    fail(path, "expected " + what + " of 1 to " + std::to_string(kMaxNameLength) + " bytes");
  return s;
}

std::string get_reason(const json& v, const std::string& path) {
  if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
    fail(path, "expected a non-empty string: why the cell cannot be expressed, e.g. \"no replica to fail over to\"");
  }
  if (v.get_ref<const std::string&>().size() > 1000) fail(path, "too long: at most 1000 bytes");
  return v.get<std::string>();
}

const json& get_overrides(const json& v, const std::string& path) {
  if (!v.is_object()) {
    fail(path, "expected an object of scenario keys to merge into the base (JSON merge patch, RFC 7386)");
  }
  return v;
}

/// A column's `metrics`: a list of distinct matrix_metric_names().
std::vector<std::string> get_metrics(const json& v, const std::string& path) {
  const std::vector<std::string>& names = matrix_metric_names();
  if (!v.is_array() || v.empty()) {
    fail(path, "expected a non-empty list of metric names, e.g. [\"acquire_latency_p50\", \"acquire_latency_p99\"]");
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    if (!v[i].is_string()) fail(p, "expected a metric name (a string); metrics are " + join_names(names));
    const std::string& s = v[i].get_ref<const std::string&>();
    if (std::find(names.begin(), names.end(), s) == names.end()) {
      fail(p, "unknown metric " + quote(s) + "; a matrix column can show " + join_names(names),
           suggest_nearest(s, names));
    }
    if (std::find(out.begin(), out.end(), s) != out.end()) fail(p, "metric " + quote(s) + " is listed twice");
    out.push_back(s);
  }
  return out;
}

struct AxisEntry {
  MatrixAxis axis;
  json overrides = json::object();
  std::string not_applicable;                  ///< rows only: the whole row
  std::map<std::string, json> cell_overrides;  ///< rows only: column name → overrides
  std::map<std::string, std::string> cell_na;  ///< rows only: column name → reason
};

std::vector<AxisEntry> load_axis(const json& root, const char* key, bool rows) {
  const json* v = find(root, key);
  const std::string what = rows ? "rows (the designs)" : "columns (the faults)";
  if (v == nullptr) {
    fail(key, std::string("missing required key ") + quote(key) + ": a list of " + what +
                  ", each {\"name\": …, \"overrides\": {…}}");
  }
  if (!v->is_array() || v->empty()) fail(key, "expected a non-empty list of " + what);
  if (v->size() > kMaxAxis) fail(key, "too many entries: at most " + std::to_string(kMaxAxis));
  std::vector<AxisEntry> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    if (!e.is_object()) fail(path, std::string("expected an object {\"name\": …, \"overrides\": {…}}"));
    check_keys(e, path, rows ? kRowKeys : kColumnKeys, rows ? "a row" : "a column");
    AxisEntry a;
    const json* name = find(e, "name");
    if (name == nullptr) fail(path + ".name", "missing required key \"name\"");
    a.axis.name = get_text(*name, path + ".name", rows ? "a row name" : "a column name", !rows);
    for (const AxisEntry& b : out) {
      if (b.axis.name == a.axis.name) fail(path + ".name", "duplicate name " + quote(a.axis.name) + " on this axis");
    }
    a.axis.title = a.axis.name;
    if (const json* t = find(e, "title")) a.axis.title = get_text(*t, path + ".title", "a title", false);
    if (const json* o = find(e, "overrides")) a.overrides = get_overrides(*o, path + ".overrides");
    if (const json* n = find(e, "not_applicable")) a.not_applicable = get_reason(*n, path + ".not_applicable");
    if (const json* ms = find(e, "metrics")) a.axis.metrics = get_metrics(*ms, path + ".metrics");
    out.push_back(std::move(a));
  }
  return out;
}

/// Reads rows[i].cells once the column names are known.
void load_row_cells(const json& root, std::vector<AxisEntry>& rows, const std::vector<AxisEntry>& columns) {
  std::vector<std::string> names;
  for (const AxisEntry& c : columns) names.push_back(c.axis.name);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json* cells = find(root["rows"][i], "cells");
    if (cells == nullptr) continue;
    const std::string path = "rows[" + std::to_string(i) + "].cells";
    if (!cells->is_object())
      fail(path, "expected an object: column name → {\"overrides\": {…}} or {\"not_applicable\": …}");
    for (auto it = cells->begin(); it != cells->end(); ++it) {
      const std::string p = path + "." + it.key();
      if (std::find(names.begin(), names.end(), it.key()) == names.end()) {
        fail(p, "unknown column " + quote(it.key()) + "; columns are " + join_names(names),
             suggest_nearest(it.key(), names));
      }
      const json& c = it.value();
      if (!c.is_object()) fail(p, "expected {\"overrides\": {…}} or {\"not_applicable\": \"why\"}");
      check_keys(c, p, kCellKeys, "a cell");
      const json* o = find(c, "overrides");
      const json* n = find(c, "not_applicable");
      if ((o == nullptr) == (n == nullptr))
        fail(p, "a cell takes either \"overrides\" or \"not_applicable\", one of them");
      if (o != nullptr) rows[i].cell_overrides[it.key()] = get_overrides(*o, p + ".overrides");
      if (n != nullptr) rows[i].cell_na[it.key()] = get_reason(*n, p + ".not_applicable");
    }
  }
}

/// The base scenario: inline, or a path relative to the matrix file's folder.
json load_base(const json& root, const std::string& dir, std::optional<LoadError>& error) {
  const json* b = find(root, "base");
  if (b == nullptr)
    fail("base", "missing required key \"base\": the base scenario, inline or a path such as \"base.json\"");
  if (b->is_object()) return *b;
  if (!b->is_string() || b->get_ref<const std::string&>().empty()) {
    fail("base", "expected the base scenario: an object, or the path of a scenario file relative to the matrix file");
  }
  const std::string path = (std::filesystem::path(dir) / b->get<std::string>()).lexically_normal().string();
  std::string text;
  json out;
  // A base that cannot be read is a mistake in the matrix file: named there,
  // at `base`, with the path it was read from.
  if (const std::optional<LoadError> unreadable = read_text_file(path, text, "a scenario file")) {
    fail("base",
         "cannot read the base scenario " + quote(b->get<std::string>()) +
             (path == b->get<std::string>() ? "" : " (read as " + path + ")") + ": " + unreadable->message +
             "; expected the path of a scenario file relative to the matrix file's folder, or the base scenario "
             "inline as an object",
         "check the file name, or give \"base\": {…}");
  }
  if ((error = parse_json_text(text, path, out, "a scenario"))) return json();
  if (!out.is_object()) error = LoadError{path, "", "expected a JSON object (a scenario)", "", 0, 0};
  return out;
}

/// The scenario of cell (r, c): the base with the row's, the column's and
/// the cell's own overrides merged in, in that order.
LoadResult load_cell(const json& base, const AxisEntry& r, const AxisEntry& c, const std::string& label) {
  json merged = base;
  merged.merge_patch(r.overrides);
  merged.merge_patch(c.overrides);
  if (auto o = r.cell_overrides.find(c.axis.name); o != r.cell_overrides.end()) merged.merge_patch(o->second);
  return load_scenario_json(merged, label + ": cell " + quote(r.axis.name) + " × " + quote(c.axis.name));
}

/// A file in the folder that a program client's relative `cwd` counts
/// from: the base scenario file's, or the matrix file's for an inline base.
std::string program_anchor(const json& root, const std::string& label, const std::string& dir) {
  const json* b = find(root, "base");
  if (b != nullptr && b->is_string()) return (std::filesystem::path(dir) / b->get<std::string>()).string();
  return (std::filesystem::path(dir) / std::filesystem::path(label).filename()).string();
}

MatrixLoad load_matrix_json(const json& root, const std::string& label, const std::string& dir) {
  MatrixLoad out;
  MatrixSpec m;
  m.source = std::filesystem::path(label).filename().string();
  try {
    if (!root.is_object()) fail("", "a matrix file is one JSON object (see docs/FORMAT.md \"Matrix files\")");
    if (find(root, "scenario") != nullptr && find(root, "matrix") == nullptr) {
      fail("",
           "this is a scenario file (it has \"scenario\" and no \"matrix\"), not a matrix file: run it with "
           "`fencesim run`, or make it the \"base\" of a matrix file");
    }
    check_keys(root, "", kTopKeys, "the top level of a matrix file");
    if (const json* v = find(root, "version")) {
      if (!v->is_number_integer() || v->get<std::int64_t>() != 1)
        fail("version", "unsupported matrix format version " + v->dump() + "; this fencesim reads version 1");
    }
    const json* name = find(root, "matrix");
    if (name == nullptr) fail("matrix", "missing required key \"matrix\": the matrix's name, e.g. \"seed-table\"");
    m.name = get_text(*name, "matrix", "the matrix's name", true);
    m.title = m.name;
    if (const json* t = find(root, "title")) m.title = get_text(*t, "title", "a title", false);
    if (const json* d = find(root, "description")) {
      if (!d->is_string()) fail("description", "expected a string");
      m.description = d->get<std::string>();
    }
    if (const json* s = find(root, "seeds")) {
      if (!s->is_number_unsigned() || s->get<std::uint64_t>() < 1 || s->get<std::uint64_t>() > kMaxMatrixSeeds)
        fail("seeds",
             "expected an integer from 1 to " + std::to_string(kMaxMatrixSeeds) + " (runs per cell), got " + s->dump());
      m.seeds = s->get<std::uint64_t>();
    }
    std::optional<LoadError> base_error;
    const json base = load_base(root, dir, base_error);
    if (base_error) {
      out.error = std::move(base_error);
      return out;
    }
    std::vector<AxisEntry> rows = load_axis(root, "rows", true);
    const std::vector<AxisEntry> columns = load_axis(root, "columns", false);
    load_row_cells(root, rows, columns);
    for (const AxisEntry& r : rows) m.rows.push_back(r.axis);
    for (const AxisEntry& c : columns) m.columns.push_back(c.axis);
    for (const AxisEntry& r : rows) {
      std::vector<MatrixSpecCell> line;
      for (const AxisEntry& c : columns) {
        MatrixSpecCell cell;
        if (!r.not_applicable.empty()) {
          cell.not_applicable = r.not_applicable;
        } else if (auto na = r.cell_na.find(c.axis.name); na != r.cell_na.end()) {
          cell.not_applicable = na->second;
        } else {
          LoadResult lr = load_cell(base, r, c, label);
          if (lr.error) {
            out.error = std::move(lr.error);
            return out;
          }
          cell.scenario = std::move(*lr.scenario);
          resolve_program_folders(*cell.scenario, program_anchor(root, label, dir));
        }
        line.push_back(std::move(cell));
      }
      m.cells.push_back(std::move(line));
    }
  } catch (const MatrixFailure& f) {
    out.error = LoadError{label, f.path, f.message, f.suggestion, 0, 0};
    return out;
  }
  out.matrix = std::move(m);
  return out;
}

struct MetricDef {
  const char* name;
  bool duration;
  std::int64_t (*get)(const SweepMetrics&);
};

const std::vector<MetricDef>& metric_defs() {
  static const std::vector<MetricDef> kDefs = {
      {"writes_accepted", false, [](const SweepMetrics& m) { return m.writes_accepted; }},
      {"writes_rejected", false, [](const SweepMetrics& m) { return m.writes_rejected; }},
      {"grants", false, [](const SweepMetrics& m) { return m.grants; }},
      {"lease_losses", false, [](const SweepMetrics& m) { return m.lease_losses; }},
      {"longest_overlap", true, [](const SweepMetrics& m) { return m.longest_overlap.count(); }},
      {"holder_audit_findings", false, [](const SweepMetrics& m) { return m.audit_findings; }},
      {"iterations", false, [](const SweepMetrics& m) { return m.iterations; }},
      {"iterations_succeeded", false, [](const SweepMetrics& m) { return m.iterations_ok; }},
      {"updates_lost", false, [](const SweepMetrics& m) { return m.updates_lost; }},
      {"acquires", false, [](const SweepMetrics& m) { return m.acquires; }},
      {"acquire_latency_p50", true, [](const SweepMetrics& m) { return m.acquire_latency_p50.count(); }},
      {"acquire_latency_p99", true, [](const SweepMetrics& m) { return m.acquire_latency_p99.count(); }},
  };
  return kDefs;
}

const MetricDef& metric_def(const std::string& name) {
  for (const MetricDef& d : metric_defs()) {
    if (name == d.name) return d;
  }
  throw std::invalid_argument("matrix: unknown metric " + name);
}

MetricAggregate aggregate_metric(const std::string& name, const std::vector<SweepRun>& runs) {
  const MetricDef& d = metric_def(name);
  MetricAggregate a;
  a.name = name;
  a.duration = d.duration;
  a.runs = runs.size();
  std::vector<std::int64_t> v;
  for (const SweepRun& r : runs) v.push_back(d.get(r.metrics));
  if (v.empty()) return a;
  std::sort(v.begin(), v.end());
  a.min = v.front();
  a.max = v.back();
  a.median = v[(v.size() + 1) / 2 - 1];  // nearest rank: ceil(n / 2)
  return a;
}

/// A metric value for MATRIX.md: durations in ms (or s from 10 s on).
std::string metric_value_text(bool duration, std::int64_t v) {
  if (!duration) return std::to_string(v);
  if (v >= 10'000'000'000) return fmt::format("{:.1f} s", static_cast<double>(v) / 1e9);
  return fmt::format("{:.1f} ms", static_cast<double>(v) / 1e6);
}

/// How MATRIX.md names a metric.
std::string metric_label(const std::string& name) {
  if (name == "acquire_latency_p50") return "acquire p50";
  if (name == "acquire_latency_p99") return "acquire p99";
  return name;
}

/// Short names of the properties in MATRIX.md.
const char* short_name(Property p) {
  switch (p) {
    case Property::kMutualExclusion: return "ME";
    case Property::kNoStaleWrite: return "SW";
    case Property::kNoLostUpdate: return "LU";
    case Property::kTokenMonotonic: return "TM";
    case Property::kProgress: return "P";
    case Property::kRaftSafety: return "RS";
    case Property::kNoDuplicateEffect: return "DE";
  }
  return "?";
}

/// A rate in whole percent.
std::string pct(double v) { return percent_number(v, 0); }

const PropertyAggregate* aggregate(const MatrixCell& c, Property p) {
  for (const PropertyAggregate& a : c.properties) {
    if (a.property == p) return &a;
  }
  return nullptr;
}

std::string cell_text(const MatrixCell& c) {
  if (!c.not_applicable.empty()) return "N/A: " + c.not_applicable;
  std::vector<std::string> broken;
  std::uint64_t safe_runs = 0;  // the most runs of a safety property that held throughout
  for (Property p : all_properties()) {
    if (p == Property::kProgress) continue;
    const PropertyAggregate* a = aggregate(c, p);
    if (a == nullptr || a->runs == 0) continue;
    if (a->violations == 0) {
      safe_runs = std::max(safe_runs, a->runs);
      continue;
    }
    broken.push_back(fmt::format("**{}** {}/{} ({}–{} %)", short_name(p), a->violations, a->runs, pct(a->interval.low),
                                 pct(a->interval.high)));
  }
  std::string o;
  if (broken.empty()) {
    const Interval none = wilson_interval(0, safe_runs);
    o = fmt::format("safe (0/{}: ≤ {} %)", safe_runs, pct(none.high));
  } else {
    o = fmt::format("{}", fmt::join(broken, ", "));
  }
  if (const PropertyAggregate* p = aggregate(c, Property::kProgress)) {
    o += fmt::format(" · P {}/{}", p->runs - p->violations, p->runs);
  }
  for (const MetricAggregate& a : c.metrics) {
    o += " · " + metric_label(a.name) + " " + metric_value_text(a.duration, a.median);
    if (a.min != a.max) {
      o += " (" + metric_value_text(a.duration, a.min) + "–" + metric_value_text(a.duration, a.max) + ")";
    }
  }
  return o;
}

std::string md_escape_cell(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '|')
      o += "\\|";
    else if (ch == '\n')
      o += ' ';
    else
      o += ch;
  }
  return o;
}

}  // namespace

const std::vector<std::string>& matrix_metric_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const MetricDef& d : metric_defs()) out.push_back(d.name);
    return out;
  }();
  return kNames;
}

MatrixLoad load_matrix_text(std::string_view text, const std::string& label, const std::string& dir) {
  json root;
  if (auto e = parse_json_text(text, label, root, "a matrix file")) {
    MatrixLoad out;
    out.error = std::move(e);
    return out;
  }
  return load_matrix_json(root, label, dir);
}

MatrixLoad load_matrix_file(const std::string& path) {
  std::string text;
  if (auto e = read_text_file(path, text, "a matrix file")) {
    MatrixLoad out;
    out.error = std::move(e);
    return out;
  }
  return load_matrix_text(text, path, std::filesystem::path(path).parent_path().string());
}

SweepResult run_matrix_cell(const Scenario& s, std::uint64_t first_seed, std::uint64_t seeds, unsigned jobs) {
  SweepOptions opt;
  opt.seeds = SeedRange{first_seed, first_seed + seeds - 1};
  opt.jobs = std::max(1u, jobs);
  opt.keep = Keep::kNone;
  return run_sweep(s, opt);
}

Matrix run_matrix(const MatrixSpec& spec, const MatrixOptions& opt) {
  Matrix m;
  m.name = spec.name;
  m.title = spec.title;
  m.description = spec.description;
  m.source = spec.source;
  m.seeds = opt.seeds.value_or(spec.seeds);
  m.first_seed = spec.first_seed;
  m.columns = spec.columns;
  for (std::size_t r = 0; r < spec.rows.size(); ++r) {
    MatrixRow row;
    row.axis = spec.rows[r];
    for (std::size_t c = 0; c < spec.columns.size(); ++c) {
      const MatrixSpecCell& sc = spec.cells[r][c];
      MatrixCell cell;
      cell.column = spec.columns[c].name;
      cell.not_applicable = sc.not_applicable;
      if (sc.scenario) {
        SweepResult sr = run_matrix_cell(*sc.scenario, m.first_seed, m.seeds, opt.jobs);
        if (sr.error) {
          m.error = MatrixError{spec.rows[r].name, spec.columns[c].name, *sr.error};
          return m;
        }
        if (sr.mismatch && !m.mismatch) {
          m.mismatch = sr.mismatch;
          m.mismatch_row = spec.rows[r].name;
          m.mismatch_column = spec.columns[c].name;
        }
        cell.runs = sr.runs.size();
        cell.properties = std::move(sr.properties);
        for (const std::string& name : spec.columns[c].metrics) cell.metrics.push_back(aggregate_metric(name, sr.runs));
      }
      row.cells.push_back(std::move(cell));
    }
    m.rows.push_back(std::move(row));
    if (opt.on_row_done) opt.on_row_done(spec.rows[r].title, m.rows.size(), spec.rows.size());
  }
  return m;
}

std::string render_matrix_markdown(const Matrix& m) {
  std::string o = "# " + m.title + "\n\n";
  if (!m.description.empty()) o += m.description + "\n\n";
  o += fmt::format(
      "Generated from the matrix file `{}` by `fencesim matrix FILE --seeds {}` (fencesim {}): each cell ran seeds "
      "{} … {} of its scenario (the base scenario merged with the row's and the column's overrides). A cell lists the "
      "properties that broke and in how many runs, with the 95 % Wilson interval of the rate: **ME** "
      "mutual_exclusion, **SW** no_stale_write, **LU** no_lost_update, **TM** token_monotonic, **RS** raft_safety, "
      "**DE** no_duplicate_effect; `safe` when none broke, with the interval's upper bound; then `P` = runs in which "
      "`progress` held; then, in a column that lists metrics, each metric's median over the cell's runs of the run's "
      "value, with the runs' range when they differ (`acquire p50` / `acquire p99`: the run's acquisition latency, "
      "first acquire request to grant, at the 50th / 99th percentile). N/A cells say why.\n\n",
      m.source, m.seeds, version(), m.first_seed, m.first_seed + m.seeds - 1);
  o += "| design |";
  for (const MatrixAxis& c : m.columns) o += " " + md_escape_cell(c.title) + " |";
  o += "\n|---|";
  for (std::size_t i = 0; i < m.columns.size(); ++i) o += "---|";
  o += "\n";
  for (const MatrixRow& row : m.rows) {
    o += "| " + md_escape_cell(row.axis.title) + " |";
    for (const MatrixCell& c : row.cells) o += " " + md_escape_cell(cell_text(c)) + " |";
    o += "\n";
  }
  o += fmt::format(
      "\nRe-run with more seeds: `fencesim matrix FILE --seeds 100` (`--out DIR` writes elsewhere). The JSON beside "
      "this file has every count.\n");
  return o;
}

std::string render_matrix_json(const Matrix& m) {
  nlohmann::ordered_json j;
  j["matrix_version"] = 1;
  j["fencesim_version"] = version();
  j["matrix"] = m.name;
  j["source"] = m.source;
  j["seeds"] = {{"first", m.first_seed}, {"count", m.seeds}};
  nlohmann::ordered_json cols = nlohmann::ordered_json::array();
  for (const MatrixAxis& c : m.columns) {
    nlohmann::ordered_json cj{{"name", c.name}, {"title", c.title}};
    if (!c.metrics.empty()) cj["metrics"] = c.metrics;
    cols.push_back(cj);
  }
  j["columns"] = cols;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const MatrixRow& row : m.rows) {
    nlohmann::ordered_json cells = nlohmann::ordered_json::array();
    for (const MatrixCell& c : row.cells) {
      nlohmann::ordered_json cj{{"column", c.column}};
      if (!c.not_applicable.empty()) {
        cj["not_applicable"] = c.not_applicable;
      } else {
        cj["runs"] = c.runs;
        nlohmann::ordered_json props;
        for (const PropertyAggregate& a : c.properties) {
          props[to_string(a.property)] =
              a.runs == 0
                  ? nlohmann::ordered_json(nullptr)
                  : nlohmann::ordered_json{{"runs", a.runs},
                                           {"violations", a.violations},
                                           {"rate", six_decimals(*a.rate)},
                                           {"wilson95", {six_decimals(a.interval.low), six_decimals(a.interval.high)}}};
        }
        cj["properties"] = props;
        if (!c.metrics.empty()) {
          nlohmann::ordered_json ms = nlohmann::ordered_json::object();
          for (const MetricAggregate& a : c.metrics) {
            ms[a.name] = {{"runs", a.runs}, {"median", a.median}, {"min", a.min}, {"max", a.max}};
          }
          cj["metrics"] = ms;
        }
      }
      cells.push_back(cj);
    }
    rows.push_back(nlohmann::ordered_json{{"name", row.axis.name}, {"title", row.axis.title}, {"cells", cells}});
  }
  j["rows"] = rows;
  return j.dump(2) + "\n";
}

}  // namespace fencesim
