// fencesim/matrix.hpp — `fencesim matrix`: a grid of lock designs (lock
// service × resource policy, plus CAS without a lock) against fault kinds,
// each cell run over several seeds, counting the runs in which each safety
// property broke and those in which `progress` held.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fencesim/run.hpp"

namespace fencesim {

struct MatrixOptions {
  std::uint64_t seeds = 10;      ///< runs per cell
  std::uint64_t first_seed = 1;  ///< seeds first_seed … first_seed + seeds − 1
  /// Called after each design's row with (design, rows done, rows in all),
  /// for progress output; may be empty. No effect on the results.
  std::function<void(const std::string& design, std::size_t done, std::size_t total)> on_row_done;
};

struct MatrixCell {
  std::string fault;           ///< column key, e.g. "gc_pause"
  std::string not_applicable;  ///< why the cell cannot be expressed, or ""
  std::uint64_t runs = 0;
  std::map<std::string, std::uint64_t> violated;    ///< property → runs in which it broke
  std::set<std::string> not_applicable_properties;  ///< e.g. token_monotonic without tokens
  std::uint64_t progress_held = 0;
};

struct MatrixRow {
  std::string design;
  std::vector<MatrixCell> cells;
};

struct Matrix {
  std::uint64_t seeds = 0;
  std::vector<std::string> columns;
  std::vector<MatrixRow> rows;
};

Matrix run_matrix(const MatrixOptions& opt);
std::string render_matrix_markdown(const Matrix& m);
std::string render_matrix_json(const Matrix& m);

}  // namespace fencesim
