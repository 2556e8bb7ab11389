// cli/usage.hpp — usage errors of the command-line front ends, shared by
// `fencesim` (cli/main.cpp) and `fencesim-real` (real/main.cpp).
//
// Every bad invocation gives ONE line on stderr and exit code 2 (kExitUsage):
//
//   <program>: <what is wrong> (usage: <usage line>; `<program> [<command>] --help` says more)
//
// never CLI11's multi-line explanation or its own exit codes (105, 106 …).
// `--help`, `--help-all` and `--version` still print CLI11's full text and
// exit 0. Header-only; needs CLI11 (CLI/CLI.hpp).
//
// What is checked, in the order a front end calls it:
//  - unknown_option: an option the command does not have, before CLI11
//    parses (CLI11 would report a missing file first), with the nearest one;
//  - parse: CLI11's own errors (missing file or value, one file too many, a
//    value CLI11 cannot convert) turned into one line by `describe`;
//    An option that takes one value given more than once (`--seed 1 --seed
//    2`) is refused ("--seed was given 2 times; give it once"), never the
//    last one kept silently. A flag given twice (`-q -q`) means what it
//    means once and is accepted.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fencesim/exit_codes.hpp"
#include "models/validate.hpp"  // quote_text, join_names, suggest_nearest

namespace fencesim::cli {

/// The exit code of every usage error (and of invalid input).
inline constexpr int kExitUsage = exit_code::kInput;

/// One command's usage, for the messages below.
struct Usage {
  std::string program;  ///< "fencesim", "fencesim-real"
  std::string command;  ///< "run", "sweep" …; "" for a program without subcommands
  std::string line;     ///< "fencesim run FILE... [--seed N] …"
  std::string thing;    ///< what the positional argument is: "scenario file", "sweep.json file"
  bool many = false;    ///< the positional takes several files

  /// "usage: <line>; `<program> <command> --help` says more"
  std::string hint() const {
    return "usage: " + line + "; `" + program + (command.empty() ? "" : " " + command) + " --help` says more";
  }
  /// "run needs X", or without subcommands "X is required".
  std::string needs(const std::string& x) const {
    return command.empty() ? x + " is required" : command + " needs " + x;
  }
  /// "run has no option "--x"", or without subcommands "unknown option "--x"".
  std::string no_option(const std::string& quoted) const {
    return command.empty() ? "unknown option " + quoted : command + " has no option " + quoted;
  }
  /// "sweep takes one scenario file", or without subcommands "one scenario file only".
  std::string takes(const std::string& x) const { return command.empty() ? x + " only" : command + " takes " + x; }
};

/// `text` on one line: each line break (and the blanks after it) becomes "; ",
/// a trailing one is dropped. CLI11's what() can span lines.
inline std::string one_line(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      while (i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r' || text[i + 1] == ' ')) ++i;
      if (i + 1 < text.size() && !out.empty()) out += "; ";
    } else {
      out += text[i];
    }
  }
  return out;
}

/// Prints "<program>: <what>" on one line to stderr; returns kExitUsage.
inline int fail(const std::string& program, const std::string& what) {
  std::cerr << program << ": " << one_line(what) << "\n";
  return kExitUsage;
}

/// The option names `command` has: "--seeds" -> takes a value (true) or is a flag (false).
inline std::map<std::string, bool> option_names(const CLI::App& command, std::vector<std::string>* long_names) {
  std::map<std::string, bool> takes_value;
  for (const CLI::Option* o : command.get_options()) {
    if (o->get_positional()) continue;
    for (const std::string& l : o->get_lnames()) {
      takes_value["--" + l] = o->get_type_size() > 0;
      // --help-all is valid but not worth listing beside --help.
      if (long_names != nullptr && l != "help-all") long_names->push_back("--" + l);
    }
    for (const std::string& s : o->get_snames()) takes_value["-" + s] = o->get_type_size() > 0;
  }
  return takes_value;
}

/// The first word of argv[first..argc) that is an option `command` does not
/// have, as one line with the nearest option and the usage; nullopt if none.
/// Values of options that take one are skipped (`--out -x` is no option),
/// "-j4" is -j with its value, nothing after `--` is an option.
inline std::optional<std::string> unknown_option(const CLI::App& command, int first, int argc, char** argv,
                                                 const Usage& u) {
  std::vector<std::string> names;
  const std::map<std::string, bool> takes_value = option_names(command, &names);
  for (int i = first; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.size() < 2 || word[0] != '-') continue;
    const bool attached = word[1] != '-' && word.size() > 2;
    const std::string name = attached ? word.substr(0, 2) : word.substr(0, word.find('='));
    const auto it = takes_value.find(name);
    if (it == takes_value.end()) {
      const std::string hint = suggest_nearest(name, names);
      return u.no_option(quote_text(name)) + " (" + (hint.empty() ? "" : hint + " ") + "its options are " +
             join_names(names, 20) + "; " + u.hint() + ")";
    }
    if (it->second && !attached && name.size() == word.size()) ++i;  // its value
  }
  return std::nullopt;
}

/// CLI11's error in one line with the usage: "files is required" -> "run
/// needs one or more scenario files", "--seeds: 1 required TEXT missing" ->
/// "--seeds needs a value", "The following argument was not expected:
/// b.json" -> "sweep takes one scenario file; "b.json" is one too many".
inline std::string describe(const CLI::ParseError& e, const Usage& u) {
  const std::string what = one_line(e.what());
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    if (what.rfind("--", 0) == 0) {
      const std::string option = what.substr(0, what.find(' '));
      return u.needs(option) + " (" + u.hint() + ")";
    }
    return u.needs(u.many ? "one or more " + u.thing + "s" : "a " + u.thing) + " (" + u.hint() + ")";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && what.rfind("-", 0) == 0) {
    const std::string option = what.substr(0, what.find(':'));
    // "--seed: At Most 1 required but received 2": given more than once.
    const std::string::size_type received = what.find("but received ");
    if (what.find("At Most 1 ") != std::string::npos && received != std::string::npos) {
      return option + " was given " + what.substr(received + 13) + " times; give it once (" + u.hint() + ")";
    }
    return option + " needs a value (" + u.hint() + ")";
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::string::size_type colon = what.find(": ");
    const std::string extra = colon == std::string::npos ? what : what.substr(colon + 2);
    return u.takes(u.many ? u.thing + "s and options" : "one " + u.thing) + "; " + quote_text(extra, 200) +
           " is one too many (" + u.hint() + ")";
  }
  return what + " (" + u.hint() + ")";
}

/// Parses the command line. --help / --help-all / --version: CLI11's full
/// text, and the exit code 0. A parse error: one line, `usage_for(error)`
/// says which command's usage it names, exit 2. Nullopt when parsing
/// succeeded and the program goes on.
template <class UsageFor>
std::optional<int> parse(CLI::App& app, int argc, char** argv, UsageFor usage_for) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const Usage u = usage_for();
    return fail(u.program, describe(e, u));
  }
  return std::nullopt;
}

}  // namespace fencesim::cli
