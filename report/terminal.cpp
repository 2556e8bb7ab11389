// The terminal timeline `fencesim run` prints: the key events of the run, one
// line each, in true time. For a run that broke a property it shows the few
// lines around the first counterexample of each broken property (the
// instant of the verdict's `at`), not the start of the run; for a run that
// broke nothing, the first lines. The header says which lines are shown and
// how to see all of them (`--full-timeline`, timeline.html, trace.jsonl).
//
// Reads only the RunResult; no state, so the same run prints the same text.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fencesim/run.hpp"
#include "models/faults.hpp"
#include "report/timeline_text.hpp"

namespace fencesim {

namespace {

std::string token_text(const std::optional<std::int64_t>& t) { return t ? fmt::format("token {}", *t) : "no token"; }

struct Line {
  Time at;
  int order;
  std::string node, what, detail;
  const char* col;
};

constexpr const char* kTimelineMagenta = "\x1b[35m";
constexpr const char* kTimelineYellow = "\x1b[33m";

/// The faults' lines: each fault's start, and its kind's end line where it has one.
void add_fault_lines(const History& h, std::vector<Line>& lines, int& order) {
  // A kind's end line (FaultMark::end_line: a pause's "resumes"). Overlapping
  // faults of one kind on one node merge (the engine resumes a paused node
  // at the latest end): a fault's end gets the line only if no other of its
  // kind on the node that had begun by then lasts longer.
  // (Two ending at the same instant: the later-listed one gets it.)
  auto ends_last = [&h](std::size_t i) {
    const FaultRecord& p = h.faults[i];
    for (std::size_t j = 0; j < h.faults.size(); ++j) {
      const FaultRecord& o = h.faults[j];
      if (j == i || o.skipped || o.kind != p.kind || o.target != p.target || !o.end) continue;
      if (o.start <= *p.end && (*o.end > *p.end || (*o.end == *p.end && j > i))) return false;
    }
    return true;
  };
  for (std::size_t i = 0; i < h.faults.size(); ++i) {
    const FaultRecord& f = h.faults[i];
    lines.push_back({f.start, order++, f.target, to_string(f.kind), f.skipped ? "skipped: " + f.skip_reason : f.detail,
                     kTimelineMagenta});
    const char* end_line = fault_info(f.kind).mark(f).end_line;
    if (!f.skipped && f.end && *f.end > f.start && *end_line != '\0' && ends_last(i)) {
      lines.push_back({*f.end, order++, f.target, end_line, "", kTimelineMagenta});
    }
  }
}

/// The lease ends' lines, naming a release or takeover the reason leaves unsaid.
void add_lease_end_lines(const History& h, std::vector<Line>& lines, int& order) {
  const std::map<std::string, Time> releases = timeline_text::holder_releases(h);
  for (const auto& [value, e] : h.lease_ends) {
    std::string who;
    for (const GrantRecord& g : h.grants) {
      if (g.value == value) who = g.client;
    }
    // A release or a takeover the reason does not say in words (Redis only
    // sees the key gone) is named, as on timeline.html's mark.
    const std::string word = timeline_text::lease_end_word(e, timeline_text::released_before(releases, e));
    const bool says = word == "ended" || e.reason.find(word) != std::string::npos;
    lines.push_back({e.at, order++, "service", "lease end",
                     (who.empty() ? value : who + "'s lease") + (says ? "" : " (" + word + ")") + ": " + e.reason,
                     kTimelineYellow});
  }
}

/// Every line of the terminal timeline, in true time (ties in the order
/// the history lists them: faults, grants, lease ends, beliefs, resource
/// operations, notes, refused acquires).
std::vector<Line> timeline_lines(const RunResult& r) {
  const History& h = r.history;
  std::vector<Line> lines;
  int order = 0;
  const char* kRed = "\x1b[31m";
  const char* kGreenC = "\x1b[32m";
  const char* kYellow = "\x1b[33m";
  const char* kCyan = "\x1b[36m";
  add_fault_lines(h, lines, order);
  for (const GrantRecord& g : h.grants) {
    lines.push_back({g.at, order++, g.server, "grant",
                     g.client + (g.lock.empty() ? "" : " " + g.lock) + " " + token_text(g.token), kCyan});
  }
  add_lease_end_lines(h, lines, order);
  for (const BeliefRecord& b : h.beliefs) {
    if (b.end && b.end_reason != "release") {
      lines.push_back({*b.end, order++, b.client, "belief ends", b.end_reason, kYellow});
    }
  }
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (!op.write && op.accepted) continue;
    lines.push_back({op.at, order++, op.copy,
                     fmt::format("{} {}", op.write ? "write" : "read", op.accepted ? "ok" : "REJECTED"),
                     fmt::format("{}{} {} {}{}", op.client, op.lock.empty() ? "" : " " + op.lock, op.value,
                                 token_text(op.token), op.accepted ? "" : " (" + op.reason + ")"),
                     op.accepted ? kGreenC : kRed});
  }
  for (const NoteRecord& n : h.notes) lines.push_back({n.at, order++, n.node, n.kind, n.text, kCyan});
  // Acquisitions the service refused for good (CROSSSLOT): the iteration
  // ended without a grant, at its start, as timeline.html draws it.
  for (const IterationRecord& it : h.iterations) {
    for (const std::string what : {"acquire failed", "acquire gave up"}) {
      if (it.outcome.rfind(what + ": ", 0) != 0) continue;
      lines.push_back({it.start, order++, it.client, what,
                       fmt::format("iteration {}: {}", it.index, it.outcome.substr(what.size() + 2)), kRed});
    }
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; });
  return lines;
}

