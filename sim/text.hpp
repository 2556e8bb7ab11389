// sim/text.hpp — user-supplied text shown safely in messages and reports.
//
// A scenario's strings (names, descriptions, durations as written) reach
// error lines, report.md, timeline.html and the trace. A control character
// in them is shown as the six characters \u00XX, never written raw: a NUL or
// an escape sequence must not reach a terminal or a file as itself.
#pragma once

#include <string>

namespace sim {

/// A C0 control character or DEL.
inline bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/// Appends `c` as \u00XX (lowercase hex).
inline void append_escaped_control(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u00";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

}  // namespace sim
