// A sweep's index.html and junit.xml (sweep_page.hpp). The strip and the histograms are SVG
// drawn here, inline in the page: nothing is fetched, the page opens offline.

#include "reports/sweep_page.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/escape.hpp"
#include "reports/page_style.hpp"

namespace lic::reports {

namespace {

const char* const kSweepStyle = R"(<style>
svg{display:block;margin:8px 0}#strip rect.seed.pass{fill:#2e7d32}#strip rect.seed.fail{fill:#c62828}
svg.histogram rect.bar{fill:#1565c0}svg.histogram rect.bar:hover,#strip rect:hover{stroke:#212121;stroke-width:1}
svg text{font-family:Helvetica,Arial,sans-serif;font-size:11px;fill:#424242}
line.quantile{stroke:#ef6c00;stroke-dasharray:3 2}ol#failing li{margin:6px 0}ul.witnesses{margin:2px 0;color:#424242}
</style>
)";

std::string num(double v) { return fmt::format("{:.4g}", v); }

std::string kind(const SeedOutcomes& o, std::uint16_t code) {
  const std::size_t k = code - 2u;
  return k < o.failure_kinds.size() ? o.failure_kinds[k] : std::string("the checks are in the results file");
}

std::string seed_tip(const SeedOutcomes& o, std::uint64_t seed, std::uint16_t code) {
  return code == SeedOutcomes::kPassed ? fmt::format("seed {}: passed", seed)
                                       : fmt::format("seed {}: FAILED ({})", seed, kind(o, code));
}

}  // namespace

std::vector<StripCell> strip_cells(const SeedOutcomes& o) {
  const std::size_t positions = o.codes.size();
  const auto present = static_cast<std::size_t>(
      std::count_if(o.codes.begin(), o.codes.end(), [](std::uint16_t c) { return c != SeedOutcomes::kMissing; }));
  std::vector<StripCell> out;
  const auto add = [&](std::size_t begin, std::size_t end) {  // the positions [begin, end)
    StripCell c;
    std::uint16_t code = SeedOutcomes::kMissing;
    for (std::size_t at = begin; at < end; ++at) {
      if (o.codes[at] == SeedOutcomes::kMissing) continue;
      const std::uint64_t seed = o.first + at * o.stride;
      if (c.seeds++ == 0) c.first = seed;
      c.last = seed;
      code = o.codes[at];
      if (code != SeedOutcomes::kPassed) ++c.failed;
    }
    if (c.seeds == 0) return;
    c.tip = c.seeds == 1 ? seed_tip(o, c.first, code)
                         : fmt::format("seeds {}..{}: {} of {} failed", c.first, c.last, c.failed, c.seeds);
    out.push_back(std::move(c));
  };
  if (present <= kStripCells) {
    for (std::size_t i = 0; i < positions; ++i) add(i, i + 1);
  } else {
    for (std::size_t k = 0; k < kStripCells; ++k) add(k * positions / kStripCells, (k + 1) * positions / kStripCells);
  }
  return out;
}

std::vector<HistogramBar> histogram(const std::vector<double>& values) {
  std::vector<std::pair<double, std::uint64_t>> counted;
  counted.reserve(values.size());
  for (double x : values) counted.emplace_back(x, 1);
  return histogram_of_counts(counted);
}

std::vector<HistogramBar> histogram_of_counts(const std::vector<std::pair<double, std::uint64_t>>& values) {
  std::vector<std::pair<double, std::uint64_t>> v;
  std::uint64_t count = 0;
  for (const auto& [x, n] : values)
    if (std::isfinite(x) && n > 0) v.emplace_back(x, n), count += n;
  if (v.empty()) return {};
  const auto [lo_it, hi_it] = std::minmax_element(v.begin(), v.end());
  const double lo = lo_it->first, hi = hi_it->first;
  if (lo == hi) return {HistogramBar{lo, hi, count}};
  constexpr std::size_t kMaxBars = 40;
  const bool whole = std::all_of(v.begin(), v.end(), [](const auto& x) { return x.first == std::floor(x.first); });
  // Whole numbers over a short range (restart counts): a bar a value. Else about sqrt(n) bars.
  const bool per_value = whole && hi - lo < static_cast<double>(kMaxBars);
  const std::size_t bars = per_value ? static_cast<std::size_t>(hi - lo) + 1
                                     : std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(count)))), 2, kMaxBars);
  const double width = per_value ? 1.0 : (hi - lo) / static_cast<double>(bars);
  std::vector<HistogramBar> out(bars);
  for (std::size_t i = 0; i < bars; ++i) {
    out[i].lo = lo + width * static_cast<double>(i);
    out[i].hi = i + 1 == bars ? (per_value ? hi + 1 : hi) : lo + width * static_cast<double>(i + 1);
  }
  for (const auto& [x, n] : v) {
    const auto i = static_cast<std::size_t>(std::floor((x - lo) / width));
    out[std::min(i, bars - 1)].n += n;
  }
  return out;
}

