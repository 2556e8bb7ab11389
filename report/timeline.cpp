// timeline.html and the terminal timeline: the race drawn and told.
//
// Both read only the scenario and the RunResult. The HTML page is one
// self-contained file: inline SVG and CSS and a few lines of JavaScript for
// click-to-pin details; no network, no external assets. Every mark has a
// text label or a pattern besides its colour (Okabe–Ito colour-blind-safe
// palette), and an SVG <title> that browsers show on hover.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "fencesim/run.hpp"
#include "sim/text.hpp"

namespace fencesim {

namespace {

// Okabe–Ito palette.
constexpr const char* kBlue = "#0072B2";
constexpr const char* kOrange = "#E69F00";
constexpr const char* kSky = "#56B4E9";
constexpr const char* kGreen = "#009E73";
constexpr const char* kVermillion = "#D55E00";
constexpr const char* kPurple = "#CC79A7";
constexpr const char* kGrey = "#777777";

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

struct Layout {
  double left = 150;    // lane labels
  double width = 1100;  // plot width in px
  double lane_h = 46;
  double top = 40;
  Time end{1};
  double x(Time t) const {
    const double f = static_cast<double>(t.count()) / static_cast<double>(std::max<std::int64_t>(end.count(), 1));
    return left + std::clamp(f, 0.0, 1.0) * width;
  }
};

/// A "nice" tick step for an axis spanning `span`.
Duration tick_step(Duration span) {
  static const std::int64_t kSteps[] = {
      1'000'000,       2'000'000,         5'000'000,        10'000'000,     20'000'000,      50'000'000,
      100'000'000,     200'000'000,       500'000'000,      1'000'000'000,  2'000'000'000,   5'000'000'000,
      10'000'000'000,  20'000'000'000,    30'000'000'000,   60'000'000'000, 120'000'000'000, 300'000'000'000,
      600'000'000'000, 1'800'000'000'000, 3'600'000'000'000};
  for (std::int64_t s : kSteps) {
    if (span.count() / s <= 12) return Duration{s};
  }
  return Duration{3'600'000'000'000};
}

class Svg {
 public:
  void raw(const std::string& s) { out_ += s; }
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra,
            const std::string& title, const std::string& cls = "") {
    out_ += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" {}{}>)", x, y,
                        std::max(w, 1.0), h, fill, extra, cls.empty() ? "" : " class=\"" + cls + "\"");
    out_ += "<title>" + esc(title) + "</title></rect>\n";
  }
  void text(double x, double y, const std::string& s, const std::string& extra = "") {
    out_ += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" {}>{}</text>)", x, y, extra, esc(s)) + "\n";
  }
  void mark(const std::string& shape, double x, double y, const std::string& fill, const std::string& title,
            const std::string& label = "", const std::string& cls = "") {
    out_ += "<g class=\"mark" + (cls.empty() ? std::string() : " " + cls) + "\">";
    if (shape == "circle") {
      out_ += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="5" fill="{}" stroke="#000" stroke-width="0.7"/>)", x, y,
                          fill);
    } else if (shape == "cross") {
      out_ += fmt::format(R"(<path d="M{:.1f} {:.1f} l10 10 m0 -10 l-10 10" stroke="{}" stroke-width="3"/>)", x - 5,
                          y - 5, fill);
    } else if (shape == "diamond") {
      out_ +=
          fmt::format(R"(<path d="M{:.1f} {:.1f} l6 6 l-6 6 l-6 -6 z" fill="{}" stroke="#000" stroke-width="0.7"/>)", x,
                      y - 6, fill);
    } else if (shape == "triangle") {
      out_ += fmt::format(R"(<path d="M{:.1f} {:.1f} l6 10 l-12 0 z" fill="{}" stroke="#000" stroke-width="0.7"/>)", x,
                          y - 6, fill);
    } else {  // tick
      out_ += fmt::format(R"(<path d="M{:.1f} {:.1f} l0 10" stroke="{}" stroke-width="2"/>)", x, y - 5, fill);
    }
    if (!label.empty()) {
      out_ += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="lbl">{}</text>)", x + 7, y - 7, esc(label));
    }
    out_ += "<title>" + esc(title) + "</title></g>\n";
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

}  // namespace

