// Sweep results at scale (docs/sweeps.md, "Merging in bounded memory"): a metric's distribution
// past a million values, and `merge` through sorted runs spilled to temporary files.

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/run/metrics.hpp"
#include "scenarios/search/json_line.hpp"
#include "scenarios/search/results_file.hpp"
#include "sim/rng.hpp"

using namespace lic;
using namespace lic::scenarios;

namespace {

/// The exact nearest-rank quantile, as the exact Distribution reads it.
double nearest_rank(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::clamp(std::ceil(p * static_cast<double>(v.size())), 1.0, static_cast<double>(v.size())));
  return v[k - 1];
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

SweepHeader header(const std::string& seeds, const std::string& shard) {
  SweepHeader h;
  h.version = "test";
  h.scenario = "s";
  h.file = "s.yaml";
  h.seeds = seeds;
  h.shard = shard;
  h.tie_break = "fifo";
  h.scenario_hash = "0123456789abcdef";
  return h;
}

SeedResult result(std::uint64_t seed) {
  SeedResult r;
  r.seed = seed;
  r.passed = seed % 7 != 0;
  if (!r.passed) r.failed = {"converges"};
  r.trace_hash = hash_hex(stable_hash(std::to_string(seed)));
  r.events = 100 + seed;
  r.virtual_time_ns = 5'000'000'000;
  r.metrics["restarts"].values = {static_cast<double>(seed % 5)};
  r.judged = {"converges"};
  return r;
}

/// A shard's file: its header, then `seeds` in the order given (a sweep writes them as they finish).
std::string shard_file(const std::string& name, const SweepHeader& h, const std::vector<std::uint64_t>& seeds) {
  const std::string path = "/tmp/lic-results-test." + std::to_string(::getpid()) + "." + name;
  std::ofstream out(path, std::ios::binary);
  out << header_line(h);
  for (std::uint64_t s : seeds) out << result_line(result(s));
  return path;
}

}  // namespace