namespace {

std::string strip_svg(const SeedOutcomes& o) {
  const std::vector<StripCell> cells = strip_cells(o);
  constexpr std::size_t kCols = 100, kSize = 10;
  const std::size_t cols = std::min(cells.size(), kCols), rows = (cells.size() + kCols - 1) / kCols;
  const bool per_seed = cells.empty() || std::all_of(cells.begin(), cells.end(), [](const StripCell& c) { return c.seeds == 1; });
  std::string out = fmt::format(
      "<svg id=\"strip\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"one square a {2}, in seed order: green passed, red failed\">\n",
      std::max<std::size_t>(cols * kSize, 1), std::max<std::size_t>(rows * kSize, 1), per_seed ? "seed" : "range of seeds");
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const StripCell& c = cells[i];
    const std::string at = fmt::format("x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"", i % kCols * kSize, i / kCols * kSize,
                                       kSize - 1, kSize - 1);
    const std::string tip = xml_escape(c.tip);
    if (per_seed) {
      out += fmt::format("<rect class=\"seed {}\" data-seed=\"{}\" data-tip=\"{}\" {}><title>{}</title></rect>\n",
                         c.failed ? "fail" : "pass", c.first, tip, at, tip);
      continue;
    }
    const double share = static_cast<double>(c.failed) / static_cast<double>(c.seeds);
    out += fmt::format(
        "<rect class=\"cell\" data-first=\"{}\" data-last=\"{}\" data-seeds=\"{}\" data-failed=\"{}\" data-tip=\"{}\" {} "
        "fill=\"{}\" fill-opacity=\"{:.2f}\"><title>{}</title></rect>\n",
        c.first, c.last, c.seeds, c.failed, tip, at, c.failed ? "#c62828" : "#2e7d32", c.failed ? 0.35 + 0.65 * share : 1.0, tip);
  }
  return out + "</svg>\n";
}

std::string histogram_svg(const SweepMetric& m) {
  const std::vector<HistogramBar> bars = histogram_of_counts(m.values);
  std::uint64_t count = 0, tallest = 0;
  for (const HistogramBar& b : bars) count += b.n, tallest = std::max(tallest, b.n);
  constexpr double kLeft = 40, kWidth = 420, kBase = 130, kHeight = 100;
  std::string out = fmt::format(
      "<svg class=\"histogram\" data-metric=\"{}\" data-count=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"500\" "
      "height=\"160\" viewBox=\"0 0 500 160\" role=\"img\" aria-label=\"histogram of {}\">\n",
      xml_escape(m.name), count, xml_escape(m.name));
  if (bars.empty()) return out + "<text x=\"40\" y=\"80\">no value in any run</text>\n</svg>\n";
  const double lo = bars.front().lo, hi = bars.back().hi;
  const auto x_of = [&](double v) { return hi == lo ? kLeft + kWidth / 2 : kLeft + (v - lo) / (hi - lo) * kWidth; };
  const double bar_w = kWidth / static_cast<double>(bars.size());
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const HistogramBar& b = bars[i];
    const double h = static_cast<double>(b.n) / static_cast<double>(tallest) * kHeight;
    const std::string tip = xml_escape(fmt::format("{}{}, {}{}: {} value{}", "[", num(b.lo), num(b.hi),
                                                   i + 1 == bars.size() ? "]" : ")", b.n, b.n == 1 ? "" : "s"));
    out += fmt::format("<rect class=\"bar\" data-n=\"{}\" data-tip=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\">"
                       "<title>{}</title></rect>\n",
                       b.n, tip, kLeft + bar_w * static_cast<double>(i), kBase - h, std::max(bar_w - 1, 1.0), h, tip);
  }
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#9e9e9e\"/>\n", kLeft, kBase, kLeft + kWidth);
  out += fmt::format("<text class=\"min\" x=\"{}\" y=\"{}\">{}</text>\n", kLeft, kBase + 14, num(lo));
  out += fmt::format("<text class=\"max\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft + kWidth, kBase + 14,
                     num(bars.back().hi));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} values, tallest bar {}</text>\n", kLeft + kWidth / 2,
                     kBase + 26, count, tallest);
  const std::pair<const char*, double> marks[] = {{"p50", m.p50}, {"p90", m.p90}, {"p99", m.p99}};
  for (std::size_t i = 0; i < 3; ++i) {
    const double x = x_of(std::clamp(marks[i].second, lo, hi));
    out += fmt::format("<line class=\"quantile\" data-q=\"{0}\" data-value=\"{1}\" x1=\"{2:.1f}\" y1=\"{3}\" x2=\"{2:.1f}\" y2=\"{4}\">"
                       "<title>{0} = {1}</title></line>\n<text x=\"{2:.1f}\" y=\"{5}\" text-anchor=\"middle\">{0}</text>\n",
                       marks[i].first, num(marks[i].second), x, kBase - kHeight - 4, kBase, 12 + 10 * i);
  }
  return out + "</svg>\n";
}

