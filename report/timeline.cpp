// timeline.html and the terminal timeline: the race drawn and told.
//
// Both read only the scenario and the RunResult. The HTML page is one
// self-contained file: inline SVG and CSS and a script; no network, no
// external assets, no dates and no random ids (mark ids are their order of
// drawing), so the page is byte-identical for the same run.
//
// Without script the page is a static overview of the whole run. The script
// adds zoom and pan (wheel or pinch, drag, buttons, keys), a time axis
// re-labelled at every zoom, label thinning (only labels that fit are shown;
// the rest on hover), collapsible lanes, and the counterexample stories as a
// walk through the picture: a step highlights the marks it names and centres
// the view on them. Every mark has a shape and a text label or pattern
// besides its colour (Okabe–Ito colour-blind-safe palette), and an SVG
// <title> that browsers show on hover.
//
// Size: beyond kDetailBudget drawn items (marks and spans), the items
// nearest the first counterexample (or the start of the run) are drawn one
// by one and the rest are counted per pixel column of the whole-run view, as
// a grey band in each lane; the page says so.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "fencesim/run.hpp"
#include "models/faults.hpp"
#include "report/timeline_text.hpp"
#include "sim/text.hpp"
#include "timeline_assets.hpp"  // generated from timeline.css and timeline.js (report/CMakeLists.txt)

namespace fencesim {

namespace {

// Okabe–Ito palette.
constexpr const char* kBlue = "#0072B2";
constexpr const char* kOrange = "#E69F00";
constexpr const char* kSky = "#56B4E9";
constexpr const char* kGreen = "#009E73";
constexpr const char* kVermillion = "#D55E00";
constexpr const char* kPurple = "#CC79A7";
constexpr const char* kBrown = "#8A5A00";  // the lease's end at the service (a darker orange)

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default:
        // A control character (from a scenario's free text) is shown, not
        // written raw: NUL and most C0 characters are not allowed in HTML.
        if (sim::is_control(static_cast<unsigned char>(c)) && c != '\t' && c != '\n') {
          sim::append_escaped_control(o, static_cast<unsigned char>(c));
        } else {
          o += c;
        }
    }
  }
  return o;
}

std::string tok(const std::optional<std::int64_t>& t) { return t ? fmt::format("token {}", *t) : "no token"; }

constexpr double kLeft = 150;       // lane names
constexpr double kWidth = 1100;     // plot width in px of the static (whole-run) view
constexpr double kLaneH = 46;       // a lane with marks
constexpr double kCollapsedH = 16;  // a lane with nothing to show
constexpr double kCxRow = 16;       // one row per broken property above the lanes
/// Items (marks and spans) drawn one by one at most; the rest are counted
/// per pixel column. A 1-hour 50-client etcd run stays under 3 MB with it.
constexpr std::size_t kDetailBudget = 5000;
constexpr int kColumns = static_cast<int>(kWidth);

/// "Nice" tick steps (ns), from 1 us to 24 h; the same list is in the script.
constexpr std::int64_t kSteps[] = {1'000,
                                   2'000,
                                   5'000,
                                   10'000,
                                   20'000,
                                   50'000,
                                   100'000,
                                   200'000,
                                   500'000,
                                   1'000'000,
                                   2'000'000,
                                   5'000'000,
                                   10'000'000,
                                   20'000'000,
                                   50'000'000,
                                   100'000'000,
                                   200'000'000,
                                   500'000'000,
                                   1'000'000'000,
                                   2'000'000'000,
                                   5'000'000'000,
                                   10'000'000'000,
                                   20'000'000'000,
                                   30'000'000'000,
                                   60'000'000'000,
                                   120'000'000'000,
                                   300'000'000'000,
                                   600'000'000'000,
                                   1'200'000'000'000,
                                   1'800'000'000'000,
                                   3'600'000'000'000,
                                   7'200'000'000'000,
                                   10'800'000'000'000,
                                   21'600'000'000'000,
                                   43'200'000'000'000,
                                   86'400'000'000'000};

/// The smallest nice step that puts a tick at most every 90 px.
std::int64_t tick_step(std::int64_t span, double width) {
  const double max_ticks = std::max(2.0, std::floor(width / 90));
  for (std::int64_t s : kSteps) {
    if (static_cast<double>(span) / static_cast<double>(s) <= max_ticks) return s;
  }
  return kSteps[std::size(kSteps) - 1];
}

