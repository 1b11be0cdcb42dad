#include "tools/letitcrash/explore_page.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "reports/escape.hpp"

namespace lic::tools {

namespace {

using Json = nlohmann::json;
using reports::xml_escape;

std::optional<double> optional_number(const Json& j) { return j.is_number() ? std::optional<double>(j.get<double>()) : std::nullopt; }

/// The lines' colours, one a shard in a merge's charts (the shards table shows each).
constexpr const char* kColours[] = {"#1f6fb4", "#8a3ab9", "#d9730d", "#2c8a3c", "#b4262a", "#5a5a5a", "#0f8b8d", "#a0522d"};

/// One line of a chart: (run, value) points.
struct Series {
  std::string label;  ///< empty for a lone line
  std::vector<std::pair<double, double>> points;
};

/// Step lines over runs as SVG paths: x over [1, runs], y over [lo, hi]; one colour a line.
std::string chart(const std::string& id, const std::string& title, const std::vector<Series>& lines, double runs, double lo, double hi,
                  const std::string& ylabel) {
  constexpr double kW = 560, kH = 140, kL = 56, kB = 24, kT = 10;
  const auto x = [&](double r) { return kL + (runs <= 1 ? 0 : (r - 1) / (runs - 1)) * (kW - kL - 10); };
  const auto y = [&](double v) { return kT + (hi <= lo ? 0.5 : (hi - v) / (hi - lo)) * (kH - kT - kB); };
  std::string svg = fmt::format(
      "<svg id=\"{}\" class=\"chart\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">"
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>",
      id, kW, kH, kW, kH, xml_escape(title), kL, kT, kW - kL - 10, kH - kT - kB);
  if (lo < 0 && hi > 0)
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#c00\" stroke-dasharray=\"4 3\"><title>0: the check fails "
                       "below this line</title></line>",
                       kL, kW - 10, y(0), y(0));
  for (std::size_t l = 0; l < lines.size(); ++l) {
    const Series& line = lines[l];
    const std::string colour = kColours[l % std::size(kColours)];
    std::string d;
    for (std::size_t i = 0; i < line.points.size(); ++i) {
      if (i == 0) d += fmt::format("M{:.1f},{:.1f}", x(line.points[i].first), y(line.points[i].second));
      else d += fmt::format(" H{:.1f} V{:.1f}", x(line.points[i].first), y(line.points[i].second));
    }
    if (line.points.empty()) continue;
    d += fmt::format(" H{:.1f}", x(runs));
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\">{}</path>", d, colour,
                       line.label.empty() ? "" : "<title>" + xml_escape(line.label) + "</title>");
    for (const auto& [r, v] : line.points)
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>run {:.0f}: {:.4g}{}</title></circle>", x(r), y(v),
                         colour, r, v, line.label.empty() ? "" : " (" + xml_escape(line.label) + ")");
  }
  svg += fmt::format("<text x=\"4\" y=\"{}\" font-size=\"11\">{:.3g}</text><text x=\"4\" y=\"{}\" font-size=\"11\">{:.3g}</text>", kT + 10,
                     hi, kH - kB, lo);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">run 1</text><text x=\"{}\" y=\"{}\" font-size=\"11\" "
                     "text-anchor=\"end\">run {:.0f}</text>",
                     kL, kH - 6, kW - 10, kH - 6, runs);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text></svg>", (kW + kL) / 2, kH - 6,
                     xml_escape(ylabel));
  return svg;
}

/// [[run, value], ...] as points.
std::vector<std::pair<double, double>> points_of(const Json& j) {
  std::vector<std::pair<double, double>> pts;
  if (!j.is_array()) return pts;
  for (const Json& p : j)
    if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number()) pts.emplace_back(p[0].get<double>(), p[1].get<double>());
  return pts;
}

/// The runs drawn: one a shard in a merge, else the explore's own.
struct View {
  std::string label;
  double runs = 0;
  const Json* series = nullptr;
};

std::vector<View> views_of(const Json& state) {
  std::vector<View> views;
  if (state.contains("shards") && state["shards"].is_array()) {
    for (const Json& s : state["shards"])
      views.push_back({"shard " + s.value("shard", std::string("?")), s.value("runs", 0.0), s.contains("series") ? &s["series"] : nullptr});
  } else {
    views.push_back({"", state.value("runs", 0.0), state.contains("series") ? &state["series"] : nullptr});
  }
  return views;
}

