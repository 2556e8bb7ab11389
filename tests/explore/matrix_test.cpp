// Matrix files (docs/FORMAT.md "Matrix files", include/fencesim/matrix.hpp):
// a cell is exactly the merged scenario run as a sweep, and every mistake in
// a matrix file is one error naming the file, the cell and the JSON path.
#include "fencesim/matrix.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using fencesim::load_matrix_file;
using fencesim::load_matrix_text;
using fencesim::MatrixLoad;

const std::string kDir = std::string(FENCESIM_SOURCE_DIR) + "/tests/explore/matrix";

/// The error line of loading `text` as m.json in kDir ("" when it loads).
std::string error_of(const std::string& text) {
  const MatrixLoad m = load_matrix_text(text, "m.json", kDir);
  return m.error ? m.error->to_string() : "";
}

/// A valid matrix with `rows` and `columns` spliced in.
std::string matrix(const std::string& rows, const std::string& columns, const std::string& extra = "") {
  return R"({"matrix": "m", "base": "base.json", )" + extra + R"("rows": )" + rows + R"(, "columns": )" + columns + "}";
}
const std::string kRow =
    R"([{"name": "r", "overrides": {"lock": {"service": "redis", "ttl": "2s"}, "resource": {"kind": "unfenced"}}}])";
const std::string kColumn =
    R"([{"name": "c", "overrides": {"faults": [{"at": "1s", "kind": "pause", "target": "A", "duration": "3s"}]}}])";

TEST(MatrixFile, ACellIsTheMergedScenarioRunAsASweep) {
  const MatrixLoad m = load_matrix_file(kDir + "/small.json");
  ASSERT_FALSE(m.error) << m.error->to_string();
  const fencesim::MatrixSpec& spec = *m.matrix;
  ASSERT_EQ(spec.rows.size(), 2u);
  ASSERT_EQ(spec.columns.size(), 2u);
  EXPECT_EQ(spec.rows[1].title, "Redis + Sentinel, fenced");
  EXPECT_EQ(spec.rows[0].title, "redis-single") << "no title: the name";
  EXPECT_EQ(spec.cells[0][1].not_applicable, "tested elsewhere");
  EXPECT_FALSE(spec.cells[0][1].scenario);
  ASSERT_TRUE(spec.cells[1][1].scenario);

  const fencesim::LoadResult direct = fencesim::load_scenario_file(kDir + "/cell-redis-sentinel-partition.json");
  ASSERT_TRUE(direct.ok()) << direct.error->to_string();
  EXPECT_EQ(*spec.cells[1][1].scenario, *direct.scenario) << "merge patch: null removes, arrays replace, objects merge";

  fencesim::MatrixOptions opt;
  opt.jobs = 2;
  const fencesim::Matrix result = fencesim::run_matrix(spec, opt);
  ASSERT_FALSE(result.error);
  EXPECT_FALSE(result.mismatch);
  EXPECT_EQ(result.seeds, 4u) << "the file's seeds";
  const fencesim::MatrixCell& cell = result.rows[1].cells[1];
  EXPECT_EQ(cell.runs, 4u);

  fencesim::SweepOptions so;
  so.seeds = {1, 4};
  so.keep = fencesim::Keep::kNone;
  const fencesim::SweepResult sweep = fencesim::run_sweep(*direct.scenario, so);
  ASSERT_EQ(cell.properties.size(), sweep.properties.size());
  for (std::size_t i = 0; i < sweep.properties.size(); ++i) {
    const auto& a = cell.properties[i];
    const auto& b = sweep.properties[i];
    EXPECT_EQ(a.property, b.property);
    EXPECT_EQ(a.runs, b.runs) << to_string(a.property);
    EXPECT_EQ(a.violations, b.violations) << to_string(a.property);
    EXPECT_EQ(a.not_applicable, b.not_applicable) << to_string(a.property);
    EXPECT_EQ(a.first_violations, b.first_violations) << to_string(a.property);
  }
  EXPECT_EQ(fencesim::run_matrix_cell(*direct.scenario, 1, 4, 1).runs, sweep.runs);

  // --seeds overrides the file's seeds; the rendered files name the counts.
  opt.seeds = 2;
  const fencesim::Matrix two = fencesim::run_matrix(spec, opt);
  EXPECT_EQ(two.rows[1].cells[1].runs, 2u);
  const std::string md = fencesim::render_matrix_markdown(two);
  EXPECT_NE(md.find("| redis-single | "), std::string::npos) << md;
  EXPECT_NE(md.find("N/A: tested elsewhere"), std::string::npos) << md;
  const std::string js = fencesim::render_matrix_json(two);
  EXPECT_NE(js.find("\"count\": 2"), std::string::npos) << js;
}