TEST_CASE("distribution: exact up to a million values, then a sketch within 1 % whatever the order", "[sweep][results]") {
  Rng rng(42);
  std::vector<double> values;
  for (std::size_t i = 0; i < Distribution::kExactValues + 200'000; ++i)
    values.push_back(std::exp(static_cast<double>(rng.next_u64() % 20'000) / 1000.0 - 5.0) * (i % 10 == 0 ? -1.0 : 1.0));
  values.push_back(0.0);
  Distribution small;
  for (std::size_t i = 0; i < 1000; ++i) small.add(values[i]);
  REQUIRE(small.exact());
  CHECK(small.quantile_error() == 0);
  for (double p : {0.01, 0.5, 0.9, 0.99, 1.0}) {
    const std::vector<double> first(values.begin(), values.begin() + 1000);
    CHECK(small.quantile(p) == nearest_rank(first, p));
  }

  Distribution forward, backward;
  for (double x : values) forward.add(x);
  for (auto it = values.rbegin(); it != values.rend(); ++it) backward.add(*it);
  REQUIRE_FALSE(forward.exact());
  CHECK(forward.count() == values.size());
  CHECK(forward.quantile_error() == Distribution::kSketchError);
  CHECK(forward.max() == *std::max_element(values.begin(), values.end()));
  for (double p : {0.01, 0.05, 0.1, 0.5, 0.9, 0.99, 1.0}) {
    const double exact = nearest_rank(values, p);
    CHECK(std::fabs(forward.quantile(p) - exact) <= Distribution::kSketchError * std::fabs(exact) + 1e-300);
    CHECK(forward.quantile(p) == backward.quantile(p));  // the same buckets, whatever the order
  }
  std::uint64_t counted = 0;
  for (const auto& [x, n] : forward.weighted()) counted += n;
  CHECK(counted == values.size());
  CHECK(forward.weighted().size() < 5000);  // buckets: the range's decades, not the values' number
}

TEST_CASE("merge: shards in any order, spilled or not, give the same sorted file, each seed counted once", "[sweep][results]") {
  // Three shards of 1..300 (every third seed each), written out of order, and a copy of the
  // second: a seed twice with the same result is one seed. Seeds 250..260 are lost.
  std::vector<std::vector<std::uint64_t>> shards(3);
  for (std::uint64_t s = 300; s >= 1; --s)
    if (s < 250 || s > 260) shards[(s - 1) % 3].push_back(s);
  std::vector<std::string> inputs;
  for (std::size_t k = 0; k < 3; ++k)
    inputs.push_back(shard_file("s" + std::to_string(k) + ".jsonl", header("1..300", std::to_string(k + 1) + "/3"), shards[k]));
  inputs.push_back(shard_file("copy.jsonl", header("1..300", "2/3"), shards[1]));
  const std::string base = "/tmp/lic-results-test." + std::to_string(::getpid());

  Merged in_memory, spilled;
  std::vector<std::uint64_t> seen_a, seen_b;
  REQUIRE(merge_results(inputs, base + ".a.jsonl", in_memory, [&](const SeedResult& r) { seen_a.push_back(r.seed); }).empty());
  MergeOptions small;
  small.chunk_bytes = 1000;  // a few lines a run: dozens of runs
  REQUIRE(merge_results(inputs, base + ".b.jsonl", spilled, [&](const SeedResult& r) { seen_b.push_back(r.seed); }, small).empty());
  const std::string a = slurp(base + ".a.jsonl");
  CHECK(a == slurp(base + ".b.jsonl"));
  std::string expected = header_line(header("1..300", "1/1"));
  for (std::uint64_t s = 1; s <= 300; ++s)
    if (s < 250 || s > 260) expected += result_line(result(s));
  CHECK(a == expected);
  CHECK(in_memory.seeds == 289);
  CHECK(seen_a.size() == 289);
  CHECK(seen_b.size() == 289);
  CHECK(in_memory.missing_seeds == 11);
  CHECK(in_memory.missing_gaps == 1);
  REQUIRE(in_memory.missing.size() == 1);
  CHECK(in_memory.missing.front().first == 250);
  CHECK(in_memory.missing.front().last == 260);

  // The same seed with another result in a fourth file: refused, both places named.
  SeedResult other = result(31);
  other.trace_hash = "ffffffffffffffff";
  const std::string clash = base + ".clash.jsonl";
  {
    std::ofstream out(clash, std::ios::binary);
    out << header_line(header("1..300", "1/3")) << result_line(other);
  }
  for (const MergeOptions& o : {MergeOptions{}, small}) {
    Merged m;
    std::vector<std::string> with = inputs;
    with.push_back(clash);
    const std::string error = merge_results(with, base + ".c.jsonl", m, {}, o);
    const auto at = std::find(shards[0].begin(), shards[0].end(), 31) - shards[0].begin() + 2;  // header: line 1
    CHECK(error == clash + ":2: seed 31 has other results (trace_hash ffffffffffffffff) than in " + inputs[0] + ":" +
                       std::to_string(at) + " (trace_hash " + result(31).trace_hash + ")");
  }
  CHECK_FALSE(std::ifstream(base + ".c.jsonl").good());  // nothing written on an error
  for (const std::string& f : inputs) std::remove(f.c_str());
  for (const char* x : {".a.jsonl", ".b.jsonl", ".clash.jsonl"}) std::remove((base + x).c_str());
}

TEST_CASE("json lines: the fast readers answer as nlohmann's DOM does, or decline", "[sweep][results]") {
  // Lines a sweep writes: passing and failing seeds, faults, metrics of both kinds.
  SeedResult r = result(7);
  r.metrics["latency"] = {{0.25, 1e-9, 3e12}, true};
  r.metrics["empty"] = {{}, true};
  r.faults = {{"split", true, 2, 0}, {"loss", false, 0, 0}};
  r.reached = {"restart under one_for_one"};
  r.determinism = "ok";
  r.virtual_time_ns = -5;
  std::vector<std::string> lines = {result_line(result(1)), result_line(result(14)), result_line(r)};
  r.witnesses["converges"] = reports::Witness{1, 2, {"/root/a"}, "why \"quoted\" \\ and\ttab", {3}};
  lines.push_back(result_line(r));  // witnesses: the fast reader declines, the DOM reads it
  // Hand-made: valid JSON the fast readers read or decline, and JSON that is not valid.
  const std::vector<std::string> hand = {
      R"({"seed":1,"passed":true,"trace_hash":"x","events":2,"virtual_time_ns":3,"failed":[],"determinism":null})",
      R"( { "seed" : 1 , "passed":false,"trace_hash":"a\nb\/c","events":0,"virtual_time_ns":-0,"failed":["x"],"determinism":"ok", "metrics":{"m":-1.5e3,"n":[1,2.5,-3]} } )",
      R"({"seed":1,"seed":2,"passed":true,"trace_hash":"x","events":2,"virtual_time_ns":3,"failed":[],"determinism":null})",
      R"({"seed":18446744073709551616,"passed":true,"trace_hash":"x","events":2,"virtual_time_ns":3,"failed":[],"determinism":null})",
      R"({"seed":1,"passed":true,"trace_hash":"\u00e9","events":2,"virtual_time_ns":3,"failed":[],"determinism":null})",
      R"({"seed":1,"passed":true,"trace_hash":"x","events":2,"virtual_time_ns":9223372036854775808,"failed":[],"determinism":null})",
      R"({"seed":1,"passed":true,"trace_hash":"x","events":2.0,"virtual_time_ns":3,"failed":[],"determinism":null})",
      R"({"seed":1,"passed":true,"trace_hash":"x","events":2,"virtual_time_ns":3,"failed":[],"determinism":null,"metrics":{"m":1,"m":2}})",
      R"({"seed":1,"passed":true,"trace_hash":"x","events":2,"virtual_time_ns":3,"failed":[],"determinism":null,"new_field":[{}]})",
      R"({"seed":01,"passed":true})", R"({"seed":1,})", R"([1e400])", R"([-1e-400, -0, 1.0E+2, 18446744073709551616, -9223372036854775809, "\b\f\r\t"])", "{\"a\":\"\x01\"}",
      "\"caf\xc3\xa9\"", R"({"a":[[[[[[[[]]]]]]]]})", R"(nul)", R"(1 2)", R"({"a" 1})", "",
  };
  lines.insert(lines.end(), hand.begin(), hand.end());
  std::size_t fast_results = 0, fast_json = 0;
  for (const std::string& line : lines) {
    const std::string text = !line.empty() && line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
    INFO(text);
    const nlohmann::json dom = nlohmann::json::parse(text, nullptr, false);
    if (const std::optional<nlohmann::json> fast = parse_json_line(text)) {
      ++fast_json;
      REQUIRE_FALSE(dom.is_discarded());
      CHECK(identical_json(*fast, dom));
    }
    if (const std::optional<SeedResult> fast = read_result_line(text)) {
      ++fast_results;
      const std::optional<SeedResult> slow = read_result_json(text);
      REQUIRE(slow);
      CHECK(*fast == *slow);
    }
  }
  CHECK(fast_results == 5);  // the three sweep lines without witnesses, the first two hand-made
  CHECK(fast_json >= 10);
  // What the fast reader declines is read all the same: a witness line, by the DOM.
  const std::optional<SeedResult> with_witness = read_result_json(lines[3].substr(0, lines[3].size() - 1));
  REQUIRE(with_witness);
  CHECK(with_witness->witnesses.at("converges").why == "why \"quoted\" \\ and\ttab");
}
