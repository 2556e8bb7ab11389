// loader/json_guard.cpp — the guarded JSON parse of every file fencesim
// reads (parse_json_text, loader.hpp): the DOM parser of nlohmann-json behind
// a SAX filter that bounds the nesting depth, refuses duplicate keys (which
// the DOM parser would silently collapse to the last one) and records where a
// syntax error is, as a line and a byte column.
#include <algorithm>
#include <set>

#include "loader/json_reader.hpp"
#include "loader/loader.hpp"

namespace fencesim {

namespace {

using loading::error_result;
using loading::index_path;
using loading::key_path;
using loading::quote;
using nlohmann::json;

struct ParseProblem {
  bool syntax = false;  ///< true: byte/message from the lexer
  std::size_t byte = 0;
  std::string message;
  std::string path;
};

class GuardedSax {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  explicit GuardedSax(json& root) : dom_(root, /*allow_exceptions=*/false) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return value() && dom_.number_float(v, s); }
  bool string(string_t& v) { return value() && dom_.string(v); }
  bool binary(binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) {
    if (!value() || !push(false)) return false;
    return dom_.start_object(n);
  }
  bool key(string_t& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      problem_.message = "duplicate key " + quote(k) + ": each key may appear only once in an object";
      problem_.path = path_to_key(k);
      return false;
    }
    f.key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (!value() || !push(true)) return false;
    return dom_.start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const nlohmann::detail::exception& ex) {
    problem_.syntax = true;
    problem_.byte = position;
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error …"
    if (auto col = what.find(", column "); col != std::string::npos) {
      if (auto colon = what.find(": ", col); colon != std::string::npos) what = what.substr(colon + 2);
    } else if (auto br = what.find("] "); br != std::string::npos) {
      what = what.substr(br + 2);
    }
    // Drop "; last read: '…'": the line and column say where, and the token
    // can span lines.
    if (auto lr = what.find("; last read: '"); lr != std::string::npos) {
      auto rest = what.find("'; expected ", lr + 14);
      what = what.substr(0, lr) + (rest == std::string::npos ? "" : what.substr(rest + 1));
    }
    problem_.message = what;
    return false;
  }

  const ParseProblem& problem() const { return problem_; }

 private:
  struct Frame {
    bool array = false;
    std::size_t next_index = 0;  // arrays: index of the next element
    std::string key;             // objects: the current key
    std::set<std::string> keys;
  };

  // Called before every value: advances the index of an enclosing array.
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().next_index;
    return true;
  }
  bool push(bool array) {
    if (static_cast<int>(frames_.size()) >= LoaderLimits::kMaxDepth) {
      problem_.message =
          "nesting deeper than " + std::to_string(LoaderLimits::kMaxDepth) + " levels; a scenario needs at most 5";
      return false;
    }
    frames_.push_back(Frame{array, 0, "", {}});
    return true;
  }
  std::string path_to_key(std::string_view last) const {
    std::string p;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      p = f.array ? index_path(p, f.next_index - 1) : key_path(p, f.key);
    }
    if (!last.empty()) p = key_path(p, last);
    return p;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Frame> frames_;
  ParseProblem problem_;
};

}  // namespace

std::optional<LoadError> parse_json_text(std::string_view text, const std::string& file_label, nlohmann::json& root,
                                         const std::string& what) {
  if (text.size() > LoaderLimits::kMaxFileBytes) {
    return error_result(file_label, "",
                        "the file is too large (" + std::to_string(text.size()) + " bytes; at most " +
                            std::to_string(LoaderLimits::kMaxFileBytes) + ")")
        .error;
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return error_result(file_label, "", "the file is empty; " + what + " is one JSON object (see docs/FORMAT.md)")
        .error;
  }
  try {
    GuardedSax sax(root);
    const bool ok = json::sax_parse(text.begin(), text.end(), &sax, nlohmann::json::input_format_t::json,
                                    /*strict=*/true, /*ignore_comments=*/true);
    if (!ok) {
      const ParseProblem& p = sax.problem();
      if (p.syntax) {
        // Line and column of the last byte the lexer read (1-based, bytes).
        const std::size_t end = std::min(p.byte, text.size());
        int line = 1;
        std::size_t line_start = 0;
        for (std::size_t i = 0; i < end; ++i) {
          if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
          }
        }
        const int column = static_cast<int>(std::max<std::size_t>(1, end - line_start));
        // Two common slips get a hint: a trailing comma and single quotes.
        std::string hint;
        if (end >= 1 && (text[end - 1] == '}' || text[end - 1] == ']')) {
          std::size_t i = end - 1;
          while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n' || text[i - 1] == '\r'))
            --i;
          if (i > 0 && text[i - 1] == ',')
            hint = "JSON allows no comma before a closing bracket: remove the trailing comma";
        } else if (end >= 1 && text[end - 1] == '\'') {
          hint = "JSON strings need double quotes";
        }
        return error_result(file_label, "", "malformed JSON: " + p.message, hint, line, column).error;
      }
      return error_result(file_label, p.path, p.message.empty() ? "malformed JSON" : p.message).error;
    }
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    return error_result(file_label, "", "out of memory while reading the file").error;
  } catch (const std::exception& e) {
    return error_result(file_label, "", std::string("internal error while reading: ") + e.what()).error;
  }
}

}  // namespace fencesim