TEST(MatrixFile, ASmallMatrixLoads) { EXPECT_EQ(error_of(matrix(kRow, kColumn)), ""); }

TEST(MatrixFile, ErrorsInTheMatrixFileNameThePath) {
  EXPECT_EQ(error_of(matrix(kRow, kColumn, R"("sedes": 3, )")),
            "m.json: at sedes: unknown key \"sedes\" in the top level of a matrix file; expected one of version, "
            "matrix, title, description, base, seeds, rows, columns (did you mean \"seeds\"?)");
  EXPECT_EQ(error_of(R"({"matrix": "m", "rows": [], "columns": []})"),
            "m.json: at base: missing required key \"base\": the base scenario, inline or a path such as "
            "\"base.json\"");
  EXPECT_EQ(error_of(matrix(kRow, kColumn, R"("seeds": 0, )")),
            "m.json: at seeds: expected an integer from 1 to 100000 (runs per cell), got 0");
  EXPECT_EQ(error_of(R"({"matrix": "Seed Table", "base": {}, "rows": [], "columns": []})"),
            "m.json: at matrix: invalid name \"Seed Table\": use 1 to 100 characters from a-z, 0-9, '_' and '-'");
  EXPECT_EQ(error_of(matrix("[]", kColumn)), "m.json: at rows: expected a non-empty list of rows (the designs)");
  EXPECT_EQ(error_of(matrix(R"([{"name": "r"}, {"name": "r"}])", kColumn)),
            "m.json: at rows[1].name: duplicate name \"r\" on this axis");
  EXPECT_EQ(error_of(matrix(R"([{"name": "r", "overides": {}}])", kColumn)),
            "m.json: at rows[0].overides: unknown key \"overides\" in a row; expected one of name, title, overrides, "
            "not_applicable, cells (did you mean \"overrides\"?)");
  EXPECT_EQ(error_of(matrix(R"([{"name": "r", "overrides": []}])", kColumn)),
            "m.json: at rows[0].overrides: expected an object of scenario keys to merge into the base (JSON merge "
            "patch, RFC 7386)");
  EXPECT_EQ(error_of(matrix(R"([{"name": "r", "cells": {"d": {"not_applicable": "x"}}}])", kColumn)),
            "m.json: at rows[0].cells.d: unknown column \"d\"; columns are c");
  EXPECT_EQ(error_of(matrix(R"([{"name": "r", "cells": {"c": {"not_applicable": "x", "overrides": {}}}}])", kColumn)),
            "m.json: at rows[0].cells.c: a cell takes either \"overrides\" or \"not_applicable\", one of them");
  EXPECT_EQ(error_of(matrix(R"([{"name": "r", "not_applicable": ""}])", kColumn)),
            "m.json: at rows[0].not_applicable: expected a non-empty string: why the cell cannot be expressed, e.g. "
            "\"no replica to fail over to\"");
  EXPECT_EQ(error_of(matrix(kRow, R"([{"name": "Pause"}])")),
            "m.json: at columns[0].name: invalid name \"Pause\": use 1 to 100 characters from a-z, 0-9, '_' and '-'");
}

TEST(MatrixFile, ACellThatDoesNotLoadNamesTheFileTheCellAndThePath) {
  const std::string bad_target =
      R"([{"name": "c", "overrides": {"faults": [{"at": "1s", "kind": "pause", "target": "C", "duration": "3s"}]}}])";
  EXPECT_EQ(error_of(matrix(kRow, bad_target)),
            "m.json: cell \"r\" × \"c\": at faults[0].target: unknown node \"C\"; nodes in this scenario are A, B, "
            "redis-0, redis-1, sentinel-0, sentinel-1, sentinel-2, resource, roles redis-primary");
  // Merge patch: null removes a key the base has, so the merged scenario lacks it.
  EXPECT_EQ(
      error_of(matrix(R"([{"name": "r", "overrides": {"lock": {"service": "redis", "ttl": "2s"},
                                  "resource": {"kind": "unfenced"}, "duration": null}}])",
                      kColumn)),
      "m.json: cell \"r\" × \"c\": at duration: missing required key \"duration\": how long to run, e.g. \"60s\"");
  // A cell marked not applicable is not loaded at all.
  EXPECT_EQ(error_of(matrix(R"([{"name": "r", "cells": {"c": {"not_applicable": "no lock"}}}])", kColumn)), "");
}