std::string metrics_section(const SweepReport& r) {
  std::string out = "<h2>Metrics</h2>\n";
  if (r.metrics.empty()) return out + "<p>No metric was measured.</p>\n";
  for (const SweepMetric& m : r.metrics) {
    out += fmt::format("<h3><code>{}</code></h3>\n", xml_escape(m.name));
    out += m.count == 0 ? fmt::format("<p>{} runs reported it, with no value.</p>\n", m.runs)
                        : fmt::format("<p>{} runs, {} values: p50 {}, p90 {}, p99 {}, max {}{}.</p>\n", m.runs, m.count,
                                      num(m.p50), num(m.p90), num(m.p99), num(m.max),
                                      m.quantile_error == 0 ? std::string()
                                                            : fmt::format(" (quantiles and histogram from a sketch, within {:g} %)",
                                                                          100 * m.quantile_error));
    out += histogram_svg(m);
  }
  return out;
}

std::string failing_section(const SweepReport& r) {
  std::string out = "<h2>Failing seeds</h2>\n";
  if (r.failed == 0) out += "<p>No seed failed.</p>\n";
  else if (r.failing.size() < r.failed)
    out += fmt::format("<p>The first {} of {} failing seeds; every one is in the results file.</p>\n", r.failing.size(), r.failed);
  out += "<ol id=\"failing\">\n";
  for (const SweepFailure& f : r.failing) {
    std::string checks;
    for (const std::string& c : f.failed) checks += (checks.empty() ? "" : ", ") + c;
    out += fmt::format("<li data-seed=\"{}\"><code class=\"reproduce\">{}</code> &mdash; <span class=\"checks\">{}</span>\n",
                       f.seed, xml_escape(f.reproduce), xml_escape(checks));
    if (!f.witnesses.empty()) {
      out += "<ul class=\"witnesses\">\n";
      for (const auto& [check, w] : f.witnesses)
        out += fmt::format("<li class=\"witness\"><code>{}</code>: {}</li>\n", xml_escape(check), xml_escape(format_witness(w)));
      out += "</ul>\n";
    }
    out += "</li>\n";
  }
  return out + "</ol>\n";
}

std::string coverage_section(const SweepReport& r) {
  if (!r.coverage) return {};
  const SweepCoverage& c = *r.coverage;
  std::string out = fmt::format("<h2>Fault coverage</h2>\n<p>Over {} seeds.</p>\n", c.seeds);
  out += "<h3>Faults</h3>\n<table id=\"faults\">\n<tr><th>fault</th><th>seeds on</th><th>seeds acted</th><th>injected</th></tr>\n";
  for (const SweepCoverage::Fault& f : c.faults)
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>\n", xml_escape(f.name),
                       f.on, f.acted == 0 ? "bad" : "", f.acted, f.injected);
  out += "</table>\n<h3>Checks</h3>\n<table id=\"checks\">\n<tr><th>check</th><th>passed</th><th>failed</th><th>not judged</th></tr>\n";
  for (const SweepCoverage::Check& k : c.checks)
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>\n", xml_escape(k.name),
                       k.passed, k.failed == 0 ? "" : "bad", k.failed, k.not_judged);
  return out + "</table>\n";
}