/// One line; `node_width` is the node column's width (the longest node
/// name of the run, at least 12).
std::string line_text(const Line& l, bool color, std::size_t node_width) {
  const std::string what = color ? std::string(l.col) + l.what + "\x1b[0m" : l.what;
  return fmt::format("  {:>12}  {:<{}} {:<{}} {}\n", format_time(l.at), l.node, node_width, what, color ? 25 : 16,
                     l.detail);
}

/// The first counterexample of one or more broken properties at one
/// instant: the line index it falls before, and the properties.
struct Mark {
  std::size_t index;
  Time at;
  std::vector<std::string> properties;
};

/// One window of lines [begin, end) and the marks inside it.
struct Window {
  std::size_t begin, end;
  std::vector<Mark> marks;
};

std::string join(const std::vector<std::string>& words) {
  std::string o;
  for (std::size_t i = 0; i < words.size(); ++i) o += (i ? ", " : "") + words[i];
  return o;
}

}  // namespace

std::string render_terminal_timeline(const Scenario& s, const RunResult& r, const TerminalTimeline& options) {
  (void)s;
  const std::vector<Line> lines = timeline_lines(r);
  const std::size_t n = lines.size();
  std::size_t node_width = 12;
  for (const Line& l : lines) node_width = std::max(node_width, l.node.size());
  const std::string whole_hint =
      "  every line: run again with --full-timeline, or open timeline.html (trace.jsonl has every event)\n";
  auto lines_text = [](std::size_t k) { return fmt::format("{} line{}", k, k == 1 ? "" : "s"); };
  auto more_text = [](std::size_t k) { return fmt::format("    … {} more line{}\n", k, k == 1 ? "" : "s"); };

  // The marks: one per distinct instant of a broken property's first
  // counterexample, in true time; each sits before the first line at or
  // after its instant.
  std::vector<Mark> marks;
  for (const Verdict& v : r.verdicts) {
    if (v.status != Status::kViolated || !v.at) continue;
    const auto it = std::find_if(marks.begin(), marks.end(), [&v](const Mark& m) { return m.at == *v.at; });
    if (it != marks.end()) {
      it->properties.push_back(to_string(v.property));
      continue;
    }
    const std::size_t index = static_cast<std::size_t>(
        std::lower_bound(lines.begin(), lines.end(), *v.at, [](const Line& l, Time t) { return l.at < t; }) -
        lines.begin());
    marks.push_back({index, *v.at, {to_string(v.property)}});
  }
  std::stable_sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) { return a.at < b.at; });

  std::string o;
  if (options.whole || n == 0) {
    o = fmt::format("\n  timeline (true time): all {}\n", lines_text(n));
    std::size_t next_mark = 0;
    for (std::size_t i = 0; i <= n; ++i) {
      for (; next_mark < marks.size() && marks[next_mark].index == i; ++next_mark) {
        o += fmt::format("  ──── {} first counterexample of {}\n", format_time(marks[next_mark].at),
                         join(marks[next_mark].properties));
      }
      if (i < n) o += line_text(lines[i], options.color, node_width);
    }
    return o;
  }

  if (marks.empty()) {
    const std::size_t shown = std::min(n, options.first_lines);
    o = shown == n ? fmt::format("\n  timeline (true time): all {}\n", lines_text(n))
                   : fmt::format("\n  timeline (true time): the first {} of {} (no property broke)\n{}", shown,
                                 lines_text(n), whole_hint);
    for (std::size_t i = 0; i < shown; ++i) o += line_text(lines[i], options.color, node_width);
    if (shown < n) o += more_text(n - shown);
    return o;
  }

  // One window per mark, [index - before, index + after), merged where
  // they overlap or touch.
  std::vector<Window> windows;
  for (const Mark& m : marks) {
    const std::size_t begin = m.index > options.before ? m.index - options.before : 0;
    const std::size_t end = std::min(n, m.index + options.after);
    if (!windows.empty() && begin <= windows.back().end) {
      windows.back().end = std::max(windows.back().end, end);
      windows.back().marks.push_back(m);
    } else {
      windows.push_back({begin, end, {m}});
    }
  }
  std::vector<std::string> ranges, around;
  for (const Window& w : windows) {
    ranges.push_back(w.end > w.begin ? fmt::format("{}–{}", w.begin + 1, w.end) : "none");
  }
  for (const Mark& m : marks) around.push_back(fmt::format("{} ({})", join(m.properties), format_time(m.at)));
  o = fmt::format("\n  timeline (true time): lines {} of {}, around the first counterexample of {}\n{}", join(ranges),
                  n, join(around), whole_hint);
  std::size_t previous_end = 0;
  for (const Window& w : windows) {
    if (w.begin > previous_end) o += fmt::format("    … {}\n", lines_text(w.begin - previous_end));
    std::size_t next_mark = 0;
    for (std::size_t i = w.begin; i <= w.end; ++i) {
      for (; next_mark < w.marks.size() && w.marks[next_mark].index == i; ++next_mark) {
        o += fmt::format("  ──── {} first counterexample of {}\n", format_time(w.marks[next_mark].at),
                         join(w.marks[next_mark].properties));
      }
      if (i < w.end) o += line_text(lines[i], options.color, node_width);
    }
    previous_end = w.end;
  }
  if (previous_end < n) o += more_text(n - previous_end);
  return o;
}

}  // namespace fencesim
