// A sweep's index.html and junit.xml (sweep_page.hpp), from made-up sweeps.

#include <catch2/catch.hpp>
#include <cstdint>
#include <regex>
#include <string>

#include "reports/sweep_page.hpp"
#include "reports/test_runs.hpp"

using namespace lic::reports;
using lic::reports::testing::count;

namespace {

/// `n` seeds from `first` (shard 1/1); those in `failing` failed restarts(/root/a).
SweepReport sweep(std::uint64_t first, std::uint64_t n, const std::vector<std::uint64_t>& failing) {
  SweepReport r;
  r.scenario = "pipeline";
  r.file = "pipeline.yaml";
  r.seeds = std::to_string(first) + ".." + std::to_string(first + n - 1);
  r.shard = "1/1";
  r.tie_break = "fifo";
  r.total = n;
  r.outcomes.first = first;
  r.outcomes.codes.assign(n, SeedOutcomes::kPassed);
  r.outcomes.failure_kinds = {"restarts(/root/a)"};
  for (std::uint64_t s : failing) {
    r.outcomes.codes[s - first] = 2;
    r.failing.push_back({s, "letitcrash run pipeline.yaml --seed " + std::to_string(s) + " --tie-break fifo",
                         {"restarts(/root/a)"},
                         {{"restarts(/root/a)", Witness{2'000'000'000, 31, {"/root/a"}, "restart 2 of /root/a"}}}});
  }
  r.failed = failing.size();
  r.passed = n - r.failed;
  r.links = {"results.jsonl", "summary.json", "junit.xml", "coverage.html"};
  return r;
}

/// The integer values of attribute `name` in `text`, in order.
std::vector<std::uint64_t> attrs(const std::string& text, const std::string& name) {
  std::vector<std::uint64_t> out;
  const std::regex re(" " + name + "=\"([0-9]+)\"");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoull((*it)[1]));
  return out;
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (std::uint64_t x : v) s += x;
  return s;
}

}  // namespace

TEST_CASE("sweep index.html: counts and a strip rect per seed with its tooltip and the failing seeds' reproduce lines",
          "[reports][sweep]") {
  const SweepReport r = sweep(1, 30, {2, 7});
  const std::string page = sweep_index_html(r);
  CHECK(page.find("<p id=\"counts\" data-seeds=\"30\" data-passed=\"28\" data-failed=\"2\">") != std::string::npos);
  CHECK(count(page, "<rect class=\"seed pass\"") == 28);
  CHECK(count(page, "<rect class=\"seed fail\"") == 2);
  CHECK(page.find("data-seed=\"7\" data-tip=\"seed 7: FAILED (restarts(/root/a))\"") != std::string::npos);
  CHECK(page.find("<title>seed 8: passed</title>") != std::string::npos);
  CHECK(count(page, "<code class=\"reproduce\">letitcrash run pipeline.yaml --seed ") == 2);
  CHECK(page.find("t=2s event 31 (/root/a): restart 2 of /root/a") != std::string::npos);
  // Nothing fetched: no src attribute at all, links relative.
  CHECK(page.find(" src=") == std::string::npos);
  CHECK(page.find("href=\"http") == std::string::npos);
  CHECK(page.find("<a href=\"junit.xml\">") != std::string::npos);
}

TEST_CASE("sweep strip: more than 2000 seeds draw at most 2000 cells in seed order that hold every seed",
          "[reports][sweep]") {
  SweepReport r = sweep(10, 5001, {10, 2500, 5010});
  r.outcomes.codes[100] = SeedOutcomes::kMissing;  // a seed a merge lacks
  const std::vector<StripCell> cells = strip_cells(r.outcomes);
  REQUIRE(cells.size() <= kStripCells);
  CHECK(cells.size() > 1000);
  std::uint64_t seeds = 0, failed = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    seeds += cells[i].seeds;
    failed += cells[i].failed;
    CHECK(cells[i].first <= cells[i].last);
    if (i > 0) CHECK(cells[i - 1].last < cells[i].first);
  }
  CHECK(seeds == 5000);
  CHECK(failed == 3);
  CHECK(cells.front().first == 10);
  CHECK(cells.back().last == 5010);
  const std::string page = sweep_index_html(r);
  CHECK(count(page, "<rect class=\"cell\"") == cells.size());
  CHECK(count(page, "class=\"seed ") == 0);
  CHECK(sum(attrs(page, "data-failed")) == 3 + 3);  // the cells, and the counts paragraph
  CHECK(page.find("data-tip=\"seeds 10..11: 1 of 2 failed\"") != std::string::npos);
}

TEST_CASE("sweep strip: a shard's seeds are every stride-th and a failure past the kept kinds says only FAILED",
          "[reports][sweep]") {
  SeedOutcomes o;
  o.first = 3;
  o.stride = 4;
  o.codes = {SeedOutcomes::kPassed, 0xFFFF};
  const std::vector<StripCell> cells = strip_cells(o);
  REQUIRE(cells.size() == 2);
  CHECK(cells[1].first == 7);
  CHECK(cells[1].tip == "seed 7: FAILED (the checks are in the results file)");
}

TEST_CASE("sweep histogram: the bars' counts sum to the values and equal values draw one bar", "[reports][sweep]") {
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(0.37 * i * i / 1000.0);
  const std::vector<HistogramBar> bars = histogram(v);
  std::uint64_t n = 0;
  for (const HistogramBar& b : bars) n += b.n;
  CHECK(n == 1000);
  CHECK(bars.size() <= 40);
  CHECK(bars.front().lo == 0);
  CHECK(bars.back().hi == Approx(0.37 * 999 * 999 / 1000.0));
  REQUIRE(histogram({2.5, 2.5, 2.5}).size() == 1);
  CHECK(histogram({2.5, 2.5, 2.5}).front().n == 3);
  CHECK(histogram({}).empty());
  const std::vector<HistogramBar> counts = histogram({0, 1, 1, 3});  // whole numbers: a bar a value
  REQUIRE(counts.size() == 4);
  CHECK(counts[1].n == 2);
  CHECK(counts[2].n == 0);
  // Counted values (a sketch's buckets) draw as that many values would.
  const std::vector<HistogramBar> weighted = histogram_of_counts(std::vector<std::pair<double, std::uint64_t>>{{0, 1}, {1, 2}, {3, 1}});
  REQUIRE(weighted.size() == 4);
  CHECK(weighted[1].n == 2);

  SweepReport r = sweep(1, 3, {});
  std::vector<std::pair<double, std::uint64_t>> counted;
  for (double x : v) counted.emplace_back(x, 1);
  r.metrics.push_back({"failover_time", 3, counted, 1000, 0.1, 0.3, 0.36, 0.37});
  r.metrics.push_back({"drain_time", 3, {}, 0, 0, 0, 0, 0});
  r.metrics.push_back({"availability", 3, {{0.99, 3}}, 3, 0.99, 0.99, 0.99, 0.99});
  const std::string page = sweep_index_html(r);
  CHECK(page.find("data-metric=\"failover_time\" data-count=\"1000\"") != std::string::npos);
  CHECK(page.find("data-metric=\"drain_time\" data-count=\"0\"") != std::string::npos);
  CHECK(page.find("no value in any run") != std::string::npos);
  CHECK(sum(attrs(page, "data-n")) == 1000 + 3);
  CHECK(count(page, "class=\"quantile\" data-q=\"p99\"") == 2);
  const std::size_t availability = page.find("data-metric=\"availability\"");
  CHECK(count(page.substr(availability), "<rect class=\"bar\"") == 1);
}

TEST_CASE("sweep junit.xml: a test case per failing seed with its reproduce command and a failing summary case",
          "[reports][sweep]") {
  SweepReport r = sweep(1, 30, {2, 7});
  r.failed = 9;  // seven more failed than are listed
  const std::string xml = sweep_junit_xml(r);
  CHECK(xml.find("<testsuites name=\"letitcrash\" tests=\"3\" failures=\"3\" errors=\"0\">") != std::string::npos);
  CHECK(count(xml, "<testcase ") == 3);
  CHECK(xml.find("<testcase name=\"seed 7\" classname=\"sweep: pipeline\">") != std::string::npos);
  CHECK(xml.find("message=\"restarts(/root/a) [witness: restarts(/root/a): t=2s event 31 (/root/a): restart 2 of /root/a]\"") !=
        std::string::npos);
  CHECK(xml.find(">letitcrash run pipeline.yaml --seed 7 --tie-break fifo</failure>") != std::string::npos);
  CHECK(xml.find("<testcase name=\"sweep: 30 seeds\"") != std::string::npos);
  CHECK(xml.find("9 of 30 seeds failed (test cases for the first 2") != std::string::npos);
  const std::string pass = sweep_junit_xml(sweep(1, 5, {}));
  CHECK(pass.find("tests=\"1\" failures=\"0\"") != std::string::npos);
  CHECK(pass.find("<testcase name=\"sweep: 5 seeds\" classname=\"sweep: pipeline\"/>") != std::string::npos);
}

TEST_CASE("sweep pages escape hostile scenario - check and metric names", "[reports][sweep]") {
  SweepReport r = sweep(1, 3, {2});
  const std::string hostile = "<script>alert('x')</script>\"&";
  r.scenario = hostile;
  r.outcomes.failure_kinds = {hostile};
  r.failing[0].failed = {hostile};
  r.failing[0].reproduce = "letitcrash run '" + hostile + "'";
  r.metrics.push_back({hostile, 1, {{1, 1}, {2, 1}}, 2, 1, 2, 2, 2});
  r.coverage = SweepCoverage{3, {{hostile, 1, 1, 1}}, {{hostile, 2, 1, 0}}};
  const std::string page = sweep_index_html(r);
  const std::string xml = sweep_junit_xml(r);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(xml.find("<script") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;") != std::string::npos);
  CHECK(page.find("<table id=\"faults\">") != std::string::npos);
  CHECK(page.find("<a href=\"coverage.html\">") != std::string::npos);
}
