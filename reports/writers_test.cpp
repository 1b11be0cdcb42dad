// The summary, the tree diagram, JUnit and the HTML page, each read back from a real small run.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "reports/escape.hpp"
#include "reports/run_report.hpp"
#include "reports/test_runs.hpp"

using namespace lic;
using namespace lic::literals;
using namespace lic::reports;
using lic::reports::testing::count;

namespace {

/// The statement that declares `path` in a DOT text (its attribute list), or "".
std::string dot_node(const std::string& dot, const std::string& path) {
  const std::string head = "  \"" + path + "\" [";
  const std::size_t at = dot.find(head);
  if (at == std::string::npos) return {};
  return dot.substr(at, dot.find("];\n", at) - at);
}

}  // namespace

TEST_CASE("summary.json holds the run's facts and verdicts as given", "[reports][summary]") {
  const auto run = testing::pipeline_run({1_s, 3_s}, 10_s);
  const RunReport& r = run.report;
  const std::string text = summary_json(r);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["scenario"] == "pipeline");
  CHECK(j["file"] == "scenarios/pipeline.yaml");
  CHECK(j["seed"] == 7);
  CHECK(j["tie_break"] == "fifo");
  CHECK(j["virtual_time_ns"] == (10_s).ns);
  CHECK(j["events"] == r.events);
  CHECK(j["trace_hash"] == hash_hex(r.trace_hash));
  CHECK(j["trace_hash"].get<std::string>().size() == 16);
  CHECK(j["passed"] == false);
  REQUIRE(j["checks"].size() == 2);
  CHECK(j["checks"][0] ==
        nlohmann::json{{"name", "converges"}, {"passed", true}, {"detail", r.checks[0].detail}});
  CHECK(j["checks"][1]["passed"] == false);
  CHECK(j["reproduce"] == r.reproduce);
  CHECK(text.starts_with("{\n  \"scenario\": \"pipeline\",\n"));  // two-space indent, key order kept
}

TEST_CASE("summary.json lists every supervisor's children in which_children order with their state",
          "[reports][summary]") {
  auto run = testing::pipeline_run({1_s, 3_s}, 10_s);
  RunReport& r = run.report;
  REQUIRE(r.final_supervisors.size() == 2);
  // Make the second child of the first supervisor look mid-restart and the next undefined, as
  // a snapshot taken during a failed restart shows them.
  const auto j0 = nlohmann::json::parse(summary_json(r));
  const auto& sups = j0["final"]["supervisors"];
  REQUIRE(sups.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& s = r.final_supervisors[i];
    CHECK(sups[i]["path"] == s.path);
    CHECK(sups[i]["strategy"] == std::string(supervision::to_string(s.strategy)));
    REQUIRE(sups[i]["children"].size() == s.children.size());
    for (std::size_t k = 0; k < s.children.size(); ++k) {
      CHECK(sups[i]["children"][k]["id"] == s.children[k].id);
      CHECK(sups[i]["children"][k]["state"] == "running");
      CHECK(sups[i]["children"][k]["pid"] == s.children[k].pid.id);
    }
  }
  r.final_supervisors[0].children[0].pid = Pid{};
  r.final_supervisors[0].children[0].restarting = true;
  r.final_supervisors[0].children[1].pid = Pid{};
  const auto j = nlohmann::json::parse(summary_json(r));
  CHECK(j["final"]["supervisors"][0]["children"][0]["state"] == "restarting");
  CHECK(j["final"]["supervisors"][0]["children"][1]["state"] == "undefined");
  CHECK_FALSE(j["final"]["supervisors"][0]["children"][1].contains("pid"));
  CHECK(j["final"]["starts"]["/root/input/parser"] == 3);  // two crashes, two restarts
  CHECK(j["final"]["starts"]["/root/input/reader"] == 1);
  CHECK(j["final"]["alive"].size() == r.alive.size());
  CHECK(j["final"]["alive"][0] == "/root");
}