std::string links_section(const SweepLinks& l) {
  std::string out = "<h2>Files</h2>\n<ul id=\"files\">\n";
  const auto link = [&out](const std::string& href, const char* what) {
    if (!href.empty()) out += fmt::format("<li><a href=\"{0}\">{0}</a>: {1}</li>\n", xml_escape(href), what);
  };
  link(l.coverage, "what the sweep tried and what it never did");
  link(l.summary, "the counts, every metric's quantiles and the coverage, as JSON");
  link(l.results, "one JSON line a seed (a stopped sweep resumes from it)");
  link(l.junit, "one JUnit test case per failing seed and one for the sweep");
  return out + "</ul>\n";
}

}  // namespace

std::string sweep_index_html(const SweepReport& r) {
  const bool pass = r.failed == 0;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>sweep {}: {}</title>\n", xml_escape(r.scenario), pass ? "PASS" : "FAIL");
  out += std::string(page_style()) + kSweepStyle + "</head>\n<body>\n";
  out += fmt::format("<h1>letitcrash sweep: {}</h1>\n<div class=\"verdict {}\">{}</div>\n", xml_escape(r.scenario),
                     pass ? "pass" : "fail", pass ? "PASS" : "FAIL");
  out += fmt::format("<p id=\"counts\" data-seeds=\"{0}\" data-passed=\"{1}\" data-failed=\"{2}\">{0} seeds: {1} passed, {2} failed.</p>\n",
                     r.total, r.passed, r.failed);
  out += "<dl>\n";
  for (const auto& [k, v] : {std::pair<const char*, std::string>{"file", r.file}, {"seeds", r.seeds}, {"shard", r.shard},
                             {"tie-break", r.tie_break}, {"swarm", r.swarm ? "yes: each seed its own faults" : "no"}})
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", k, xml_escape(v));
  out += "</dl>\n<h2>Seeds</h2>\n<p>A square a seed (a range of seeds beyond " + std::to_string(kStripCells) +
         "), in seed order: green passed, red failed. Hover for the seed.</p>\n";
  if (r.total > 0 && r.outcomes.codes.empty()) out += "<p class=\"note\">No strip: too many seeds to keep each one's outcome.</p>\n";
  else out += strip_svg(r.outcomes);
  out += failing_section(r) + metrics_section(r) + coverage_section(r) + links_section(r.links);
  return out + "</body>\n</html>\n";
}

std::string sweep_junit_xml(const SweepReport& r) {
  const std::size_t tests = r.failing.size() + 1;
  const std::size_t failures = r.failing.size() + (r.failed > 0 ? 1 : 0);
  const std::string suite = xml_escape("sweep: " + r.scenario);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"letitcrash\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n", tests, failures);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n", suite, tests, failures);
  out += "    <properties>\n";
  for (const auto& [name, value] : {std::pair<const char*, std::string>{"file", r.file}, {"seeds", r.seeds}, {"shard", r.shard},
                                    {"tie_break", r.tie_break}, {"swarm", r.swarm ? "true" : "false"},
                                    {"passed", std::to_string(r.passed)}, {"failed", std::to_string(r.failed)}})
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escape(value));
  out += "    </properties>\n";
  for (const SweepFailure& f : r.failing) {
    std::string message;
    for (const std::string& c : f.failed) message += (message.empty() ? "" : ", ") + c;
    if (!f.witnesses.empty()) message += fmt::format(" [witness: {}: {}]", f.witnesses.front().first, format_witness(f.witnesses.front().second));
    out += fmt::format("    <testcase name=\"seed {}\" classname=\"{}\">\n      <failure message=\"{}\" type=\"seed failed\">{}</failure>\n"
                       "    </testcase>\n",
                       f.seed, suite, xml_escape(message), xml_escape(f.reproduce));
  }
  out += fmt::format("    <testcase name=\"sweep: {} seeds\" classname=\"{}\"", r.total, suite);
  if (r.failed == 0) return out + "/>\n  </testsuite>\n</testsuites>\n";
  const std::string more = r.failing.size() < r.failed
                               ? fmt::format(" (test cases for the first {}; every one is in the results file)", r.failing.size())
                               : std::string();
  out += fmt::format(">\n      <failure message=\"{} of {} seeds failed{}\" type=\"sweep failed\"/>\n    </testcase>\n", r.failed,
                     r.total, xml_escape(more));
  return out + "  </testsuite>\n</testsuites>\n";
}

}  // namespace lic::reports