TEST(MatrixFile, TheBaseFileAndTheMatrixFileItself) {
  EXPECT_EQ(error_of(matrix(kRow, kColumn).replace(matrix(kRow, kColumn).find("base.json"), 9, "nothere.json")),
            "m.json: at base: cannot read the base scenario \"nothere.json\" (read as " + kDir +
                "/nothere.json): no such file; expected the path of a scenario file relative to the matrix file's "
                "folder, or the base scenario inline as an object (check the file name, or give \"base\": {…})");
  EXPECT_EQ(error_of("{\"matrix\": \"m\",\n  \"base\": {},}"),
            "m.json:2:14: malformed JSON: syntax error while parsing object key - unexpected '}'; expected string "
            "literal (JSON allows no comma before a closing bracket: remove the trailing comma)");
  EXPECT_EQ(error_of(R"({"matrix": "m", "matrix": "n"})").find("m.json: at matrix: duplicate key"), 0u)
      << error_of(R"({"matrix": "m", "matrix": "n"})");
  EXPECT_EQ(error_of(""), "m.json: the file is empty; a matrix file is one JSON object (see docs/FORMAT.md)");
  EXPECT_EQ(load_matrix_file(kDir).error->to_string(), kDir + ": is a directory, not a matrix file");
  EXPECT_EQ(error_of(R"({"scenario": "x", "duration": "1s"})"),
            "m.json: this is a scenario file (it has \"scenario\" and no \"matrix\"), not a matrix file: run it with "
            "`fencesim run`, or make it the \"base\" of a matrix file");
}

// A base file that is missing (or a folder) is the matrix file's mistake:
// one line naming the matrix file, the JSON path `base`, the path it was
// read from and what was expected.
TEST(MatrixFile, AMissingBaseFileIsNamedInTheMatrixFileAtBase) {
  const std::string resolved = kDir + "/no-such-base.json";
  EXPECT_EQ(
      error_of(R"({"matrix": "m", "base": "no-such-base.json", "rows": )" + kRow + R"(, "columns": )" + kColumn + "}"),
      "m.json: at base: cannot read the base scenario \"no-such-base.json\" (read as " + resolved +
          "): no such file; expected the path of a scenario file relative to the matrix file's folder, or the "
          "base scenario inline as an object (check the file name, or give \"base\": {…})");
  EXPECT_EQ(error_of(R"({"matrix": "m", "base": ".", "rows": )" + kRow + R"(, "columns": )" + kColumn + "}")
                .find("m.json: at base: cannot read the base scenario \".\" (read as "),
            0u);
}

TEST(MatrixFile, TheShippedSeedTableLoads) {
  const MatrixLoad m = load_matrix_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/matrices/seed-table.json");
  ASSERT_FALSE(m.error) << m.error->to_string();
  EXPECT_EQ(m.matrix->rows.size(),
            29u);  // + the lock table, Redis Cluster, the queue's three ledgers, ZooKeeper, Hazelcast, Redisson
  EXPECT_EQ(m.matrix->columns.size(), 9u);  // + power_loss, the persistence variation of the crash column
  EXPECT_EQ(m.matrix->seeds, 10u);
}

// The power-loss column (issue 16): a power loss of the lock key's primary
// within a second of a grant under appendfsync everysec hands the token out
// again on a single primary; etcd, whose WAL is fsynced before it
// acknowledges, keeps it; designs without persistence are N/A with a reason.
TEST(MatrixFile, TheSeedTablesPowerLossColumnShowsTheEverysecWindow) {
  const MatrixLoad m = load_matrix_file(std::string(FENCESIM_SOURCE_DIR) + "/scenarios/matrices/seed-table.json");
  ASSERT_FALSE(m.error) << m.error->to_string();
  const fencesim::MatrixSpec& spec = *m.matrix;
  const auto column = std::find_if(spec.columns.begin(), spec.columns.end(),
                                   [](const fencesim::MatrixAxis& c) { return c.name == "power_loss"; });
  ASSERT_NE(column, spec.columns.end());
  const auto c = static_cast<std::size_t>(column - spec.columns.begin());
  EXPECT_EQ(spec.columns[c - 1].name, "failover") << "beside the plain crash column";
  const auto row = [&](const std::string& name) {
    const auto r =
        std::find_if(spec.rows.begin(), spec.rows.end(), [&](const fencesim::MatrixAxis& a) { return a.name == name; });
    EXPECT_NE(r, spec.rows.end()) << name;
    return static_cast<std::size_t>(r - spec.rows.begin());
  };
  const auto token_monotonic_violations = [&](std::size_t r) {
    const fencesim::MatrixSpecCell& cell = spec.cells[r][c];
    EXPECT_TRUE(cell.scenario) << spec.rows[r].name << ": " << cell.not_applicable;
    if (!cell.scenario) return std::uint64_t{0};
    const fencesim::SweepResult s = fencesim::run_matrix_cell(*cell.scenario, 1, 3, 1);
    EXPECT_FALSE(s.error);
    return s.properties[static_cast<std::size_t>(fencesim::Property::kTokenMonotonic)].violations;
  };
  EXPECT_EQ(token_monotonic_violations(row("Redis single primary · fenced strict")), 3u);
  EXPECT_EQ(token_monotonic_violations(row("etcd (3 members) · fenced strict")), 0u);
  EXPECT_NE(spec.cells[row("Work queue (visibility timeout) · fenced ledger")][c].not_applicable, "");
  EXPECT_NE(spec.cells[row("CAS without a lock")][c].not_applicable, "");
}

}  // namespace

