// fencesim/matrix.hpp — `fencesim matrix FILE`: a grid of scenarios, rows
// (lock designs, say) × columns (fault kinds, say), each cell a small sweep
// over seeds, counting per property the runs in which it broke, with the
// 95 % Wilson interval of the rate.
//
//   fencesim::MatrixLoad m = fencesim::load_matrix_file("scenarios/matrices/seed-table.json");
//   if (m.error) { std::cerr << m.error->to_string() << "\n"; return 2; }
//   fencesim::Matrix result = fencesim::run_matrix(*m.matrix, opt);
//   std::string md = fencesim::render_matrix_markdown(result);
//
// A matrix file (docs/FORMAT.md "Matrix files") names a base scenario and
// two axes of overrides. Each cell's scenario is the base merged with its
// row's overrides, then its column's, then the row's overrides for that
// column, by JSON merge patch (RFC 7386: an object merges key by key, null
// removes a key, anything else — arrays included — replaces), loaded and
// validated by the ordinary loader (load_scenario_json). Every cell is
// loaded before anything runs; the first that does not load is the error,
// naming the matrix file, the cell and the JSON path in the merged scenario.
// A cell the file marks not applicable is not loaded and does not run.
//
// Each cell runs as run_sweep (fencesim/sweep.hpp) over seeds
// first_seed … first_seed + seeds − 1, keeping no report; the result does
// not depend on the number of jobs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fencesim/run.hpp"
#include "fencesim/sweep.hpp"

namespace fencesim {

/// A row or a column.
struct MatrixAxis {
  std::string name;   ///< unique on its axis; a column's is also its key in MATRIX.json
  std::string title;  ///< shown in MATRIX.md (the name when the file gives none)
  /// Columns only: the run metrics each cell of the column shows
  /// (matrix_metric_names(), e.g. "acquire_latency_p50"), in the file's order.
  std::vector<std::string> metrics;
};

/// The metric names a matrix column may list: the per-run metrics a sweep
/// keeps (SweepMetrics), named as in expect.metrics (docs/FORMAT.md
/// "Matrix files").
const std::vector<std::string>& matrix_metric_names();

/// One metric of a cell over its runs: the nearest-rank median and the
/// extremes of the runs' values (a duration metric in nanoseconds).
struct MetricAggregate {
  std::string name;
  bool duration = false;
  std::uint64_t runs = 0;
  std::int64_t median = 0, min = 0, max = 0;
};

/// One cell of a loaded matrix file.
struct MatrixSpecCell {
  std::optional<Scenario> scenario;  ///< the merged, loaded scenario; unset when not applicable
  std::string not_applicable;        ///< why the cell cannot be expressed, or ""
};

/// A loaded matrix file.
struct MatrixSpec {
  std::string name;         ///< the file's `matrix`
  std::string title;        ///< the file's `title`, or its name
  std::string description;  ///< shown under the title in MATRIX.md
  std::string source;       ///< the matrix file's name without its folder
  std::uint64_t seeds = 10;
  std::uint64_t first_seed = 1;
  std::vector<MatrixAxis> rows;
  std::vector<MatrixAxis> columns;
  std::vector<std::vector<MatrixSpecCell>> cells;  ///< [row][column]
};

struct MatrixLoad {
  std::optional<MatrixSpec> matrix;
  std::optional<LoadError> error;  ///< one line: LoadError::to_string()
};

/// The most seeds per cell.
inline constexpr std::uint64_t kMaxMatrixSeeds = 100'000;

/// Reads and loads a matrix file; a base given as a path is read relative to
/// the matrix file's folder.
MatrixLoad load_matrix_file(const std::string& path);
/// Loads matrix text: `label` names it in errors and `dir` is the folder a
/// base path is relative to.
MatrixLoad load_matrix_text(std::string_view text, const std::string& label, const std::string& dir);

struct MatrixOptions {
  std::optional<std::uint64_t> seeds;  ///< overrides MatrixSpec::seeds
  unsigned jobs = 1;                   ///< worker threads of each cell's sweep
  /// Called after each row with (row title, rows done, rows in all), for
  /// progress output; may be empty. No effect on the results.
  std::function<void(const std::string& row, std::size_t done, std::size_t total)> on_row_done;
};

struct MatrixCell {
  std::string column;          ///< the column's name
  std::string not_applicable;  ///< why the cell cannot be expressed, or ""
  std::uint64_t runs = 0;
  /// Per property (report order), from the cell's sweep: runs in which it
  /// applied, violations, the rate and its Wilson interval.
  std::vector<PropertyAggregate> properties;
  /// The column's metrics (MatrixAxis::metrics), in its order.
  std::vector<MetricAggregate> metrics;
};

struct MatrixRow {
  MatrixAxis axis;
  std::vector<MatrixCell> cells;
};

/// A cell whose sweep could not run.
struct MatrixError {
  std::string row, column;
  SweepError error;
};

struct Matrix {
  std::string name, title, description, source;
  std::uint64_t seeds = 0, first_seed = 1;
  std::vector<MatrixAxis> columns;
  std::vector<MatrixRow> rows;
  std::optional<MatrixError> error;           ///< the first cell that could not run: the matrix stopped
  std::optional<SweepMismatch> mismatch;      ///< the sweeps' determinism self-check failed (a bug)
  std::string mismatch_row, mismatch_column;  ///< where
};

/// The sweep of one cell (an ordinary run_sweep, keeping no report).
SweepResult run_matrix_cell(const Scenario& s, std::uint64_t first_seed, std::uint64_t seeds, unsigned jobs);

Matrix run_matrix(const MatrixSpec& spec, const MatrixOptions& opt);
std::string render_matrix_markdown(const Matrix& m);
std::string render_matrix_json(const Matrix& m);

}  // namespace fencesim