TEST_CASE("summary.json shows a lifecycle supervisor's services with their states", "[reports][summary]") {
  const auto run = testing::network_run();
  const auto j = nlohmann::json::parse(summary_json(run.report));
  REQUIRE(j["final"]["lifecycles"].size() == 1);
  const auto& app = j["final"]["lifecycles"][0];
  CHECK(app["path"] == "/app");
  REQUIRE(app["services"].size() == 2);
  CHECK(app["services"][0]["name"] == "db");
  CHECK(app["services"][0]["state"] == "running");
  CHECK(app["services"][0]["starts"] == 2);  // crashed at 9 s, retried
  CHECK(app["services"][1]["name"] == "cache");
}

TEST_CASE("tree.dot names every path with its strategy and intensity and counts restarts", "[reports][dot]") {
  const auto run = testing::pipeline_run({1_s, 3_s}, 10_s);
  const std::string dot = tree_dot(run.report);
  CHECK(dot.starts_with("digraph letitcrash {\n"));
  CHECK(dot.ends_with("}\n"));
  for (const char* path :
       {"/root", "/root/input", "/root/input/reader", "/root/input/parser", "/root/db_sink"}) {
    INFO(path);
    CHECK_FALSE(dot_node(dot, path).empty());
  }
  CHECK(dot_node(dot, "/root").find("one_for_one 3/5s") != std::string::npos);
  CHECK(dot_node(dot, "/root/input").find("rest_for_one 3/5s") != std::string::npos);
  CHECK(dot_node(dot, "/root/input/parser").find("restarts: 2") != std::string::npos);
  CHECK(dot_node(dot, "/root/input/parser").find("permanent, shutdown 5s") != std::string::npos);
  CHECK(dot_node(dot, "/root/input/reader").find("restarts") == std::string::npos);
  CHECK(dot_node(dot, "/root/input/parser").find("fillcolor=\"#c8e6c9\"") !=
        std::string::npos);  // running: green
  CHECK(dot.find("\"/root/input\" -> \"/root/input/parser\";") != std::string::npos);
  CHECK(dot.find("escalated") == std::string::npos);
}

TEST_CASE("tree.dot marks the supervisor that reached its restart intensity and only it", "[reports][dot]") {
  // Four parser crashes within a second: /root/input gives up and /root restarts it.
  const auto run = testing::pipeline_run({1000_ms, 1100_ms, 1200_ms, 1300_ms}, 5_s);
  const std::string dot = tree_dot(run.report);
  const std::string input = dot_node(dot, "/root/input");
  CHECK(input.find("escalated") != std::string::npos);
  CHECK(input.find("penwidth=3") != std::string::npos);
  CHECK(input.find("color=\"#b71c1c\"") != std::string::npos);
  CHECK(input.find("restarts: 1") != std::string::npos);
  CHECK(count(dot, "escalated") == 1);
}

TEST_CASE("tree.dot colours a child that is not running red and a path that is gone grey", "[reports][dot]") {
  auto run = testing::pipeline_run({1_s}, 2_s);
  RunReport& r = run.report;
  // As a snapshot taken while /root/input is down shows it: its slot in /root is undefined, and
  // it and its children are gone; db_sink is mid-restart.
  std::erase_if(r.final_supervisors, [](const auto& s) { return s.path == "/root/input"; });
  std::erase_if(r.alive,
                [](const std::string& p) { return p.starts_with("/root/input") || p == "/root/db_sink"; });
  for (auto& c : r.final_supervisors.at(0).children) {
    c.pid = Pid{};
    c.restarting = c.id == "db_sink";
  }
  const std::string dot = tree_dot(r);
  CHECK(dot_node(dot, "/root/input/parser").find("fillcolor=\"#eeeeee\"") != std::string::npos);
  CHECK(dot_node(dot, "/root/input/parser").find("\\ngone") != std::string::npos);
  CHECK(dot_node(dot, "/root/input").find("\\nnot running") != std::string::npos);
  CHECK(dot_node(dot, "/root/input").find("fillcolor=\"#ffcdd2\"") != std::string::npos);
  CHECK(dot_node(dot, "/root/db_sink").find("\\nrestarting") != std::string::npos);
  CHECK(dot_node(dot, "/root").find("\\nrunning") != std::string::npos);
}