std::string counts(const Json& state) {
  const std::size_t runs = state.value("runs", std::size_t{0});
  std::string h = fmt::format("<p id=\"counts\" data-runs=\"{}\" data-corpus=\"{}\" data-coverage=\"{}\" data-failures=\"{}\">", runs,
                              state.value("corpus", std::size_t{0}), state.value("coverage", std::size_t{0}),
                              state.contains("failures") ? state["failures"].size() : 0);
  if (state.contains("shards")) {
    const Json& sw = state["sweep"];
    h += fmt::format("A guided sweep of seeds {}, {} of {} shards merged{}: ", xml_escape(sw.value("seeds", std::string("?"))),
                     state["shards"].size(), sw.value("shards", std::size_t{0}),
                     sw.contains("missing") && !sw["missing"].empty() ? fmt::format(" (missing: {})", xml_escape(sw["missing"].dump())) : "");
  } else if (state.contains("sweep")) {
    h += fmt::format("A guided sweep of seeds {}, shard {} (search seed {}): ", xml_escape(state["sweep"].value("seeds", std::string("?"))),
                     xml_escape(state["sweep"].value("shard", std::string("?"))), state.value("seed", std::uint64_t{0}));
  } else {
    h += fmt::format("seed {}, ", state.value("seed", std::uint64_t{0}));
  }
  h += fmt::format("{} run{}, corpus {}, coverage {} slots, {:.1f} s of CPU. ", runs, runs == 1 ? "" : "s", state.value("corpus", std::size_t{0}),
                   state.value("coverage", std::size_t{0}), state.value("cpu_s", 0.0));
  const Json& first = state.contains("runs_to_first_failure") ? state["runs_to_first_failure"] : Json();
  if (first.is_number()) h += fmt::format("<span class=\"fail\">First failure at run {}{}.</span>", first.get<std::size_t>(),
                                          state.contains("shards") ? " (of its shard)" : "");
  else h += "<span class=\"ok\">No failure within the budget.</span>";
  if (state.value("nothing_to_mutate", false))
    h += " Nothing to mutate: the file has no fault, and its seed changes nothing (the first runs had the same trace).";
  return h + "</p>";
}

std::string failures(const Json& state) {
  const Json& fs = state.contains("failures") ? state["failures"] : Json::array();
  if (fs.empty()) return "<h2>Failures</h2><p>None.</p>";
  std::string h = "<h2>Failures</h2><ol id=\"failures\">";
  for (const Json& f : fs) {
    const std::string where = f.contains("shard") ? fmt::format("shard {}, ", f.value("shard", std::string("?"))) : "";
    const std::string how = f.value("plain_seed", false) ? fmt::format("seed {}", f.value("seed", std::uint64_t{0})) : f.value("how", std::string());
    h += fmt::format("<li><span class=\"fail\">{}</span> at {}run {} ({}): {}", xml_escape(f.value("identity", f.value("check", std::string()))),
                     xml_escape(where), f.value("run", std::size_t{0}), xml_escape(how), xml_escape(f.value("detail", std::string())));
    if (f.contains("reproducer") && f["reproducer"].is_string()) {
      const std::string path = f["reproducer"].get<std::string>();
      const std::string rel = std::filesystem::path(path).filename().string();
      const bool verified = f.value("reproducer_verified", false);
      const std::string again = f.value("reproducer_fails_as", std::string());
      h += fmt::format("<br>reproducer: <a class=\"reproducer\" href=\"{}\">{}</a> — <code class=\"reproduce\">letitcrash run {}</code> {}",
                       xml_escape(rel), xml_escape(rel), xml_escape(path),
                       verified ? "(run again: fails the same way)"
                                : "<span class=\"fail\">(run again: " + xml_escape(again.empty() ? "passes" : again) + ")</span>");
    }
    h += "</li>";
  }
  return h + "</ol>";
}

