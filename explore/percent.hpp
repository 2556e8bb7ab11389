// explore/percent.hpp — a rate as a percentage with the precision it needs.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace fencesim {

/// `fraction` (0 … 1) as a percentage number without the sign: `decimals`
/// decimals from 1 % up, and below 1 % at least two significant digits, so
/// a rare rate never reads as zero (1 violation in 4,000 runs: "0.025", not
/// "0.0"; issue #35). Exactly 0 is "0" with `decimals` decimals.
inline std::string percent_number(double fraction, int decimals) {
  const double p = 100 * fraction;
  if (p <= 0 || p >= 1) return fmt::format("{:.{}f}", p, decimals);
  const int significant = 1 - static_cast<int>(std::floor(std::log10(p)));
  return fmt::format("{:.{}f}", p, std::max(decimals, significant));
}

/// `v` rounded to six decimals: how report.json and MATRIX.json write rates,
/// so the text does not depend on the last bits (the same on every machine).
inline double six_decimals(double v) { return std::round(v * 1e6) / 1e6; }

}  // namespace fencesim