TEST_CASE("tree.dot draws services with dashed depends_on edges and names a child's node", "[reports][dot]") {
  const auto run = testing::network_run();
  const std::string dot = tree_dot(run.report);
  CHECK(dot.find("\"/app/cache\" -> \"/app/db\" [style=dashed") != std::string::npos);
  CHECK(dot_node(dot, "/app").find("lifecycle") != std::string::npos);
  CHECK(dot_node(dot, "/app/db").find("shape=component") != std::string::npos);
  CHECK(dot_node(dot, "/app/db").find("running") != std::string::npos);
  CHECK(dot_node(dot, "/edge").find("on node1") != std::string::npos);
}

TEST_CASE("tree.dot shows a dynamic supervisor's template with how many of it run", "[reports][dot]") {
  const auto run = testing::dynamic_run();
  const std::string dot = tree_dot(run.report);
  CHECK(dot_node(dot, "/root/pool").find("simple_one_for_one 5/5s") != std::string::npos);
  CHECK(dot_node(dot, "/root/pool/worker").find("template: 3 running") != std::string::npos);
  CHECK(dot_node(dot, "/root/pool/worker").find("dashed") != std::string::npos);
}

TEST_CASE("escaping: quotes and markup in names never break out of DOT or XML strings", "[reports][escape]") {
  CHECK(dot_escape("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(xml_escape("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  CHECK(xml_escape(std::string("bell\x07")) == "bell\xef\xbf\xbd");
  CHECK(xml_escape("two\nlines") == "two&#10;lines");
  CHECK(truncate_left("/root/pool/worker.3", 8) == "\xe2\x80\xa6orker.3");
  CHECK(truncate_left("/root/pool/worker.3", 9) == "\xe2\x80\xa6worker.3");
  CHECK(truncate_left("/root", 9) == "/root");
  CHECK(truncate_left("\xc3\xa9\xc3\xa9\xc3\xa9", 2) == "\xe2\x80\xa6\xc3\xa9");  // code points, not bytes
  CHECK(truncate_right("node1 paused", 6) == "node1\xe2\x80\xa6");
  CHECK(truncate_right("\xc3\xa9\xc3\xa9\xc3\xa9", 2) == "\xc3\xa9\xe2\x80\xa6");
  CHECK(truncate_right("node1", 5) == "node1");

  auto run = testing::pipeline_run({}, 1_s);
  run.report.scenario = "say \"hi\" <b>";
  run.report.checks[1].name = "x<y & \"z\"";
  const std::string dot = tree_dot(run.report);
  CHECK(dot.find("say \\\"hi\\\" <b>") != std::string::npos);
  const std::string junit = junit_xml(run.report);
  CHECK(junit.find("x&lt;y &amp; &quot;z&quot;") != std::string::npos);
  CHECK(junit.find("x<y") == std::string::npos);
  CHECK(testing::unbalanced_tags(junit).empty());
  const std::string html = index_html(run.report, ReportSelection{}, TreeSvg{true, ""});
  CHECK(html.find("say &quot;hi&quot; &lt;b&gt;") != std::string::npos);
  CHECK(testing::unbalanced_tags(html).empty());
}

TEST_CASE("junit.xml has a test case per check and a failure that carries the reproduce command",
          "[reports][junit]") {
  const auto run = testing::pipeline_run({1_s}, 2_s);
  const RunReport& r = run.report;
  const std::string xml = junit_xml(r);
  INFO(xml);
  CHECK(testing::unbalanced_tags(xml).empty());
  CHECK(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
  CHECK(xml.find("<testsuite name=\"pipeline\" tests=\"2\" failures=\"1\"") != std::string::npos);
  CHECK(count(xml, "<testcase ") == 2);
  CHECK(xml.find("<testcase name=\"converges\" classname=\"pipeline\"/>") != std::string::npos);
  CHECK(xml.find("<testcase name=\"availability(/root)\" classname=\"pipeline\">") != std::string::npos);
  CHECK(count(xml, "<failure ") == 1);
  const std::size_t failure = xml.find("<failure message=\"" + xml_escape(r.checks[1].detail) + "\"");
  REQUIRE(failure != std::string::npos);
  const std::size_t failure_end = xml.find("</failure>", failure);
  CHECK(xml.substr(failure, failure_end - failure).find(r.reproduce) != std::string::npos);
}

TEST_CASE("index.html shows the run's metrics - a user's beside the built-in ones - one number or a list", "[reports][html]") {
  auto run = testing::pipeline_run({1_s}, 2_s);
  RunReport& r = run.report;
  r.metrics.clear();
  CHECK(index_html(r, ReportSelection{}, TreeSvg{true, ""}).find("<h2>Metrics</h2>") == std::string::npos);
  r.metrics["cache.hit_ratio"] = MetricValue{{0.25}, false};
  r.metrics["failover_s"] = MetricValue{{1.5, 2}, true};
  const std::string html = index_html(r, ReportSelection{}, TreeSvg{true, ""});
  CHECK(testing::unbalanced_tags(html).empty());
  CHECK(html.find("<h2>Metrics</h2>") != std::string::npos);
  CHECK(html.find("<tr class=\"metric\"><td><code>cache.hit_ratio</code></td><td>0.25</td></tr>") != std::string::npos);
  CHECK(html.find("<tr class=\"metric\"><td><code>failover_s</code></td><td>[1.5, 2]</td></tr>") != std::string::npos);
}

TEST_CASE("index.html shows the verdict and checks and facts and images and links and fetches nothing",
          "[reports][html]") {
  const auto run = testing::pipeline_run({1_s}, 2_s);
  const RunReport& r = run.report;
  const std::string html = index_html(r, ReportSelection{}, TreeSvg{true, ""});
  CHECK(testing::unbalanced_tags(html).empty());
  CHECK(html.find("<div class=\"verdict fail\">FAIL</div>") != std::string::npos);
  CHECK(count(html, "<tr><td><code>") == 2);
  CHECK(html.find("<td class=\"bad\">FAILED</td><td>" + xml_escape(r.checks[1].detail)) != std::string::npos);
  CHECK(html.find("<pre><code>" + xml_escape(r.reproduce) + "</code></pre>") != std::string::npos);
  CHECK(html.find(hash_hex(r.trace_hash)) != std::string::npos);
  CHECK(html.find("<img src=\"tree.svg\"") != std::string::npos);
  // The timeline is drawn by the page's own script; the image is there without scripts.
  CHECK(html.find("<div id=\"timeline\"") != std::string::npos);
  CHECK(html.find("<noscript><p><a href=\"timeline.svg\"><img src=\"timeline.svg\"") != std::string::npos);
  for (const char* f : {"summary.json", "junit.xml", "trace.jsonl", "timeline.svg", "trace.perfetto.json",
                        "tree.dot", "tree.svg"}) {
    INFO(f);
    CHECK(html.find(std::string("<a href=\"") + f + "\">" + f + "</a>") != std::string::npos);
  }
  // Self-contained: scripts inline only, no stylesheet or image from elsewhere.
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(count(html, "<script") == 2);  // the timeline's data and its script
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);

  auto passing = testing::pipeline_run({}, 1_s);
  passing.report.passed = true;
  ReportSelection some;
  some.tree = false;
  some.perfetto = false;
  const std::string ok = index_html(passing.report, some, TreeSvg{});
  CHECK(ok.find("<div class=\"verdict pass\">PASS</div>") != std::string::npos);
  CHECK(ok.find("tree.dot") == std::string::npos);
  CHECK(ok.find("trace.perfetto.json") == std::string::npos);
  const std::string no_dot = index_html(r, ReportSelection{}, TreeSvg{});
  CHECK(no_dot.find("Graphviz <code>dot</code> was not found on PATH") != std::string::npos);
  CHECK(no_dot.find("src=\"tree.svg\"") == std::string::npos);
  CHECK(no_dot.find("href=\"tree.svg\"") == std::string::npos);
  // dot there but failing is told apart from dot missing, with what went wrong.
  const std::string failed = index_html(r, ReportSelection{}, TreeSvg{false, "dot exited 1: syntax error <near> line 3"});
  CHECK(failed.find("Graphviz <code>dot</code> failed on tree.dot (dot exited 1: syntax error &lt;near&gt; line 3)") != std::string::npos);
  CHECK(failed.find("not found on PATH") == std::string::npos);
  CHECK(failed.find("src=\"tree.svg\"") == std::string::npos);
}