std::string charts(const Json& state) {
  const std::vector<View> views = views_of(state);
  double runs = 1;
  for (const View& v : views) runs = std::max(runs, v.runs);
  std::vector<Series> cov;
  for (const View& v : views) cov.push_back({v.label, v.series != nullptr ? points_of(v.series->value("coverage", Json())) : std::vector<std::pair<double, double>>{}});
  double top = 1;
  for (const Series& s : cov)
    for (const auto& p : s.points) top = std::max(top, p.second);
  std::string h = "<h2>Behaviour coverage over runs</h2>";
  if (views.size() > 1)
    h += fmt::format("<p>One line a shard, each over its own runs; together they reached {} slots.</p>", state.value("coverage", std::size_t{0}));
  h += chart("coverage", "coverage over runs", cov, runs, 0, top, "slots reached");
  h += "<h2>Each check's best margin over runs</h2><p>A margin is the signed distance to failing: above 0 the check holds with that "
       "much room, at or below 0 it fails (docs/explore.md).</p><div id=\"margins\">";
  const Json& checks = state.contains("checks") ? state["checks"] : Json::array();
  for (std::size_t c = 0; c < checks.size(); ++c) {
    const std::string name = checks[c].value("name", std::string());
    const bool guided = checks[c].value("guided", false);
    h += fmt::format("<h3 class=\"check\" data-check=\"{}\">{}: {}</h3>", xml_escape(name), xml_escape(name),
                     xml_escape(guided ? "best " + margin_text(optional_number(checks[c].value("best_margin", Json())))
                                       : "coverage only (the check reports no margin)"));
    if (!guided) continue;
    std::vector<Series> lines;
    double lo = 0, hi = 0;
    for (const View& v : views) {
      Series s{v.label, {}};
      if (v.series != nullptr && v.series->contains("margins") && (*v.series)["margins"].is_array() && c < (*v.series)["margins"].size())
        s.points = points_of((*v.series)["margins"][c]);
      for (const auto& p : s.points) lo = std::min(lo, p.second), hi = std::max(hi, p.second);
      lines.push_back(std::move(s));
    }
    h += chart(fmt::format("margin-{}", c), name, lines, runs, lo, std::max(hi, 0.01), "best margin");
  }
  return h + "</div>";
}

std::string corpus(const Json& state) {
  const bool merged = state.contains("shards");
  std::string h = "<h2>Corpus</h2><table id=\"corpus\"><tr>";
  if (merged) h += "<th>shard</th>";
  h += "<th>found at run</th><th>how</th><th>faults</th><th>seed</th><th>least margin</th><th>slots</th><th>mutated</th><th>file</th></tr>";
  const Json& entries = state.contains("corpus_entries") ? state["corpus_entries"] : Json::array();
  for (const Json& e : entries) {
    h += "<tr class=\"entry\">";
    if (merged) h += fmt::format("<td>{}</td>", xml_escape(e.value("shard", std::string())));
    const std::string file = e.value("file", std::string());
    h += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><a href=\"{}\">{}</a></td></tr>",
                     e.value("run", std::size_t{0}), xml_escape(e.value("how", std::string())), e.value("faults", std::size_t{0}),
                     e.value("seed", std::uint64_t{0}), xml_escape(margin_text(optional_number(e.value("least_margin", Json())))),
                     e.value("slots", std::size_t{0}), e.value("mutated", std::size_t{0}), xml_escape(file), xml_escape(file));
  }
  return h + "</table>";
}

}  // namespace

std::string margin_text(const std::optional<double>& m) {
  if (!m) return "coverage only";
  return fmt::format("{:+.3f}", *m);
}

std::string explore_page(const Json& state, const std::string& title) {
  std::string h = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>explore: " + xml_escape(title) +
                  "</title><style>body{font-family:sans-serif;margin:24px;max-width:1100px}table{border-collapse:collapse}"
                  "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left;vertical-align:top}"
                  ".fail{color:#b00;font-weight:bold}.ok{color:#070;font-weight:bold}code{background:#f2f2f2;padding:2px 4px}"
                  ".chart{display:block;margin:6px 0 14px}</style></head><body>";
  h += fmt::format("<h1>{}: {}</h1>", state.contains("sweep") ? "sweep --guided" : "explore", xml_escape(title));
  h += counts(state);
  h += failures(state);
  if (state.contains("shards")) {
    h += "<h2>Shards</h2><table id=\"shards\"><tr><th>shard</th><th>runs</th><th>plain seeds</th><th>corpus</th><th>coverage</th>"
         "<th>first failure at run</th><th>failures</th><th>CPU s</th></tr>";
    for (std::size_t i = 0; i < state["shards"].size(); ++i) {
      const Json& s = state["shards"][i];
      const Json& first = s.value("runs_to_first_failure", Json());
      h += fmt::format("<tr class=\"shard\"><td><span style=\"color:{}\">&#9632;</span> {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td></tr>",
                       kColours[i % std::size(kColours)], xml_escape(s.value("shard", std::string())), s.value("runs", std::size_t{0}),
                       s.value("plain_runs", std::size_t{0}),
                       s.value("corpus", std::size_t{0}), s.value("coverage", std::size_t{0}),
                       first.is_number() ? std::to_string(first.get<std::size_t>()) : "none", s.value("failures", std::size_t{0}),
                       s.value("cpu_s", 0.0));
    }
    h += "</table>";
  }
  h += charts(state);
  h += corpus(state);
  return h + "</body></html>\n";
}

}  // namespace lic::tools