namespace {

TEST(MatrixFile, AColumnsMetricsAreTheMedianAndRangeOfItsRunsValues) {
  const std::string column =
      R"([{"name": "c", "metrics": ["acquire_latency_p50", "acquires"],
           "overrides": {"faults": [{"at": "1s", "kind": "pause", "target": "A", "duration": "3s"}]}}])";
  const MatrixLoad m = load_matrix_text(matrix(kRow, column, R"("seeds": 3, )"), "m.json", kDir);
  ASSERT_FALSE(m.error) << m.error->to_string();
  EXPECT_EQ(m.matrix->columns[0].metrics, (std::vector<std::string>{"acquire_latency_p50", "acquires"}));
  fencesim::MatrixOptions opt;
  const fencesim::Matrix result = fencesim::run_matrix(*m.matrix, opt);
  ASSERT_FALSE(result.error);
  const fencesim::MatrixCell& cell = result.rows[0].cells[0];
  ASSERT_EQ(cell.metrics.size(), 2u);
  // The same cell as a sweep: each run's own value, then median and extremes.
  const fencesim::SweepResult sweep = fencesim::run_matrix_cell(*m.matrix->cells[0][0].scenario, 1, 3, 1);
  std::vector<std::int64_t> p50, acquires;
  for (const fencesim::SweepRun& r : sweep.runs) {
    p50.push_back(r.metrics.acquire_latency_p50.count());
    acquires.push_back(r.metrics.acquires);
  }
  std::sort(p50.begin(), p50.end());
  std::sort(acquires.begin(), acquires.end());
  const fencesim::MetricAggregate& a = cell.metrics[0];
  EXPECT_EQ(a.name, "acquire_latency_p50");
  EXPECT_TRUE(a.duration);
  EXPECT_EQ(a.runs, 3u);
  EXPECT_EQ(a.median, p50[1]);
  EXPECT_EQ(a.min, p50[0]);
  EXPECT_EQ(a.max, p50[2]);
  EXPECT_GT(a.min, 0) << "an acquire takes at least a round trip";
  EXPECT_EQ(cell.metrics[1].median, acquires[1]);
  EXPECT_FALSE(cell.metrics[1].duration);
  const std::string md = fencesim::render_matrix_markdown(result);
  EXPECT_NE(md.find(" · acquire p50 "), std::string::npos) << md;
  EXPECT_NE(md.find(" · acquires "), std::string::npos) << md;
  const std::string js = fencesim::render_matrix_json(result);
  EXPECT_NE(js.find("\"acquire_latency_p50\": {"), std::string::npos) << js;
}

TEST(MatrixFile, AColumnsMetricsAreCheckedByName) {
  EXPECT_EQ(error_of(matrix(kRow, R"([{"name": "c", "metrics": ["acquire_latency_p95"]}])")),
            "m.json: at columns[0].metrics[0]: unknown metric \"acquire_latency_p95\"; a matrix column can show "
            "writes_accepted, writes_rejected, grants, lease_losses, longest_overlap, holder_audit_findings, "
            "iterations, iterations_succeeded, updates_lost, acquires, acquire_latency_p50, acquire_latency_p99 "
            "(did you mean \"acquire_latency_p99\"?)");
  EXPECT_EQ(error_of(matrix(kRow, R"([{"name": "c", "metrics": []}])")),
            "m.json: at columns[0].metrics: expected a non-empty list of metric names, e.g. "
            "[\"acquire_latency_p50\", \"acquire_latency_p99\"]");
  EXPECT_EQ(error_of(matrix(kRow, R"([{"name": "c", "metrics": ["acquires", "acquires"]}])")),
            "m.json: at columns[0].metrics[1]: metric \"acquires\" is listed twice");
}

}  // namespace