namespace {

/// One timeline drawing: the lanes (one per node), the axis and the SVG.
struct Canvas {
  Canvas(const Scenario& sc, const RunResult& run) : s(sc), r(run), h(run.history), dir(directory(sc)) {
    lanes = dir.all();
    for (std::size_t i = 0; i < lanes.size(); ++i) lane_of[lanes[i]] = i;
  }
  const Scenario& s;
  const RunResult& r;
  const History& h;
  NodeDirectory dir;
  std::vector<std::string> lanes;
  std::map<std::string, std::size_t> lane_of;
  Layout L;
  Time last{0};  ///< the last recorded event
  double height = 0;
  Svg svg;

  double lane_y(const std::string& node) const {
    auto it = lane_of.find(node);
    return L.top + static_cast<double>(it == lane_of.end() ? 0 : it->second) * L.lane_h;
  }
};

std::string time_text(Time t) { return format_time(t); }

/// Zooms the axis to where things happen: up to the last recorded event
/// plus a margin (the page says so when the run went on longer).
void zoom_axis(Canvas& c) {
  const History& h = c.h;
  Time& last = c.last;
  for (const FaultRecord& f : h.faults) last = std::max(last, f.end ? *f.end : f.start);
  for (const GrantRecord& g : h.grants) last = std::max(last, g.at);
  for (const BeliefRecord& b : h.beliefs) last = std::max(last, b.end ? *b.end : b.start);
  for (const auto& [v, e] : h.lease_ends) last = std::max(last, e.at);
  for (const ResourceOpRecord& op : h.resource_ops) last = std::max(last, op.at);
  for (const NoteRecord& n : h.notes) last = std::max(last, n.at);
  const Time zoom = last + last / 10 + Duration{1'000'000'000};
  c.L.end = std::min<Time>(c.s.duration, std::max<Time>(zoom, Duration{1'000'000'000}));
  c.height = c.L.top + static_cast<double>(c.lanes.size()) * c.L.lane_h + 50;
}

/// The <svg> opening, the patterns, the lanes and the time axis.
void draw_frame(Canvas& c) {
  const Layout& L = c.L;
  Svg& svg = c.svg;
  svg.raw(
      fmt::format(
          R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" role="img" aria-label="timeline of {}">)",
          L.left + L.width + 30, c.height, esc(c.s.name)) +
      "\n");
  svg.raw(R"SVG(<defs>
<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#E69F00" fill-opacity="0.25"/><line x1="0" y1="0" x2="0" y2="6" stroke="#E69F00" stroke-width="3"/></pattern>
<pattern id="pausehatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="6" height="6" fill="#bbbbbb" fill-opacity="0.35"/><line x1="0" y1="0" x2="0" y2="6" stroke="#555" stroke-width="1.5"/></pattern>
<pattern id="unsafe" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="#D55E00" fill-opacity="0.35"/><path d="M0 8 L8 0" stroke="#D55E00" stroke-width="2"/></pattern>
<pattern id="parthatch" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="#CC79A7" fill-opacity="0.15"/><circle cx="4" cy="4" r="1.3" fill="#CC79A7"/></pattern>
</defs>
)SVG");
  for (std::size_t i = 0; i < c.lanes.size(); ++i) {
    const double y = L.top + static_cast<double>(i) * L.lane_h;
    svg.raw(fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"/>)", L.left, y, L.width,
                        L.lane_h, i % 2 == 0 ? "#f6f6f6" : "#ffffff") +
            "\n");
    svg.text(8, y + L.lane_h / 2 + 4, c.lanes[i], R"(class="lane")");
  }
  const Duration step = tick_step(L.end);
  for (Duration t{0}; t <= L.end; t += step) {
    const double x = L.x(t);
    svg.raw(fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/>)", x, L.top, x,
                        c.height - 40) +
            "\n");
    svg.text(x - 10, c.height - 26, sim::format_duration(t), R"(class="axis")");
  }
  svg.text(L.left, c.height - 8,
           L.end < c.s.duration ? fmt::format("true time → (the run went on to {}; nothing was recorded after {})",
                                              sim::format_duration(c.s.duration), format_time(c.last))
                                : std::string("true time →"),
           R"(class="axis")");
}

/// A partition shades every lane its detail names.
void draw_partition(Canvas& c, const FaultRecord& f, Time end, const std::string& title) {
  const Layout& L = c.L;
  std::set<std::string> nodes;
  const std::string& d = f.detail;
  for (const std::string& n : c.lanes) {
    if (d.find("[" + n + "]") != std::string::npos || d.find("[" + n + ",") != std::string::npos ||
        d.find(" " + n + ",") != std::string::npos || d.find(" " + n + "]") != std::string::npos) {
      nodes.insert(n);
    }
  }
  for (const std::string& n : nodes) {
    c.svg.rect(L.x(f.start), c.lane_y(n) + 2, L.x(end) - L.x(f.start), L.lane_h - 4, "url(#parthatch)", "", title,
               "fault partition");
  }
  c.svg.mark("diamond", L.x(f.start), c.lane_y(nodes.empty() ? c.lanes.front() : *nodes.begin()) + 8, kPurple, title,
             "partition", "fault");
}

/// Faults: pauses, crashes, partitions, clock jumps, drift, slow, failovers.
void draw_faults(Canvas& c) {
  const Layout& L = c.L;
  Svg& svg = c.svg;
  for (const FaultRecord& f : c.h.faults) {
    const Time end = f.end ? *f.end : c.s.duration;
    const std::string kind = to_string(f.kind);
    const std::string title =
        fmt::format("{} {} at {}{}{}", kind, f.target, time_text(f.start),
                    f.detail.empty() ? "" : " (" + f.detail + ")", f.skipped ? " — skipped: " + f.skip_reason : "");
    const double y = c.lane_y(f.target);
    const double x = L.x(f.start);
    switch (f.kind) {
      case FaultKind::kPause:
        svg.rect(x, y + 2, L.x(end) - x, L.lane_h - 4, "url(#pausehatch)", "", title, "fault pause");
        svg.text(x + 3, y + L.lane_h - 5, "paused", R"(class="lbl")");
        break;
      case FaultKind::kCrash:
        svg.rect(x, y + 2, L.x(end) - x, L.lane_h - 4, "#000", R"(fill-opacity="0.18")", title, "fault crash");
        svg.mark("cross", x, y + L.lane_h / 2, "#000", title, "crash", "fault");
        break;
      case FaultKind::kPartition: draw_partition(c, f, end, title); break;
      case FaultKind::kClockJump:
      case FaultKind::kClockDrift:
        svg.mark("triangle", x, y + 10, kPurple, title,
                 f.kind == FaultKind::kClockJump ? "clock " + f.detail : "drift " + f.detail, "fault");
        break;
      case FaultKind::kSlow:
        svg.rect(x, y + L.lane_h - 8, L.x(end) - x, 5, kPurple, "", title, "fault slow");
        svg.text(x + 3, y + L.lane_h - 10, "slow", R"(class="lbl")");
        break;
      default: {
        // A lock service's own fault (target: the service, e.g. "redis")
        // is drawn on the service's first node.
        const auto service = c.dir.service_nodes();
        const std::string lane =
            c.lane_of.count(f.target) ? f.target : (service.empty() ? c.lanes.back() : service.front());
        svg.mark("diamond", x, c.lane_y(lane) + 10, kPurple, title, kind, "fault");
      }
    }
  }
}

/// Leases: as the client believes (solid) and as the service holds (hatched);
/// where belief outlives the service's lease: the unsafe window.
void draw_leases(Canvas& c) {
  const Layout& L = c.L;
  const History& h = c.h;
  std::map<std::string, Time> grant_at;
  for (const GrantRecord& g : h.grants) grant_at.emplace(g.value, g.at);
  for (const BeliefRecord& b : h.beliefs) {
    const double y = c.lane_y(b.client);
    const Time end = b.end ? *b.end : c.s.duration;
    const Time held_from = grant_at.count(b.value) ? grant_at[b.value] : b.start;
    auto le = h.lease_ends.find(b.value);
    const Time held_to = le != h.lease_ends.end() ? le->second.at : c.s.duration;
    c.svg.rect(
        L.x(held_from), y + 6, L.x(held_to) - L.x(held_from), 10, "url(#hatch)", R"(stroke="#E69F00")",
        fmt::format("lease held by the service for {} ({}): {} – {}{}", b.client, tok(b.token), time_text(held_from),
                    time_text(held_to), le != h.lease_ends.end() ? " (" + le->second.reason + ")" : ""),
        "held");
    c.svg.rect(L.x(b.start), y + 18, L.x(end) - L.x(b.start), 10, kBlue, "",
               fmt::format("{} believes it holds the lock ({}): {} – {} ({})", b.client, tok(b.token),
                           time_text(b.start), time_text(end), b.end ? b.end_reason : "end of run"),
               "belief");
    if (held_to < end) {
      c.svg.rect(L.x(held_to), y + 18, L.x(end) - L.x(held_to), 10, "url(#unsafe)", R"(stroke="#D55E00")",
                 fmt::format("UNSAFE: {} still believes it holds the lock ({}) after its lease ended at {}", b.client,
                             tok(b.token), time_text(held_to)),
                 "unsafe");
    }
  }
}

void draw_grants(Canvas& c) {
  const Layout& L = c.L;
  for (const GrantRecord& g : c.h.grants) {
    c.svg.mark("circle", L.x(g.at), c.lane_y(g.client) + 11, kOrange,
               fmt::format("{}: {} granted the lock to {} ({}, value {})", time_text(g.at), g.server, g.client,
                           tok(g.token), g.value),
               g.token ? fmt::format("T{}", *g.token) : "grant", "grant");
    if (c.lane_of.count(g.server)) {
      c.svg.mark("tick", L.x(g.at), c.lane_y(g.server) + L.lane_h / 2, kOrange,
                 fmt::format("{} granted the lock to {} ({})", g.server, g.client, tok(g.token)), "", "grant");
    }
  }
}

/// Renewals: failed ones one by one; successful ones as ticks, aggregated
/// when there are many.
void draw_renewals(Canvas& c) {
  const Layout& L = c.L;
  std::map<std::string, int> renew_ok;
  for (const RenewalRecord& rn : c.h.renewals) {
    if (!rn.success) {
      c.svg.mark("cross", L.x(rn.replied), c.lane_y(rn.client) + 34, kVermillion,
                 fmt::format("{}: {}'s renewal was refused (first sent {})", time_text(rn.replied), rn.client,
                             time_text(rn.first_sent)),
                 "renewal refused", "renewal");
    } else if (++renew_ok[rn.client] <= 200) {
      c.svg.mark("tick", L.x(rn.replied), c.lane_y(rn.client) + 38, kGreen,
                 fmt::format("{}: renewal ok after {}", time_text(rn.replied),
                             sim::format_duration(rn.replied - rn.first_sent)),
                 "", "renewal");
    }
  }
}

/// Reads and writes at the resource copies.
void draw_resource_ops(Canvas& c) {
  int nth_write = 0;
  for (const ResourceOpRecord& op : c.h.resource_ops) {
    const double y = c.lane_y(op.copy) + (op.write ? ((nth_write++ % 2) == 0 ? 14 : 24) : 38);
    const std::string title =
        fmt::format("{}: {} {} {}'s {} of {} ({}){}; marks after: last_written {}, last_seen {}", time_text(op.at),
                    op.copy, op.accepted ? "accepted" : "REJECTED", op.client, op.write ? "write" : "read", op.value,
                    tok(op.token), op.accepted ? "" : ": " + op.reason, op.last_written, op.last_seen);
    if (op.accepted) {
      c.svg.mark("circle", c.L.x(op.at), y, op.write ? kGreen : kSky, title,
                 op.write ? fmt::format("{} {}", op.client, op.value) : "", op.write ? "write ok" : "read ok");
    } else {
      c.svg.mark("cross", c.L.x(op.at), y, kVermillion, title, op.write ? fmt::format("{} rejected", op.client) : "",
                 "rejected");
    }
  }
}

/// Model notes (failovers, promotions, leader changes) and the first
/// counterexample of each broken property; closes the <svg>.
void draw_notes_and_counterexamples(Canvas& c) {
  for (const NoteRecord& n : c.h.notes) {
    if (!c.lane_of.count(n.node)) continue;
    c.svg.mark("diamond", c.L.x(n.at), c.lane_y(n.node) + c.L.lane_h - 10, kSky,
               fmt::format("{}: {} {}", time_text(n.at), n.node, n.text), n.kind, "note");
  }
  int row = 0;
  for (const Verdict& v : c.r.verdicts) {
    if (v.status != Status::kViolated || !v.at) continue;
    const double x = c.L.x(*v.at);
    c.svg.raw(fmt::format(
        R"(<g class="counterexample"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#D55E00" stroke-width="2" stroke-dasharray="6 3"/>)",
        x, c.L.top - 4, x, c.height - 40));
    c.svg.raw(fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="cx">✗ {}</text><title>{}</title></g>)", x + 3,
                          12.0 + 12.0 * row++, to_string(v.property), esc(v.summary)) +
              "\n");
  }
  c.svg.raw("</svg>\n");
}

