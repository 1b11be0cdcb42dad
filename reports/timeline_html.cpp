// The interactive timeline of index.html: the run's view (run_view.hpp) as JSON in a
// <script type="application/json">, drawn by reports/timeline.js (embedded at build time), with
// the zoom controls, the legend and the tooltip. Nothing is fetched: the page works offline.
// What the JSON holds is reduced to the run's length / kResolution: marks of one kind closer
// than that share one entry (with their count), up intervals closer than that are joined, and a
// backlog keeps its longest length per slot, so a long run's page stays small and a zoom of up
// to kResolution / 1000 (a 1200-pixel plot) still shows every distinct mark.

#include "reports/timeline_html.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/escape.hpp"
#include "reports/run_view.hpp"
#include "reports/timeline_js.hpp"

namespace lic::reports {
namespace {

using Json = nlohmann::json;

constexpr std::int64_t kResolution = 100'000;

/// [[t, kind, tip, count, last], ...]: marks of one kind within `res` of the kind's last entry
/// share it.
Json marks_json(const std::vector<Mark>& marks, std::int64_t res, const char* prefix) {
  Json out = Json::array();
  std::array<std::optional<std::size_t>, kMarkKinds> last{};
  for (const Mark& m : marks) {
    auto& l = last[static_cast<std::size_t>(m.kind)];
    if (l && m.at.ns - out[*l][0].get<std::int64_t>() < res) {
      Json& e = out[*l];
      e[3] = e[3].get<std::uint64_t>() + 1;
      e[4] = m.at.ns;
      continue;
    }
    l = out.size();
    out.push_back({m.at.ns, to_string(m.kind), fmt::format("{}{} at {}: {}", prefix, to_string(m.kind), format_time(m.at), m.detail),
                   1, m.at.ns});
  }
  return out;
}

Json intervals_json(const properties::Intervals& iv, std::int64_t res) {
  Json out = Json::array();
  for (const properties::Interval& i : iv) {
    if (!out.empty() && i.from.ns - out.back()[1].get<std::int64_t>() < res) {
      out.back()[1] = i.to.ns;
      continue;
    }
    out.push_back({i.from.ns, i.to.ns});
  }
  return out;
}

Json instants_json(const std::vector<Time>& at, std::int64_t res) {
  Json out = Json::array();
  std::int64_t slot = -1;
  for (Time t : at) {
    if (t.ns / res == slot) continue;
    slot = t.ns / res;
    out.push_back(t.ns);
  }
  return out;
}

/// A backlog's steps, per slot of `res` its longest length (at the slot's first step) and then
/// its length at the slot's end, so a burst shows and so does the drain after it.
Json steps_json(const Backlog& b, std::int64_t res) {
  Json out = Json::array();
  std::int64_t slot = -1;
  std::uint64_t peak = 0, last = 0;
  Time first_at{}, last_at{};
  const auto flush = [&] {
    if (slot < 0) return;
    out.push_back({first_at.ns, peak});
    if (last != peak) out.push_back({last_at.ns, last});
  };
  for (const auto& [t, len] : b.steps) {
    if (t.ns / res != slot) {
      flush();
      slot = t.ns / res;
      peak = len;
      first_at = t;
    }
    peak = std::max(peak, len);
    last = len;
    last_at = t;
  }
  flush();
  return out;
}

/// A lifecycle service's states: per slot of `res` the first change and the state the slot ends in.
Json states_json(const std::vector<std::pair<Time, std::string>>& states, std::int64_t res) {
  Json out = Json::array();
  std::int64_t slot = -1;
  for (const auto& [t, state] : states) {
    if (t.ns / res == slot && out.size() >= 2 && out[out.size() - 2][0].get<std::int64_t>() / res == slot) {
      out.back() = {t.ns, state};  // a third change in the slot: keep its first and its last
      continue;
    }
    slot = t.ns / res;
    out.push_back({t.ns, state});
  }
  return out;
}

Json lanes_json(const RunView& v, std::int64_t res) {
  Json out = Json::array();
  for (const Lane& l : v.lanes) {
    std::string tip = l.path;
    if (l.shape == nullptr) tip += " (dynamic)";
    if (l.shape != nullptr && !l.shape->kind.empty()) tip += ", " + l.shape->kind;
    if (l.shape != nullptr && !l.shape->behaviour.empty()) tip += " " + l.shape->behaviour;
    if (!l.node.empty()) tip += " on " + l.node;
    Json lane = {{"p", l.path}, {"d", l.depth}, {"n", l.node}, {"tip", tip}, {"up", intervals_json(l.up, res)},
                 {"m", marks_json(l.marks, res, "")}};
    if (!l.states.empty()) lane["st"] = states_json(l.states, res);
    out.push_back(std::move(lane));
  }
  return out;
}

Json view_json(const RunReport& r, const RunView& v) {
  const std::int64_t res = std::max<std::int64_t>(1, v.end.ns / kResolution);
  Json j;
  j["end"] = v.end.ns;
  j["lanes"] = lanes_json(v, res);
  j["backlogs"] = Json::array();
  for (const Backlog& b : v.backlogs)
    j["backlogs"].push_back({{"name", b.name}, {"node", b.node}, {"cap", b.cap}, {"max", b.max}, {"s", steps_json(b, res)}});
  j["leaders"] = Json::array();
  for (const LeaderLane& l : v.leaders)
    j["leaders"].push_back({{"node", l.node}, {"b", intervals_json(l.believed, res)}, {"w", instants_json(l.writes, res)},
                            {"u", instants_json(l.unsafe, res)}});
  j["holders"] = Json::array();
  for (const HolderSpan& h : v.holders) {
    Json& hs = j["holders"];
    if (!hs.empty() && hs.back()[2] == h.node && h.from.ns - hs.back()[1].get<std::int64_t>() < res) {
      hs.back()[1] = h.to.ns;  // the same holder again within a slot: one span
      continue;
    }
    if (h.to.ns - h.from.ns < res && !hs.empty() && h.from.ns - hs.back()[1].get<std::int64_t>() < res) continue;  // too short to see
    hs.push_back({h.from.ns, h.to.ns, h.node});
  }
  j["bands"] = Json::array();
  std::map<std::pair<int, std::string>, std::size_t> last_band;  // (kind, label) -> its latest entry
  for (const Band& b : v.bands) {
    const auto key = std::pair{static_cast<int>(b.kind), b.label};
    const auto it = last_band.find(key);
    if (it != last_band.end() && b.from.ns - j["bands"][it->second][1].get<std::int64_t>() < res) {
      Json& e = j["bands"][it->second];  // the same band again within a slot: one band
      e[1] = std::max(e[1].get<std::int64_t>(), b.to.ns);
      continue;
    }
    last_band[key] = j["bands"].size();
    j["bands"].push_back({b.from.ns, b.to.ns, to_string(b.kind), b.label});
  }
  j["world"] = marks_json(v.world_marks, res, "world: ");
  j["phases"] = Json::array();
  if (v.quiet_from) {
    j["phases"].push_back({0, v.quiet_from->ns, "chaos"});
    j["phases"].push_back({v.quiet_from->ns, v.end.ns, "quiet"});
  } else if (!r.faults.empty()) {
    j["phases"].push_back({0, v.end.ns, "chaos"});
  }
  return j;
}

const char* const kStyle = R"(<style>
#timeline{position:relative;overflow-x:auto;border:1px solid #e0e0e0;user-select:none}
#timeline svg{display:block;cursor:grab}
#timeline text{font-family:Helvetica,Arial,sans-serif;fill:#212121}
#timeline .tick,#timeline .bandlabel,#timeline .phaselabel,#timeline .nodetag{font-size:10px;fill:#424242}
#timeline .stripe{fill:#f4f6f8}#timeline .grid{stroke:#dcdcdc;stroke-width:1}.nodesep{stroke:#90a4ae;stroke-width:1}
.up{fill:#43a047}.down{fill:#ef9a9a}.crash{fill:#d32f2f;stroke:#7f0000;stroke-width:.5}.kill{fill:none;stroke:#212121;stroke-width:1.6}
.restart{fill:#1e88e5;stroke:#0d47a1;stroke-width:.5}.escalation{fill:#8e24aa;stroke:#4a148c;stroke-width:.8}
.fault{fill:#fb8c00;stroke:#e65100;stroke-width:.5}.operation{fill:none;stroke:#c2185b;stroke-width:2}.mark{cursor:help}
.band,.shade{opacity:.18}.shade{pointer-events:none}.band{opacity:.55}
.partition{fill:#7e57c2}.pause{fill:#fdd835}.node_down{fill:#616161}.draining{fill:#ff7043}.history{fill:#c2185b}
.loss{fill:#e53935}.duplicate{fill:#1e88e5}.reorder{fill:#8d6e63}.clog{fill:#6d4c41}
.phase.chaos{fill:#ffcdd2}.phase.quiet{fill:#c8e6c9}
.backlog{fill:#26a69a;stroke:#00695c;stroke-width:.6;opacity:.85}.lane-label.backlog{font-style:italic}.lane-label.role{font-weight:bold}
.believed{fill:#ffb300}.write{stroke:#37474f;stroke-width:1}.unsafe{stroke:#d50000;stroke-width:2}.holder{stroke:#fff;stroke-width:.5}
.state{opacity:.9}.st-inactive,.st-stopped{fill:#bdbdbd}.st-waiting{fill:#fff176}.st-starting{fill:#64b5f6}.st-running{fill:#a5d6a7}
.st-failed{fill:#e53935}.st-backoff{fill:#ffb74d}.st-stopping{fill:#a1887f}
.cursor{stroke:#d50000;stroke-width:2;stroke-dasharray:5 3}
#tip{position:absolute;display:none;pointer-events:none;background:#263238;color:#fff;font-size:12px;padding:4px 8px;border-radius:4px;max-width:520px;z-index:10;white-space:pre-wrap}
.tl-controls{margin:6px 0;display:flex;gap:8px;align-items:center;flex-wrap:wrap}.tl-controls button{font-size:13px;padding:2px 10px}
.legend{font-size:12px;color:#424242}.legend span{display:inline-block;margin-right:12px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
</style>
)";

/// The legend: what each colour and mark means (only the bands this run has).
std::string legend(const RunView& v) {
  std::string out = "<p class=\"legend\">";
  out += "<span><i class=\"sw\" style=\"background:#43a047\"></i>up</span>";
  out += "<span><i class=\"sw\" style=\"background:#ef9a9a\"></i>down after its first start</span>";
  for (const auto& [c, w] : {std::pair{"#d32f2f", "crash"}, std::pair{"#212121", "kill"}, std::pair{"#1e88e5", "restart"},
                             std::pair{"#8e24aa", "escalation (gave up)"}, std::pair{"#fb8c00", "fault injected"}})
    out += fmt::format("<span><i class=\"sw\" style=\"background:{}\"></i>{}</span>", c, w);
  if (std::any_of(v.lanes.begin(), v.lanes.end(), [](const Lane& l) {
        return std::any_of(l.marks.begin(), l.marks.end(), [](const Mark& m) { return m.kind == MarkKind::operation; });
      }))
    out += "<span><i class=\"sw\" style=\"background:#c2185b;width:2px\"></i>an operation concurrent with the one that fits nowhere</span>";
  static constexpr std::array<std::pair<BandKind, const char*>, kBandKinds> kColours{
      {{BandKind::partition, "#7e57c2"}, {BandKind::pause, "#fdd835"}, {BandKind::node_down, "#616161"},
       {BandKind::draining, "#ff7043"}, {BandKind::loss, "#e53935"}, {BandKind::duplicate, "#1e88e5"},
       {BandKind::reorder, "#8d6e63"}, {BandKind::clog, "#6d4c41"}, {BandKind::history, "#c2185b"}}};
  if (std::any_of(v.lanes.begin(), v.lanes.end(), [](const Lane& l) { return !l.states.empty(); }))
    out += "<span>a service's state, under its lane: <i class=\"sw\" style=\"background:#fff176\"></i>waiting "
           "<i class=\"sw\" style=\"background:#64b5f6\"></i>starting <i class=\"sw\" style=\"background:#a5d6a7\"></i>running "
           "<i class=\"sw\" style=\"background:#e53935\"></i>failed <i class=\"sw\" style=\"background:#ffb74d\"></i>backoff "
           "<i class=\"sw\" style=\"background:#bdbdbd\"></i>inactive or stopped</span>";
  for (const auto& [k, c] : kColours)
    if (std::any_of(v.bands.begin(), v.bands.end(), [k = k](const Band& b) { return b.kind == k; }))
      out += fmt::format("<span><i class=\"sw\" style=\"background:{};opacity:.6\"></i>{} (band)</span>", c, to_string(k));
  return out + "</p>\n";
}

/// No `<` inside the script element at all (`</script>`, `<!--` would end or change it): JSON's
/// `\u003c` says the same. A `<` in JSON is only ever inside a string.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (const char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

}  // namespace

std::string timeline_html(const RunReport& r) { return timeline_html(r, view_of(r)); }

std::string timeline_html(const RunReport& r, const RunView& v) {
  std::string out = kStyle;
  out += "<div class=\"tl-controls\"><button id=\"zoom-in\" type=\"button\" title=\"zoom in (or the mouse wheel over the plot)\">zoom in</button>"
         "<button id=\"zoom-out\" type=\"button\">zoom out</button><button id=\"zoom-reset\" type=\"button\">whole run</button>"
         "<span>showing <b id=\"tl-window\"></b></span><span class=\"legend\">drag to pan; hover a mark for its detail</span></div>\n";
  out += legend(v);
  out += fmt::format("<div id=\"timeline\" data-end-ns=\"{0}\" data-from-ns=\"0\" data-to-ns=\"{0}\"><svg id=\"timeline-svg\" width=\"1200\" height=\"100\"></svg></div>\n<div id=\"tip\"></div>\n",
                     v.end.ns);
  out += "<noscript><p><a href=\"timeline.svg\"><img src=\"timeline.svg\" alt=\"the timeline\"></a></p></noscript>\n";
  out += "<script type=\"application/json\" id=\"timeline-data\">" +
         script_safe(view_json(r, v).dump(-1, ' ', false, Json::error_handler_t::replace)) + "</script>\n";
  out += "<script>\n";
  out += kTimelineJs;
  out += "</script>\n";
  return out;
}

}  // namespace lic::reports