/// A tick's label: "1h05m", "5m", "12s", "10.25s" (as many decimals as the
/// step needs). The script's axis uses the same rule.
std::string tick_label(std::int64_t t, std::int64_t step) {
  constexpr std::int64_t kMin = 60'000'000'000;
  if (step >= kMin && step % kMin == 0) {
    const std::int64_t m = t / kMin;
    if (m >= 60) return m % 60 == 0 ? fmt::format("{}h", m / 60) : fmt::format("{}h{:02}m", m / 60, m % 60);
    return fmt::format("{}m", m);
  }
  int dec = 0;
  std::int64_t p = 1'000'000'000;
  while (step % p != 0) {
    p /= 10;
    ++dec;
  }
  const std::int64_t whole = t / 1'000'000'000;
  if (dec == 0) return fmt::format("{}s", whole);
  std::int64_t frac = (t % 1'000'000'000) / p;
  return fmt::format("{}.{:0{}}s", whole, frac, dec);
}

/// The SVG of a mark's shape, drawn at the origin (the mark's <g> is
/// translated to its time and height). Also used by the legend.
std::string shape_svg(const std::string& shape, const std::string& fill) {
  if (shape == "circle") return fmt::format(R"(<circle r="5" fill="{}" stroke="#000" stroke-width="0.7"/>)", fill);
  if (shape == "square") {
    return fmt::format(R"(<rect x="-4.5" y="-4.5" width="9" height="9" fill="{}" stroke="#000" stroke-width="0.7"/>)",
                       fill);
  }
  if (shape == "cross")
    return fmt::format(R"(<path d="M-5 -5l10 10m0 -10l-10 10" stroke="{}" stroke-width="3"/>)", fill);
  if (shape == "diamond") {
    return fmt::format(R"(<path d="M0 -6l6 6l-6 6l-6 -6z" fill="{}" stroke="#000" stroke-width="0.7"/>)", fill);
  }
  if (shape == "triangle") {
    return fmt::format(R"(<path d="M0 -6l6 10h-12z" fill="{}" stroke="#000" stroke-width="0.7"/>)", fill);
  }
  if (shape == "end") {  // a closing bracket: where a lease ends
    return fmt::format(R"(<path d="M-5 -8h5v16h-5" fill="none" stroke="{}" stroke-width="2.5"/>)", fill);
  }
  if (shape == "tick") return fmt::format(R"(<path d="M0 -5v10" stroke="{}" stroke-width="2"/>)", fill);
  return "";  // "none": a label only
}

/// The places a label may take around its mark, in the order tried: odd
/// ones are to the mark's left; label_shift(pos) moves it down (+) or up (-)
/// by a row. report/timeline.js's thin() and side() use the same places.
constexpr int kLabelPlaces = 6;
constexpr double label_shift(int pos) { return pos < 2 ? 0.0 : pos < 4 ? 18.0 : -18.0; }

/// One drawn thing: a point mark (a shape and maybe a label) or a span (a
/// rect from t0 to t1), in lane-local coordinates.
struct Item {
  std::size_t lane = 0;
  Time t0{0}, t1{0};
  bool span = false;
  int prio = 5;  ///< which labels win when they do not fit: lower first
  std::string cls, shape, fill, extra, title, label;
  double y = 0, h = 0;  ///< mark: height of its centre; span: top and height
  double label_dx = 7, label_dy = -7;
  bool label_thin = false;  ///< hidden in the static view (does not fit)
  int label_pos = 0;        ///< where it fits: 0 right of the mark, 1 left, 2-3 below, 4-5 above (label_shift)
  std::size_t id = 0;
};

/// One timeline drawing: the lanes (one per node) and what is drawn in them.
struct Canvas {
  Canvas(const Scenario& sc, const RunResult& run) : s(sc), r(run), h(run.history), dir(directory(sc)) {
    lanes = dir.all();
    for (std::size_t i = 0; i < lanes.size(); ++i) lane_of[lanes[i]] = i;
    // More than one lock (lock.keys): a client's lane names its lock ("A · row-1").
    lane_names = lanes;
    if (multiple_locks(sc.lock)) {
      for (const ClientSpec& cl : sc.clients) {
        if (auto it = lane_of.find(cl.name); it != lane_of.end())
          lane_names[it->second] += " · " + lock_of(sc.lock, cl);
      }
    }
  }
  const Scenario& s;
  const RunResult& r;
  const History& h;
  NodeDirectory dir;
  std::vector<std::string> lanes;
  std::vector<std::string> lane_names;  ///< what a lane's name shows
  std::map<std::string, std::size_t> lane_of;
  Time end{1};   ///< the axis's end
  Time last{0};  ///< the last recorded event
  std::vector<Item> items;

  std::size_t lane(const std::string& node) const {
    auto it = lane_of.find(node);
    return it == lane_of.end() ? 0 : it->second;
  }
  double x(Time t) const {
    const double f = static_cast<double>(t.count()) / static_cast<double>(std::max<std::int64_t>(end.count(), 1));
    return kLeft + std::clamp(f, 0.0, 1.0) * kWidth;
  }
  Item& mark(const std::string& node, Time t, double y, const std::string& shape, const std::string& fill,
             const std::string& cls, const std::string& title, const std::string& label, int prio) {
    Item it;
    it.lane = lane(node);
    it.t0 = it.t1 = t;
    it.y = y;
    it.shape = shape;
    it.fill = fill;
    it.cls = cls;
    it.title = title;
    it.label = label;
    it.prio = prio;
    items.push_back(std::move(it));
    return items.back();
  }
  Item& span(const std::string& node, Time t0, Time t1, double y, double hgt, const std::string& fill,
             const std::string& extra, const std::string& cls, const std::string& title) {
    Item it;
    it.lane = lane(node);
    it.t0 = t0;
    it.t1 = std::max(t0, t1);
    it.span = true;
    it.y = y;
    it.h = hgt;
    it.fill = fill;
    it.extra = extra;
    it.cls = cls;
    it.title = title;
    items.push_back(std::move(it));
    return items.back();
  }
};

std::string time_text(Time t) { return format_time(t); }

/// The axis ends a little after the last recorded event (the page says so
/// when the run went on longer).
void zoom_axis(Canvas& c) {
  const History& h = c.h;
  Time& last = c.last;
  for (const FaultRecord& f : h.faults) last = std::max(last, f.end ? *f.end : f.start);
  for (const GrantRecord& g : h.grants) last = std::max(last, g.at);
  for (const BeliefRecord& b : h.beliefs) last = std::max(last, b.end ? *b.end : b.start);
  for (const auto& [v, e] : h.lease_ends) last = std::max(last, e.at);
  for (const ResourceOpRecord& op : h.resource_ops) last = std::max(last, op.at);
  for (const NoteRecord& n : h.notes) last = std::max(last, n.at);
  for (const IterationRecord& it : h.iterations) {  // refused acquires (CROSSSLOT) and give-ups are drawn too
    if (it.outcome.rfind("acquire failed: ", 0) == 0 || it.outcome.rfind("acquire gave up: ", 0) == 0)
      last = std::max(last, it.start);
  }
  const Time zoom = last + last / 10 + Duration{1'000'000'000};
  c.end = std::min<Time>(c.s.duration, std::max<Time>(zoom, Duration{1'000'000'000}));
}

/// A partition shades every lane its detail names.
void draw_partition(Canvas& c, const FaultRecord& f, Time end, const std::string& title, const std::string& cls,
                    const std::string& label) {
  std::set<std::string> nodes;
  const std::string& d = f.detail;
  for (const std::string& n : c.lanes) {
    if (d.find("[" + n + "]") != std::string::npos || d.find("[" + n + ",") != std::string::npos ||
        d.find(" " + n + ",") != std::string::npos || d.find(" " + n + "]") != std::string::npos) {
      nodes.insert(n);
    }
  }
  for (const std::string& n : nodes) {
    c.span(n, f.start, end, 2, kLaneH - 4, "url(#parthatch)", "", cls, title);
  }
  c.mark(nodes.empty() ? c.lanes.front() : *nodes.begin(), f.start, 8, "diamond", kPurple, "fault", title, label, 2);
}

/// One fault as its kind's mark says (models/faults.hpp, FaultMark): the
/// look fixes the span, the symbol and where they sit on the lane.
void draw_fault(Canvas& c, const FaultRecord& f, Time end, const std::string& title) {
  const FaultMark m = fault_info(f.kind).mark(f);
  const std::string cls = std::string("fault ") + to_string(f.kind);
  switch (m.look) {
    case FaultMark::Look::kStopped: {
      c.span(f.target, f.start, end, 2, kLaneH - 4, "url(#pausehatch)", "", cls, title);
      Item& l = c.mark(f.target, f.start, kLaneH - 5, "none", "", "fault", title, m.label, 2);
      l.label_dx = 3;
      l.label_dy = 0;
      break;
    }
    case FaultMark::Look::kDown:
      c.span(f.target, f.start, end, 2, kLaneH - 4, "#000", R"(fill-opacity="0.18")", cls, title);
      c.mark(f.target, f.start, kLaneH / 2, "cross", "#000", "fault", title, m.label, 2);
      break;
    case FaultMark::Look::kCut: draw_partition(c, f, end, title, cls, m.label); break;
    case FaultMark::Look::kClock: c.mark(f.target, f.start, 10, "triangle", kPurple, "fault", title, m.label, 2); break;
    case FaultMark::Look::kSlowed: {
      c.span(f.target, f.start, end, kLaneH - 8, 5, kPurple, "", cls, title);
      Item& l = c.mark(f.target, f.start, kLaneH - 10, "none", "", "fault", title, m.label, 2);
      l.label_dx = 3;
      l.label_dy = 0;
      break;
    }
    case FaultMark::Look::kEvent: {
      // A lock service's own fault (target: the service, e.g. "redis")
      // is drawn on the service's first node.
      const auto service = c.dir.service_nodes();
      const std::string lane =
          c.lane_of.count(f.target) ? f.target : (service.empty() ? c.lanes.back() : service.front());
      c.mark(lane, f.start, 10, "diamond", kPurple, "fault", title, m.label, 2);
    }
  }
}

/// Faults: pauses, crashes, partitions, clock jumps, drift, slow, failovers.
void draw_faults(Canvas& c) {
  for (const FaultRecord& f : c.h.faults) {
    const Time end = f.end ? *f.end : c.s.duration;
    const std::string title =
        fmt::format("{} {} at {}{}{}", to_string(f.kind), f.target, time_text(f.start),
                    f.detail.empty() ? "" : " (" + f.detail + ")", f.skipped ? " — skipped: " + f.skip_reason : "");
    draw_fault(c, f, end, title);
  }
}

/// "the lock", or "lock row-1" with more than one lock (lock.keys).
std::string the_lock(const std::string& lock) { return lock.empty() ? std::string("the lock") : "lock " + lock; }

/// Leases: as the client believes (solid) and as the service holds (hatched);
/// where belief outlives the service's lease: the unsafe window.
void draw_leases(Canvas& c) {
  const History& h = c.h;
  std::map<std::string, Time> grant_at;
  for (const GrantRecord& g : h.grants) grant_at.emplace(g.value, g.at);
  for (const BeliefRecord& b : h.beliefs) {
    const Time end = b.end ? *b.end : c.s.duration;
    const Time held_from = grant_at.count(b.value) ? grant_at[b.value] : b.start;
    auto le = h.lease_ends.find(b.value);
    const Time held_to = le != h.lease_ends.end() ? le->second.at : c.s.duration;
    c.span(b.client, held_from, held_to, 6, 10, "url(#hatch)", R"(stroke="#E69F00")", "held",
           fmt::format("lease held by the service for {} ({}): {} – {}{}", b.client, tok(b.token), time_text(held_from),
                       time_text(held_to), le != h.lease_ends.end() ? " (" + le->second.reason + ")" : ""));
    c.span(b.client, b.start, end, 18, 10, kBlue, "", "belief",
           fmt::format("{} believes it holds {} ({}): {} – {} ({})", b.client, the_lock(b.lock), tok(b.token),
                       time_text(b.start), time_text(end), b.end ? b.end_reason : "end of run"));
    if (held_to < end) {
      c.span(b.client, held_to, end, 18, 10, "url(#unsafe)", R"(stroke="#D55E00")", "unsafe",
             fmt::format("UNSAFE: {} still believes it holds {} ({}) after its lease ended at {}", b.client,
                         the_lock(b.lock), tok(b.token), time_text(held_to)));
    }
  }
}

void draw_grants(Canvas& c) {
  for (const GrantRecord& g : c.h.grants) {
    c.mark(g.client, g.at, 11, "circle", kOrange, "grant",
           fmt::format("{}: {} granted {} to {} ({}, value {})", time_text(g.at), g.server, the_lock(g.lock), g.client,
                       tok(g.token), g.value),
           g.token ? fmt::format("T{}", *g.token) : "grant", 1);
    if (c.lane_of.count(g.server)) {
      c.mark(g.server, g.at, kLaneH / 2, "tick", kOrange, "grant",
             fmt::format("{}: {} granted {} to {} ({})", time_text(g.at), g.server, the_lock(g.lock), g.client,
                         tok(g.token)),
             "", 9);
    }
  }
}

/// Where each lease ends at the service (expiry, revocation, deletion): a
/// mark on the lane of the node that granted it.
void draw_lease_ends(Canvas& c) {
  std::map<std::string, const GrantRecord*> grant_of;
  for (const GrantRecord& g : c.h.grants) grant_of.emplace(g.value, &g);
  const std::map<std::string, Time> released_at = timeline_text::holder_releases(c.h);
  const auto service = c.dir.service_nodes();
  for (const auto& [value, e] : c.h.lease_ends) {
    auto g = grant_of.find(value);
    std::string lane = g != grant_of.end() && c.lane_of.count(g->second->server) ? g->second->server : "";
    if (lane.empty()) lane = service.empty() ? c.lanes.back() : service.front();
    const std::string whose =
        g != grant_of.end() ? g->second->client + "'s lease (" + tok(g->second->token) + ")" : "lease " + value;
    c.mark(lane, e.at, 33, "end", kBrown, "leaseend",
           fmt::format("{}: {} ended at the service: {}", time_text(e.at), whose, e.reason),
           timeline_text::lease_end_label(g != grant_of.end() ? g->second->client : "", e,
                                          timeline_text::released_before(released_at, e)),
           3);
  }
}

/// Renewals: the refused ones labelled, the successful ones as ticks.
void draw_renewals(Canvas& c) {
  for (const RenewalRecord& rn : c.h.renewals) {
    if (!rn.success) {
      c.mark(rn.client, rn.replied, 34, "cross", kVermillion, "renewal",
             fmt::format("{}: {}'s renewal was refused (first sent {})", time_text(rn.replied), rn.client,
                         time_text(rn.first_sent)),
             "renewal refused", 3);
    } else {
      c.mark(rn.client, rn.replied, 38, "tick", kGreen, "renewal",
             fmt::format("{}: renewal ok after {}", time_text(rn.replied),
                         sim::format_duration(rn.replied - rn.first_sent)),
             "", 9);
    }
  }
}

/// The refusal in the words of the label: "token 1 < last seen 2".
std::string refusal_text(std::string reason) {
  for (const char* from : {"last_seen", "last_written"}) {
    for (auto p = reason.find(from); p != std::string::npos; p = reason.find(from, p)) reason[p + 4] = ' ';
  }
  return reason;
}

/// Reads and writes at the resource copies.
void draw_resource_ops(Canvas& c) {
  int nth_write = 0;
  for (const ResourceOpRecord& op : c.h.resource_ops) {
    const double y = op.write ? ((nth_write++ % 2) == 0 ? 14 : 26) : 38;
    const std::string title =
        fmt::format("{}: {} {} {}'s {} of {}{} ({}){}; marks after: last_written {}, last_seen {}{}", time_text(op.at),
                    op.copy, op.accepted ? "accepted" : "REJECTED", op.client, op.write ? "write" : "read", op.value,
                    op.lock.empty() ? "" : (op.write ? " to row " : " of row ") + op.lock, tok(op.token),
                    op.accepted ? "" : ": " + op.reason, op.last_written, op.last_seen,
                    op.marks.empty() ? "" : ", " + named_marks_text(op.marks));
    const std::string verb = op.write ? "writes" : "reads";
    if (op.accepted) {
      c.mark(op.copy, op.at, y, op.write ? "circle" : "square", op.write ? kGreen : kSky,
             op.write ? "write ok" : "read ok", title, fmt::format("{} {} {}", op.client, verb, op.value),
             op.write ? 4 : 6);
    } else {
      c.mark(op.copy, op.at, y, "cross", kVermillion, "rejected", title,
             // The cross says "rejected" and the row write or read (the title
             // has it all): the label is who and why, short enough to sit
             // between the accepted writes it is refused among (issue #35).
             fmt::format("{}: {}", op.client, refusal_text(op.reason)), 0);
    }
  }
}

/// Acquisitions the service refused for good (CROSSSLOT) or a library gave
/// up (redsync, redislock): the iteration ended without a grant, drawn at
/// its start (the record keeps no other time), and nothing else of it is.
void draw_failed_acquires(Canvas& c) {
  for (const IterationRecord& it : c.h.iterations) {
    if (!c.lane_of.count(it.client)) continue;
    for (const std::string verb : {"failed", "gave up"}) {
      const std::string prefix = "acquire " + verb + ": ";
      if (it.outcome.rfind(prefix, 0) != 0) continue;
      const std::string why = it.outcome.substr(prefix.size());
      c.mark(it.client, it.start, 26, "cross", kVermillion, "rejected",
             fmt::format("{}: {}'s acquire {}: {}", time_text(it.start), it.client, verb, why),
             fmt::format("{}'s acquire {}: {}", it.client, verb, why.substr(0, why.find(' '))), 0);
    }
  }
}

/// Model notes: failovers, promotions, leader changes.
void draw_notes(Canvas& c) {
  for (const NoteRecord& n : c.h.notes) {
    if (!c.lane_of.count(n.node)) continue;
    c.mark(n.node, n.at, kLaneH - 10, "diamond", kSky, "note",
           fmt::format("{}: {} {}", time_text(n.at), n.node, n.text), n.kind, 3);
  }
}

/// The times a story line names ("12.202000s").
std::vector<std::string> times_in(const std::string& line) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(line[i])) ||
        (i > 0 && (std::isalnum(static_cast<unsigned char>(line[i - 1])) || line[i - 1] == '.'))) {
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
    if (j + 8 <= line.size() && line[j] == '.') {
      std::size_t k = j + 1;
      while (k < line.size() && std::isdigit(static_cast<unsigned char>(line[k]))) ++k;
      if (k - j - 1 == 6 && k < line.size() && line[k] == 's') out.push_back(line.substr(i, k + 1 - i));
      i = k;
    } else {
      i = j;
    }
  }
  return out;
}

Time parse_time_text(const std::string& t) {  // "12.202000s"
  const auto dot = t.find('.');
  return Duration{std::stoll(t.substr(0, dot)) * 1'000'000'000 + std::stoll(t.substr(dot + 1, 6)) * 1'000};
}

bool names_node(const std::string& line, const std::string& node) {
  auto part = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_'; };
  for (auto p = line.find(node); p != std::string::npos; p = line.find(node, p + 1)) {
    const bool before = p == 0 || !part(line[p - 1]);
    const bool after = p + node.size() >= line.size() || !part(line[p + node.size()]);
    if (before && after) return true;
  }
  return false;
}

/// A broken property's story, with the marks each step names.
struct Story {
  const Verdict* v;
  std::vector<std::string> steps;
  std::vector<std::vector<std::string>> step_times;
  std::vector<std::vector<std::size_t>> step_marks;  ///< item ids
};

std::vector<Story> stories_of(const RunResult& r) {
  std::vector<Story> out;
  for (const Verdict& v : r.verdicts) {
    if (v.status != Status::kViolated) continue;
    Story st{&v, {}, {}, {}};
    for (const std::string& line : v.story) {
      const auto dot = line.find(". ");
      st.steps.push_back(dot == std::string::npos ? line : line.substr(dot + 2));
      st.step_times.push_back(times_in(st.steps.back()));
    }
    out.push_back(std::move(st));
  }
  return out;
}

/// The window the page opens on: the first broken property's story (the
/// times it names and the violation), with a margin.
std::optional<std::pair<Time, Time>> story_window(const std::vector<Story>& stories, Time end) {
  for (const Story& st : stories) {
    std::optional<Time> lo, hi;
    auto take = [&](Time t) {
      lo = lo ? std::min(*lo, t) : t;
      hi = hi ? std::max(*hi, t) : t;
    };
    if (st.v->at) take(*st.v->at);
    for (const auto& ts : st.step_times) {
      for (const std::string& t : ts) take(parse_time_text(t));
    }
    if (!lo) continue;
    // More room on the right: labels are drawn to the right of their marks.
    const Duration before = std::max<Duration>((*hi - *lo) / 10, Duration{500'000'000});
    const Duration after = std::max<Duration>((*hi - *lo) * 45 / 100, Duration{1'000'000'000});
    return std::make_pair(std::max<Time>(Time{0}, *lo - before), std::min<Time>(end, *hi + after));
  }
  return std::nullopt;
}

/// Keeps the kDetailBudget items nearest the window (or the run's start);
/// the others are counted per pixel column. Returns, per lane, the column
/// counts of the aggregated items and the detailed time range.
struct Selection {
  std::vector<bool> detailed;
  std::vector<std::vector<int>> columns;  ///< per lane
  std::size_t aggregated = 0;
  Time from{0}, to{0};
};

Selection select_items(const Canvas& c, std::optional<std::pair<Time, Time>> window) {
  Selection sel;
  sel.detailed.assign(c.items.size(), true);
  sel.columns.assign(c.lanes.size(), std::vector<int>(kColumns, 0));
  if (c.items.size() <= kDetailBudget) return sel;
  const Time f0 = window ? window->first : Time{0};
  const Time f1 = window ? window->second : Time{0};
  auto dist = [&](const Item& it) {
    return std::max<std::int64_t>({std::int64_t{0}, (f0 - it.t1).count(), (it.t0 - f1).count()});
  };
  std::vector<std::size_t> order(c.items.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto da = dist(c.items[a]), db = dist(c.items[b]);
    return da != db ? da < db : c.items[a].t0 < c.items[b].t0;
  });
  // Cut at a distance, not mid-distance: every item nearer than the cut is
  // drawn, so the detailed range has no holes.
  std::int64_t cut = dist(c.items[order[kDetailBudget]]);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Item& it = c.items[order[k]];
    if (dist(it) >= cut) {
      sel.detailed[order[k]] = false;
      ++sel.aggregated;
      const double f =
          static_cast<double>(it.t0.count()) / static_cast<double>(std::max<std::int64_t>(c.end.count(), 1));
      const int col = std::clamp(static_cast<int>(f * kColumns), 0, kColumns - 1);
      ++sel.columns[it.lane][static_cast<std::size_t>(col)];
    }
  }
  sel.from = std::max<Time>(Time{0}, f0 - Duration{cut});
  sel.to = std::min<Time>(c.end, f1 + Duration{cut});
  return sel;
}

/// A broken property's name above the lanes goes to the left of its line
/// when it would run past the picture's right edge.
bool cx_name_right(double x, Property p) {
  return x + 8.0 * static_cast<double>(std::string(to_string(p)).size()) + 20 > kLeft + kWidth + 30;
}

/// Static label thinning: the labels that fit, by priority, with widths
/// estimated (the script measures and redoes it at every zoom).
void thin_static(Canvas& c, const Selection& sel, const std::vector<double>& lane_top, double axis_y) {
  struct Box {
    double x0, y0, x1, y1;
    std::size_t owner = SIZE_MAX;  ///< the mark whose shape this is
  };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    if (sel.detailed[i] && !c.items[i].span && !c.items[i].label.empty()) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return c.items[a].prio != c.items[b].prio ? c.items[a].prio < c.items[b].prio : c.items[a].t0 < c.items[b].t0;
  });
  constexpr double kBucket = 64;
  std::map<int, std::vector<Box>> buckets;
  // A label covers no mark but its own, whatever its priority: the shapes are
  // obstacles. (A rejection's label used to be let through, and so hid the
  // other client's accepted write it was refused after: issue #35.)
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    const Item& it = c.items[i];
    if (!sel.detailed[i] || it.span || it.shape == "none") continue;
    const double x = c.x(it.t0), y = lane_top[it.lane] + it.y;
    const Box b{x - 5.5, y - 6.5, x + 5.5, y + 6.5, i};
    for (int k = static_cast<int>(b.x0 / kBucket); k <= static_cast<int>(b.x1 / kBucket); ++k) buckets[k].push_back(b);
  }
  // The broken properties' names above the lanes: a label moved up a row
  // from the first lane keeps off them.
  int row = 0;
  for (const Verdict& v : c.r.verdicts) {
    if (v.status != Status::kViolated || !v.at) continue;
    const double x = c.x(*v.at), base = 12.0 + kCxRow * row++;
    const double w = 8.0 * static_cast<double>(std::string(to_string(v.property)).size() + 2);
    const Box b = cx_name_right(x, v.property) ? Box{x - 3 - w, base - 12, x - 3, base + 4}
                                               : Box{x + 3, base - 12, x + 3 + w, base + 4};
    for (int k = static_cast<int>(b.x0 / kBucket); k <= static_cast<int>(b.x1 / kBucket); ++k) buckets[k].push_back(b);
  }
  for (std::size_t i : order) {
    Item& it = c.items[i];
    const double w = 6.5 * static_cast<double>(it.label.size());
    const double base = lane_top[it.lane] + it.y + it.label_dy;
    auto free = [&](const Box& b) {
      if (b.x0 < kLeft - 2 || b.x1 > kLeft + kWidth) return false;
      if (b.y1 > axis_y) return false;  // not moved below the lanes, onto the axis
      for (int k = static_cast<int>(b.x0 / kBucket); k <= static_cast<int>(b.x1 / kBucket); ++k) {
        for (const Box& o : buckets[k]) {
          if (o.owner == i) continue;
          if (b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1) return false;
        }
      }
      return true;
    };
    // Right of the mark, else left, below right, below left, above right,
    // above left (the script tries the same places): a label kept off every
    // other mark still has somewhere to go.
    const double x = c.x(it.t0);
    it.label_thin = true;
    for (int pos = 0; pos < kLabelPlaces && it.label_thin; ++pos) {
      const double dy = label_shift(pos);
      const Box b = pos % 2 == 0 ? Box{x + it.label_dx - 1, base + dy - 12, x + it.label_dx + w + 1, base + dy + 4}
                                 : Box{x - it.label_dx - w - 1, base + dy - 12, x - it.label_dx + 1, base + dy + 4};
      if (!free(b)) continue;
      it.label_thin = false;
      it.label_pos = pos;
      for (int k = static_cast<int>(b.x0 / kBucket); k <= static_cast<int>(b.x1 / kBucket); ++k) {
        buckets[k].push_back(b);
      }
    }
  }
}

std::string render_item(const Canvas& c, const Item& it) {
  if (it.span) {
    const double x0 = c.x(it.t0);
    return fmt::format(
               R"(<rect id="m{}" class="span {}" data-t0="{}" data-t1="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"{}><title>{}</title></rect>)",
               it.id, it.cls, it.t0.count(), it.t1.count(), x0, it.y, std::max(c.x(it.t1) - x0, 1.0), it.h, it.fill,
               it.extra.empty() ? "" : " " + it.extra, esc(it.title)) +
           "\n";
  }
  std::string o = fmt::format(
      R"T(<g id="m{}" class="mark {}" data-t="{}" data-y="{}" data-p="{}" transform="translate({:.1f},{})">)T", it.id,
      it.cls, it.t0.count(), it.y, it.prio, c.x(it.t0), it.y);
  o += shape_svg(it.shape, it.fill);
  return o + "<title>" + esc(it.title) + "</title></g>\n";
}

/// A point mark's label, in the label layer above every lane's marks (so no
/// mark is painted over a label; thinning keeps labels off other marks), at
/// the mark's place: `data-m` names its mark.
std::string render_label(const Canvas& c, const Item& it, double lane_top) {
  if (it.span || it.label.empty()) return "";
  const bool left = it.label_pos % 2 == 1;
  const double shift = label_shift(it.label_pos);
  // Moved up or down a row: data-dy keeps the label's own offset for the script.
  return fmt::format(
             R"T(<g class="lw" data-m="m{}"{} transform="translate({:.1f},{:.1f})"><text class="lbl{}" x="{}" y="{}"{}>{}</text></g>)T",
             it.id, shift != 0 ? fmt::format(R"( data-dy="{}")", it.label_dy) : "", c.x(it.t0), lane_top + it.y,
             it.label_thin ? " thin" : "", left ? -it.label_dx : it.label_dx, it.label_dy + shift,
             left ? R"( text-anchor="end")" : "", esc(it.label)) +
         "\n";
}

/// Per lane: the aggregated items as bars per pixel column (taller: more),
/// runs of equal bars merged.
std::string render_band(const Canvas& c, const Selection& sel, std::size_t lane) {
  const std::vector<int>& col = sel.columns[lane];
  int total = 0;
  for (int n : col) total += n;
  if (total == 0) return "";
  // 1 + floor(log2(n)), in integers: 1, 2-3, 4-7, ... up to 8 steps.
  auto level = [](int n) { return std::min(8, static_cast<int>(std::bit_width(static_cast<unsigned>(n)))); };
  std::string d;
  for (int i = 0; i < kColumns;) {
    const int lv = level(col[static_cast<std::size_t>(i)]);
    int j = i + 1;
    while (j < kColumns && level(col[static_cast<std::size_t>(j)]) == lv) ++j;
    if (lv > 0) {
      const double hgt = 4.0 * lv;
      d += fmt::format("M{} {}h{}v{}h-{}z", i, kLaneH - 2 - hgt, j - i, hgt, j - i);
    }
    i = j;
  }
  return fmt::format(
             R"T(<g class="band" data-w="{}" transform="translate({},0)"><path d="{}" fill="#888" fill-opacity="0.55"/><title>{}: {} more marks drawn as counts per pixel column (taller: more, doubling per step); zoom into {} – {} for each one, or see trace.jsonl</title></g>)T",
             kColumns, kLeft, d, esc(c.lanes[lane]), total, format_time(sel.from), format_time(sel.to)) +
         "\n";
}

/// The verdict table rows.
std::string html_verdicts(const RunResult& r) {
  std::string verdict_rows;
  for (const Verdict& v : r.verdicts) {
    verdict_rows += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td><b>{}</b></td><td>{}</td></tr>\n",
                                v.status == Status::kViolated ? "bad" : "", to_string(v.property),
                                v.expected ? to_string(*v.expected) : "-", to_string(v.status), esc(v.summary));
  }
  return "<table><tr><th>property</th><th>expected</th><th>got</th><th>summary</th></tr>\n" + verdict_rows +
         "</table>\n";
}

/// "How … broke": the stories, each step a button naming its marks.
std::string html_stories(const std::vector<Story>& stories) {
  if (stories.empty()) return "";
  std::string o = "<aside id=\"stories\"><h2>Counterexamples</h2>\n";
  o += "<p class=\"hint js\" hidden>Click a step (or press n / p) to highlight its marks and centre the picture on "
       "them.</p>\n";
  for (std::size_t s = 0; s < stories.size(); ++s) {
    const Story& st = stories[s];
    o += fmt::format("<section class=\"story\" id=\"story-{}\"><h3>How <code>{}</code> broke</h3><ol>", s,
                     to_string(st.v->property));
    for (std::size_t i = 0; i < st.steps.size(); ++i) {
      std::string ids, ts;
      for (std::size_t id : st.step_marks[i]) ids += (ids.empty() ? "m" : " m") + std::to_string(id);
      for (const std::string& t : st.step_times[i]) {
        ts += (ts.empty() ? "" : " ") + std::to_string(parse_time_text(t).count());
      }
      o += fmt::format("<li class=\"step\" data-marks=\"{}\" data-ts=\"{}\">{}</li>", ids, ts, esc(st.steps[i]));
    }
    o += "</ol><p class=\"stepnav js\" hidden><button class=\"prev\">◀ previous step</button> <button "
         "class=\"next\">next step ▶</button></p></section>\n";
  }
  return o + "</aside>\n";
}

/// Matches each story step to the drawn items it names: an item on a lane
/// the step names (or any lane when it names none) with a start or end at a
/// time the step names. At most 12 per step.
void match_steps(std::vector<Story>& stories, const Canvas& c, const Selection& sel) {
  for (Story& st : stories) {
    for (std::size_t i = 0; i < st.steps.size(); ++i) {
      std::set<std::size_t> named;
      for (std::size_t l = 0; l < c.lanes.size(); ++l) {
        if (names_node(st.steps[i], c.lanes[l])) named.insert(l);
      }
      std::set<std::string> times(st.step_times[i].begin(), st.step_times[i].end());
      std::vector<std::size_t> ids;
      for (std::size_t k = 0; k < c.items.size() && ids.size() < 12 && !times.empty(); ++k) {
        const Item& it = c.items[k];
        if (!sel.detailed[k] || (!named.empty() && !named.count(it.lane))) continue;
        if (it.shape == "tick") continue;  // a service's grant tick or a renewal: too small to show a story
        if (times.count(format_time(it.t0)) || (it.span && times.count(format_time(it.t1)))) ids.push_back(it.id);
      }
      st.step_marks.push_back(std::move(ids));
    }
  }
}

/// The legend: each mark in its real shape, colour and pattern.
std::string html_legend(bool aggregated) {
  auto swatch = [](const std::string& inner, const std::string& text) {
    return "<span><svg width=\"26\" height=\"14\" aria-hidden=\"true\">" + inner + "</svg>" + text + "</span>\n";
  };
  auto bar = [](const std::string& fill, const std::string& extra) {
    return fmt::format(R"(<rect x="0.5" y="2.5" width="25" height="9" fill="{}"{}/>)", fill, extra);
  };
  auto at = [](const std::string& shape, const std::string& fill) {
    return R"T(<g transform="translate(13,7)">)T" + shape_svg(shape, fill) + "</g>";
  };
  std::string o = "<div class=\"legend\">\n";
  o += swatch(bar(kBlue, ""), "client believes it holds the lock");
  o += swatch(bar("url(#hatch)", R"( stroke="#E69F00")"), "lease held at the service");
  o += swatch(bar("url(#unsafe)", R"( stroke="#D55E00")"), "UNSAFE: believed after the lease ended");
  o += swatch(bar("url(#pausehatch)", ""), "paused");
  o += swatch(bar("#000", R"( fill-opacity="0.18")"), "crashed");
  o += swatch(bar("url(#parthatch)", ""), "partitioned");
  o += swatch(R"(<rect x="0.5" y="9" width="25" height="5" fill="#CC79A7"/>)", "slow");
  o += swatch(at("circle", kOrange), "grant (T<i>n</i>: its fencing token)");
  o += swatch(at("tick", kOrange), "grant at the service");
  o += swatch(at("end", kBrown), "lease ends at the service (expired, released, taken over, …)");
  o += swatch(at("circle", kGreen), "write accepted");
  o += swatch(at("square", kSky), "read accepted");
  o += swatch(at("cross", kVermillion), "write or read rejected (says why) / renewal refused");
  o += swatch(at("tick", kGreen), "renewal ok");
  o += swatch(at("triangle", kPurple), "clock fault");
  o += swatch(at("diamond", kPurple), "fault");
  o += swatch(at("diamond", kSky), "failover / leader change / note");
  o += swatch(R"(<path d="M13 0v14" stroke="#D55E00" stroke-width="2" stroke-dasharray="4 2"/>)",
              "first counterexample of a broken property (✗ name)");
  if (aggregated) {
    o += swatch(
        R"(<path d="M2 13h4v-4h-4zM8 13h4v-9h-4zM14 13h4v-6h-4zM20 13h4v-12h-4z" fill="#888" fill-opacity="0.55"/>)",
        "more marks, counted per pixel column");
  }
  return o + "</div>\n";
}

/// The counterexamples' group: a dashed line at each violated property's
/// first counterexample, its name in a row of its own above the lanes.
std::string svg_counterexamples(const Canvas& c, const RunResult& r, double top, double axis_y) {
  std::string svg;
  int row = 0;
  for (const Verdict& v : r.verdicts) {
    if (v.status != Status::kViolated || !v.at) continue;
    const double x = c.x(*v.at);
    const bool right = cx_name_right(x, v.property);
    svg += fmt::format(
        R"T(<g class="counterexample" data-t="{}" transform="translate({:.1f},0)"><line x1="0" y1="{}" x2="0" y2="{}" stroke="#D55E00" stroke-width="2" stroke-dasharray="6 3"/><text x="{}" y="{}" class="cx"{}>✗ {}</text><title>{}: {}</title></g>)T",
        v.at->count(), x, top - 4, axis_y, right ? -3 : 3, 12.0 + kCxRow * row++, right ? R"( text-anchor="end")" : "",
        to_string(v.property), to_string(v.property), esc(v.summary));
    svg += "\n";
  }
  return svg;
}

/// The zoom and pan controls (shown by the script).
std::string html_controls(bool has_window) {
  const auto window = has_window;
  std::string html;
  html += fmt::format(
      "<div class=\"controls js\" hidden><button id=\"zout\" title=\"zoom out (-)\">− zoom out</button><button "
      "id=\"zin\" title=\"zoom in (+)\">+ zoom in</button><button id=\"pl\" title=\"pan left (←)\">◀</button><button "
      "id=\"pr\" title=\"pan right (→)\">▶</button><button id=\"whole\" title=\"whole run (0)\">whole run</button>{}"
      "<span id=\"range\"></span><span style=\"color:#666\">wheel or pinch: zoom · drag: pan · keys (click the "
      "picture first): + − ← → 0{}</span></div>\n",
      window ? "<button id=\"tocx\" title=\"the first counterexample (c)\">first counterexample</button>" : "",
      window ? " c, n / p: next / previous step" : "");
  return html;
}

}  // namespace

std::string render_timeline_html(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  Canvas c(s, r);
  zoom_axis(c);
  draw_faults(c);
  draw_leases(c);
  draw_grants(c);
  draw_lease_ends(c);
  draw_renewals(c);
  draw_resource_ops(c);
  draw_failed_acquires(c);
  draw_notes(c);
  for (std::size_t i = 0; i < c.items.size(); ++i) c.items[i].id = i;

  std::vector<Story> stories = stories_of(r);
  const auto window = story_window(stories, c.end);
  const Selection sel = select_items(c, window);
  match_steps(stories, c, sel);

  // Lanes: a lane with nothing drawn collapses to a thin named line.
  std::vector<bool> busy(c.lanes.size(), false);
  for (const Item& it : c.items) busy[it.lane] = true;
  int cx_rows = 0;
  for (const Verdict& v : r.verdicts) cx_rows += v.status == Status::kViolated && v.at ? 1 : 0;
  const double top = 10 + kCxRow * std::max(1, cx_rows);
  std::vector<double> lane_top(c.lanes.size());
  double y = top;
  for (std::size_t i = 0; i < c.lanes.size(); ++i) {
    lane_top[i] = y;
    y += busy[i] ? kLaneH : kCollapsedH;
  }
  const double axis_y = y;
  const double height = axis_y + 50;
  thin_static(c, sel, lane_top, axis_y);

  std::string svg = fmt::format(
      R"(<svg id="tl" xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" role="img" aria-label="timeline of {}" data-left="{}" data-width="{}" data-top="{}" data-end="{}"{}>)",
      kLeft + kWidth + 30, height, esc(s.name), kLeft, kWidth, top, c.end.count(),
      window ? fmt::format(R"( data-v0="{}" data-v1="{}")", window->first.count(), window->second.count()) : "");
  svg += "\n";
  svg += fmt::format(R"SVG(<defs>
<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#E69F00" fill-opacity="0.25"/><line x1="0" y1="0" x2="0" y2="6" stroke="#E69F00" stroke-width="3"/></pattern>
<pattern id="pausehatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="6" height="6" fill="#bbbbbb" fill-opacity="0.35"/><line x1="0" y1="0" x2="0" y2="6" stroke="#555" stroke-width="1.5"/></pattern>
<pattern id="unsafe" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="#D55E00" fill-opacity="0.35"/><path d="M0 8 L8 0" stroke="#D55E00" stroke-width="2"/></pattern>
<pattern id="parthatch" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="#CC79A7" fill-opacity="0.15"/><circle cx="4" cy="4" r="1.3" fill="#CC79A7"/></pattern>
<clipPath id="clip"><rect id="cliprect" x="{}" y="-100" width="{}" height="100000"/></clipPath>
</defs>
)SVG",
                     kLeft, kWidth);
  svg += "<g id=\"bgs\">\n";
  for (std::size_t i = 0; i < c.lanes.size(); ++i) {
    svg += fmt::format(R"(<rect id="bg-{}" x="{}" y="{:.1f}" width="{}" height="{}" fill="{}"/>)", i, kLeft,
                       lane_top[i], kWidth, busy[i] ? kLaneH : kCollapsedH, i % 2 == 0 ? "#f6f6f6" : "#ffffff") +
           "\n";
  }
  svg += "</g>\n<g id=\"grid\">\n";
  const std::int64_t step = tick_step(c.end.count(), kWidth);
  std::string ticks;
  for (std::int64_t t = 0; t <= c.end.count(); t += step) {
    const double x = c.x(Duration{t});
    svg += fmt::format(R"(<line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}" stroke="#ddd"/>)", x, top, x, axis_y) + "\n";
    ticks += fmt::format(R"(<text x="{:.1f}" y="{}" class="axis tick">{}</text>)", x - 10, axis_y + 14,
                         tick_label(t, step)) +
             "\n";
  }
  svg += "</g>\n<g id=\"lanes\">\n";
  std::vector<std::string> lane_items(c.lanes.size());
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    if (sel.detailed[i]) lane_items[c.items[i].lane] += render_item(c, c.items[i]);
  }
  for (std::size_t i = 0; i < c.lanes.size(); ++i) {
    svg += fmt::format(R"T(<g class="lane{}" id="lane-{}" transform="translate(0,{:.1f})">)T",
                       busy[i] ? "" : " collapsed", i, lane_top[i]);
    if (busy[i]) {
      svg += fmt::format(R"(<text class="lname" x="8" y="{}">{}</text>)", kLaneH / 2 + 4, esc(c.lane_names[i]));
    } else {
      svg += fmt::format(
          R"(<text class="lname" x="8" y="12">{}<title>nothing drawn on {} in this run (click to expand or collapse)</title></text>)",
          esc(c.lane_names[i]), esc(c.lanes[i]));
    }
    svg += "\n<g clip-path=\"url(#clip)\">\n" + render_band(c, sel, i) + lane_items[i] + "</g></g>\n";
  }
  svg += "</g>\n<g id=\"labels\" clip-path=\"url(#clip)\">\n";
  for (std::size_t i = 0; i < c.items.size(); ++i) {
    if (sel.detailed[i]) svg += render_label(c, c.items[i], lane_top[c.items[i].lane]);
  }
  svg += "</g>\n<g id=\"cxs\">\n";
  svg += svg_counterexamples(c, r, top, axis_y);
  svg += "</g>\n<g id=\"axis\">\n" + ticks + "</g>\n";
  svg += fmt::format(
      R"(<text id="caption" x="{}" y="{}" class="axis">{}</text>)", kLeft, axis_y + 42,
      esc(c.end < s.duration ? fmt::format("true time → (the run went on to {}; nothing was recorded after {})",
                                           sim::format_duration(s.duration), format_time(c.last))
                             : std::string("true time →")));
  svg += "\n</svg>\n";

  const History& h = r.history;
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  html += "<title>fencesim timeline: " + esc(s.name) + "</title>\n";
  html += "<style>\n";
  html += kTimelineCss;  // report/timeline.css, embedded at build time
  html += "</style>\n";
  html += "</head><body>\n<h1>" + esc(s.name) + "</h1>\n";
  html += fmt::format("<p>seed {} · {} simulated · reproduce: <code>{}</code></p>\n", r.seed,
                      sim::format_duration(s.duration), esc(reproduce_command(s, r, m)));
  html += html_legend(sel.aggregated > 0);
  if (sel.aggregated > 0) {
    html += fmt::format(
        "<p class=\"note\">This run drew {} marks. The {} nearest {} are drawn one by one (from {} to {}); the other "
        "{} are counted per pixel column, as grey bands in their lanes (taller: more). Zoom into that range for the "
        "details; trace.jsonl has every event.</p>\n",
        c.items.size(), c.items.size() - sel.aggregated, window ? "the first counterexample" : "the start of the run",
        format_time(sel.from), format_time(sel.to), sel.aggregated);
  }
  html += "<div class=\"main\"><div class=\"pic\">\n";
  html += html_controls(window.has_value());
  html += "<p id=\"detail\">Hover over a mark for details; click to pin them here.</p>\n";
  html +=
      "<div id=\"plot\" tabindex=\"0\" aria-label=\"timeline; keys + and - zoom, arrows pan\" "
      "style=\"touch-action:none\">\n" +
      svg + "</div>\n</div>\n";
  html += html_stories(stories);
  html += "</div>\n";
  if (!s.description.empty()) html += "<p class=\"desc\">" + esc(s.description) + "</p>\n";
  html += html_verdicts(r);
  html += fmt::format(
      "<p style=\"color:#777;font-size:12px\">fencesim {} · {} grants · {} resource operations · {} faults</p>\n",
      version(), h.grants.size(), h.resource_ops.size(), h.faults.size());
  html += "<script>\n";
  html += kTimelineJs;  // report/timeline.js: zoom, pan, the axis, label thinning, lanes, stories
  html += "</script>\n";
  html += "</body></html>\n";
  return html;
}

}  // namespace fencesim