/// The verdict table rows and the "How … broke" stories.
std::string html_verdicts(const RunResult& r) {
  std::string verdict_rows;
  for (const Verdict& v : r.verdicts) {
    verdict_rows += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td><b>{}</b></td><td>{}</td></tr>\n",
                                v.status == Status::kViolated ? "bad" : "", to_string(v.property),
                                v.expected ? to_string(*v.expected) : "-", to_string(v.status), esc(v.summary));
  }
  std::string stories;
  for (const Verdict& v : r.verdicts) {
    if (v.status != Status::kViolated) continue;
    stories += fmt::format("<h3>How <code>{}</code> broke</h3><ol>", to_string(v.property));
    for (const std::string& line : v.story) {
      const auto dot = line.find(". ");
      stories += "<li>" + esc(dot == std::string::npos ? line : line.substr(dot + 2)) + "</li>";
    }
    stories += "</ol>\n";
  }
  return "<table><tr><th>property</th><th>expected</th><th>got</th><th>summary</th></tr>\n" + verdict_rows +
         "</table>\n" + stories;
}

/// <head> with the style sheet, the title, the run line and the legend.
std::string html_head(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  html += "<title>fencesim timeline: " + esc(s.name) + "</title>\n";
  html += R"CSS(<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:16px;color:#222}
h1{font-size:20px;margin:0 0 4px} .desc{max-width:1100px;color:#444}
svg text{font-size:11px} svg .lane{font-size:12px;font-weight:600} svg .axis{fill:#555}
svg .lbl{fill:#222} svg .cx{fill:#D55E00;font-weight:700;font-size:12px}
.legend{display:flex;flex-wrap:wrap;gap:14px;margin:8px 0;font-size:13px}
.legend span{display:inline-flex;align-items:center;gap:5px}
.sw{display:inline-block;width:26px;height:10px;border:1px solid #999}
table{border-collapse:collapse;margin:8px 0;font-size:13px} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
tr.bad td{background:#fbe3d6} #detail{min-height:1.4em;padding:6px;background:#f0f4f8;border-left:4px solid #0072B2;max-width:1240px;font-size:13px}
.scroll{overflow-x:auto}
</style></head><body>
)CSS";
  html += "<h1>" + esc(s.name) + "</h1>\n";
  html += fmt::format("<p>seed {} · {} simulated · reproduce: <code>{}</code></p>\n", r.seed,
                      sim::format_duration(s.duration), esc(reproduce_command(s, r, m)));
  html += fmt::format(R"HTML(<div class="legend">
<span><i class="sw" style="background:{}"></i>client believes it holds the lock</span>
<span><svg width="26" height="10"><rect width="26" height="10" fill="url(#hatch)" stroke="#E69F00"/></svg>lease held at the service</span>
<span><svg width="26" height="10"><rect width="26" height="10" fill="url(#unsafe)" stroke="#D55E00"/></svg>UNSAFE: believed after the lease ended</span>
<span><svg width="26" height="10"><rect width="26" height="10" fill="url(#pausehatch)"/></svg>paused</span>
<span><svg width="26" height="10"><rect width="26" height="10" fill="url(#parthatch)"/></svg>partitioned</span>
<span>● orange T<i>n</i>: grant with token</span><span>● green: write accepted</span><span>● light blue: read accepted</span>
<span>✗ vermillion: rejected / renewal refused</span><span>▲ clock fault</span><span>◆ fault or failover / leader change</span>
<span style="color:#D55E00">┆ first counterexample of a broken property</span>
</div>
)HTML",
                      kBlue);
  return html;
}

}  // namespace

std::string render_timeline_html(const Scenario& s, const RunResult& r, const ReportMeta& m) {
  Canvas c(s, r);
  zoom_axis(c);
  draw_frame(c);
  draw_faults(c);
  draw_leases(c);
  draw_grants(c);
  draw_renewals(c);
  draw_resource_ops(c);
  draw_notes_and_counterexamples(c);

  const History& h = r.history;
  std::string html = html_head(s, r, m);
  html += "<p id=\"detail\">Hover over a mark for details; click to pin them here.</p>\n";
  html += "<div class=\"scroll\">\n" + c.svg.str() + "</div>\n";
  if (!s.description.empty()) html += "<p class=\"desc\">" + esc(s.description) + "</p>\n";
  html += html_verdicts(r);
  html += fmt::format(
      "<p style=\"color:#777;font-size:12px\">fencesim {} · {} grants · {} resource operations · {} faults</p>\n",
      version(), h.grants.size(), h.resource_ops.size(), h.faults.size());
  html += R"JS(<script>
document.querySelectorAll('svg g, svg rect').forEach(function(el){
  var t = el.querySelector(':scope > title'); if(!t) return;
  el.style.cursor='pointer';
  el.addEventListener('click', function(ev){ document.getElementById('detail').textContent = t.textContent; ev.stopPropagation(); });
});
</script>
</body></html>
)JS";
  (void)kGrey;
  return html;
}

std::string render_terminal_timeline(const Scenario& s, const RunResult& r, bool color, std::size_t max_lines) {
  (void)s;
  const History& h = r.history;
  struct Line {
    Time at;
    int order;
    std::string node, what, detail;
    const char* col;
  };
  std::vector<Line> lines;
  int order = 0;
  const char* kRed = "\x1b[31m";
  const char* kGreenC = "\x1b[32m";
  const char* kYellow = "\x1b[33m";
  const char* kMagenta = "\x1b[35m";
  const char* kCyan = "\x1b[36m";
  // Overlapping pauses of one node merge (the engine resumes it at the
  // latest end): a pause's end is a resume only if no other pause of the
  // node that had begun by then lasts longer.
  // (Two pauses ending at the same instant: the later-listed one resumes.)
  auto resumes_at_end = [&h](std::size_t i) {
    const FaultRecord& p = h.faults[i];
    for (std::size_t j = 0; j < h.faults.size(); ++j) {
      const FaultRecord& o = h.faults[j];
      if (j == i || o.skipped || o.kind != FaultKind::kPause || o.target != p.target || !o.end) continue;
      if (o.start <= *p.end && (*o.end > *p.end || (*o.end == *p.end && j > i))) return false;
    }
    return true;
  };
  for (std::size_t i = 0; i < h.faults.size(); ++i) {
    const FaultRecord& f = h.faults[i];
    lines.push_back(
        {f.start, order++, f.target, to_string(f.kind), f.skipped ? "skipped: " + f.skip_reason : f.detail, kMagenta});
    if (!f.skipped && f.end && *f.end > f.start && f.kind == FaultKind::kPause && resumes_at_end(i)) {
      lines.push_back({*f.end, order++, f.target, "resumes", "", kMagenta});
    }
  }
  for (const GrantRecord& g : h.grants) {
    lines.push_back({g.at, order++, g.server, "grant", g.client + " " + tok(g.token), kCyan});
  }
  for (const auto& [value, e] : h.lease_ends) {
    std::string who;
    for (const GrantRecord& g : h.grants) {
      if (g.value == value) who = g.client;
    }
    lines.push_back(
        {e.at, order++, "service", "lease end", (who.empty() ? value : who + "'s lease") + ": " + e.reason, kYellow});
  }
  for (const BeliefRecord& b : h.beliefs) {
    if (b.end && b.end_reason != "release") {
      lines.push_back({*b.end, order++, b.client, "belief ends", b.end_reason, kYellow});
    }
  }
  for (const ResourceOpRecord& op : h.resource_ops) {
    if (!op.write && op.accepted) continue;
    lines.push_back(
        {op.at, order++, op.copy, fmt::format("{} {}", op.write ? "write" : "read", op.accepted ? "ok" : "REJECTED"),
         fmt::format("{} {} {}{}", op.client, op.value, tok(op.token), op.accepted ? "" : " (" + op.reason + ")"),
         op.accepted ? kGreenC : kRed});
  }
  for (const NoteRecord& n : h.notes) lines.push_back({n.at, order++, n.node, n.kind, n.text, kCyan});
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; });
  std::string o = "\n  timeline (true time)\n";
  std::size_t shown = 0;
  for (const Line& l : lines) {
    if (shown == max_lines) {
      o += fmt::format("    … {} more events: see timeline.html and trace.jsonl\n", lines.size() - shown);
      break;
    }
    const std::string what = color ? std::string(l.col) + l.what + "\x1b[0m" : l.what;
    o += fmt::format("  {:>12}  {:<12} {:<{}} {}\n", format_time(l.at), l.node, what, color ? 25 : 16, l.detail);
    ++shown;
  }
  return o;
}

}  // namespace fencesim
