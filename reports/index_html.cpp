// index.html: one self-contained page (inline CSS and script, nothing fetched) with the
// verdict, the checks (a failing one's witness linked to its instant on the timeline and its
// line in trace.jsonl), the metrics (the built-in ones and a user's), the run's facts and
// reproduce command, the tree as an image, the interactive timeline (timeline_html.hpp), and
// links to every file written beside it.

#include <fmt/format.h>

#include <string>
#include <vector>

#include "reports/escape.hpp"
#include "reports/page_style.hpp"
#include "reports/dataflow.hpp"
#include "reports/run_report.hpp"
#include "reports/timeline_html.hpp"

namespace lic::reports {
namespace {

const char* const kStyle = R"(<style>
body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;max-width:1240px;padding:0 16px;color:#212121;background:#fff}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #e0e0e0;padding-bottom:4px}
.verdict{font-size:56px;font-weight:bold;letter-spacing:2px;padding:12px 24px;border-radius:8px;display:inline-block;margin:12px 0}
.pass{background:#e8f5e9;color:#1b5e20;border:3px solid #2e7d32}.fail{background:#ffebee;color:#b71c1c;border:3px solid #c62828}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #eeeeee;vertical-align:top}
th{background:#f5f5f5}td.ok{color:#1b5e20;font-weight:bold}td.bad{color:#b71c1c;font-weight:bold}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px}dt{color:#616161}dd{margin:0}
pre{background:#263238;color:#eceff1;padding:10px 14px;border-radius:6px;overflow-x:auto}
img{max-width:100%;border:1px solid #e0e0e0}.note{background:#fff8e1;border-left:4px solid #f9a825;padding:8px 12px}
code{font-family:Menlo,Consolas,monospace}.witness-link,.trace-link{white-space:nowrap}
</style>
)";

struct FileLink {
  const char* name;
  const char* what;
};

std::vector<FileLink> files(const ReportSelection& w, bool have_svg_tree) {
  std::vector<FileLink> out;
  if (w.summary)
    out.push_back({"summary.json", "the verdicts and the final state, as run --format json prints them"});
  if (w.junit) out.push_back({"junit.xml", "one JUnit test case per check"});
  if (w.trace) out.push_back({"trace.jsonl", "every trace event, one JSON object a line"});
  if (w.timeline)
    out.push_back({"timeline.svg", "a lane per tree path: up, down, crashes, restarts, partitions"});
  if (w.perfetto) out.push_back({"trace.perfetto.json", "open it in ui.perfetto.dev or chrome://tracing"});
  if (w.tree) out.push_back({"tree.dot", "the tree for Graphviz"});
  if (w.tree && have_svg_tree) out.push_back({"tree.svg", "the tree, drawn by Graphviz"});
  return out;
}

/// A failing check's witness: where in the trace its verdict was decided, with a link that
/// centres the timeline on that instant and one to the trace line (trace.jsonl's line 1 is the
/// header; the event with `seq` N is on line N + 2).
std::string witness_cell(const Witness& w, const ReportSelection& written) {
  std::string out = xml_escape(format_witness(w));
  if (written.timeline)
    out += fmt::format("<br><a class=\"witness-link\" href=\"#t={}\">show t={} on the timeline</a>", w.t_ns,
                       xml_escape(format_time(Time{w.t_ns})));
  if (written.trace)
    out += fmt::format("<br><a class=\"trace-link\" href=\"trace.jsonl\">trace.jsonl line {}</a>", w.event + 2);
  return out;
}

std::string checks_table(const RunReport& r, const ReportSelection& written) {
  if (r.checks.empty()) return "<p>No checks were declared.</p>\n";
  std::string out = "<table>\n<tr><th>check</th><th>result</th><th>detail</th><th>witness</th></tr>\n";
  for (const CheckOutcome& c : r.checks) {
    const std::string witness = !c.passed && c.witness ? witness_cell(*c.witness, written) : std::string();
    out += fmt::format("<tr><td><code>{}</code></td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>\n",
                       xml_escape(c.name), c.passed ? "ok" : "bad", !c.judged ? "not judged" : c.passed ? "passed" : "FAILED",
                       xml_escape(c.detail), witness);
  }
  return out + "</table>\n";
}

/// The run's measurements, the built-in ones and a user's alike (summary.json's `metrics`): one
/// number, or a list (one per occurrence: each failover), its first values shown.
std::string metrics_table(const RunReport& r) {
  if (r.metrics.empty()) return {};
  std::string out = "<h2>Metrics</h2>\n<table>\n<tr><th>metric</th><th>value</th></tr>\n";
  constexpr std::size_t kShown = 12;
  for (const auto& [name, m] : r.metrics) {
    std::string values;
    for (std::size_t i = 0; i < m.values.size() && i < kShown; ++i) values += fmt::format("{}{:g}", i == 0 ? "" : ", ", m.values[i]);
    if (m.values.size() > kShown) values += fmt::format(", ... ({} values)", m.values.size());
    if (m.list) values = "[" + values + "]";
    out += fmt::format("<tr class=\"metric\"><td><code>{}</code></td><td>{}</td></tr>\n", xml_escape(name), xml_escape(values));
  }
  return out + "</table>\n";
}

std::string facts(const RunReport& r) {
  std::string out = "<dl>\n";
  auto row = [&out](const char* k, const std::string& v) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", k, xml_escape(v));
  };
  row("scenario", r.scenario);
  row("file", r.file);
  row("seed", std::to_string(r.seed));
  row("tie-break", r.tie_break);
  row("virtual time", format_time(r.end));
  row("events", std::to_string(r.events));
  row("trace hash", hash_hex(r.trace_hash));
  out += "</dl>\n<p>Reproduce:</p>\n";
  return out + "<pre><code>" + xml_escape(r.reproduce) + "</code></pre>\n";
}

}  // namespace

std::string_view page_style() { return kStyle; }

std::string index_html(const RunReport& r, const ReportSelection& written, const TreeSvg& svg, const RunView* view) {
  const char* verdict = r.passed ? "PASS" : !r.stopped.empty() ? "STOPPED" : "FAIL";
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>{}: {}</title>\n", xml_escape(r.scenario), verdict);
  out += kStyle;
  out += "</head>\n<body>\n";
  out += fmt::format("<h1>letitcrash: {}</h1>\n<div class=\"verdict {}\">{}</div>\n", xml_escape(r.scenario),
                     r.passed ? "pass" : "fail", verdict);
  if (!r.stopped.empty())
    out += fmt::format("<p class=\"stopped\">{}: these are the reports of the run so far; no check was judged.</p>\n",
                       xml_escape(r.stopped));
  out += "<h2>Checks</h2>\n" + checks_table(r, written);
  out += metrics_table(r);
  if (r.trace != nullptr) out += dataflow_html(flow_of(*r.trace, r.line_flow));
  out += "<h2>Run</h2>\n" + facts(r);
  if (written.tree) {
    out += "<h2>Tree</h2>\n";
    const std::string render = "<a href=\"tree.dot\">tree.dot</a> is there to render "
                               "(<code>dot -Tsvg tree.dot -o tree.svg</code>).</p>\n";
    if (!svg.skipped.empty()) {
      out += "<p class=\"note\">tree.svg was not drawn: " + xml_escape(svg.skipped) + ". " + render;
    } else if (svg.written) {
      out += "<p><a href=\"tree.svg\"><img src=\"tree.svg\" alt=\"the supervision tree\"></a></p>\n";
    } else if (svg.problem.empty()) {
      out += "<p class=\"note\">Graphviz <code>dot</code> was not found on PATH: " + render;
    } else {
      out += "<p class=\"note\">Graphviz <code>dot</code> failed on tree.dot (" + xml_escape(svg.problem) + "): " + render;
    }
  }
  if (written.timeline) {
    out += "<h2>Timeline</h2>\n" + (view != nullptr ? timeline_html(r, *view) : timeline_html(r));
    out += "<p>The same as a file: <a href=\"timeline.svg\">timeline.svg</a>.</p>\n";
  }
  out += "<h2>Files</h2>\n<ul>\n";
  for (const FileLink& f : files(written, svg.written)) {
    out += fmt::format("<li><a href=\"{0}\">{0}</a>: {1}</li>\n", f.name, f.what);
  }
  out += "</ul>\n</body>\n</html>\n";
  return out;
}

}  // namespace lic::reports
