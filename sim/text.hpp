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

/// `bytes` as valid UTF-8: each byte that does not begin or continue a
/// well-formed sequence (RFC 3629: no overlongs, no surrogates, at most
/// U+10FFFF) becomes U+FFFD. A program's stderr is arbitrary bytes, and its
/// kept tail may start inside a character; the reports are JSON.
inline std::string valid_utf8(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  const std::size_t n = bytes.size();
  for (std::size_t i = 0; i < n;) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (b < 0x80) {
      len = 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    }
    bool ok = len > 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(bytes[i + k]);
      ok = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    }
    if (ok) {
      out.append(bytes, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

}  // namespace sim
