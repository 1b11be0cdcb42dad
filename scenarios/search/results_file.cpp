#include "scenarios/search/results_file.hpp"

#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "reports/atomic_file.hpp"
#include "reports/metrics_json.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/report.hpp"
#include "sim/rng.hpp"

namespace lic::scenarios {

namespace {

using Json = nlohmann::ordered_json;  // written: the keys in the order a person reads them
// Read: keys in a std::map. An ordered_json object finds a key by a linear search, so a line of
// n keys took n^2 to parse (300,000 metric names: minutes; issue 34); a merge writes each line
// back as it was read, so nothing needs the order.
using In = nlohmann::json;

/// The most metrics a seed result line may name.
constexpr std::size_t kMaxLineMetrics = 10000;

/// One line of the file: compact, and never throwing on text that is not UTF-8 (a path, an
/// exception's message).
std::string dump_line(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"; }

Json header_json(const SweepHeader& h) {
  Json j;
  j["kind"] = "letitcrash_sweep";
  j["version"] = h.version;
  j["scenario"] = h.scenario;
  j["file"] = h.file;
  j["seeds"] = h.seeds;
  j["shard"] = h.shard;
  j["tie_break"] = h.tie_break;
  j["until_ns"] = h.until_ns ? Json(*h.until_ns) : Json(nullptr);
  j["check_determinism"] = h.check_determinism;
  j["scenario_hash"] = h.scenario_hash;
  j["swarm"] = h.swarm;
  return j;
}

std::optional<SweepHeader> read_header(const In& j) {
  // `value` throws when the key holds another type: every field is looked at before it is read.
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string() || j["kind"].get<std::string>() != "letitcrash_sweep")
    return std::nullopt;
  for (const char* k : {"scenario", "file", "seeds", "shard", "tie_break", "scenario_hash"})
    if (!j.contains(k) || !j[k].is_string()) return std::nullopt;
  if (!j.contains("check_determinism") || !j["check_determinism"].is_boolean()) return std::nullopt;
  SweepHeader h;
  h.version = j.contains("version") && j["version"].is_string() ? j["version"].get<std::string>() : "";
  h.scenario = j["scenario"].get<std::string>();
  h.file = j["file"].get<std::string>();
  h.seeds = j["seeds"].get<std::string>();
  h.shard = j["shard"].get<std::string>();
  h.tie_break = j["tie_break"].get<std::string>();
  h.check_determinism = j["check_determinism"].get<bool>();
  h.scenario_hash = j["scenario_hash"].get<std::string>();
  if (j.contains("until_ns") && j["until_ns"].is_number_integer()) h.until_ns = j["until_ns"].get<std::int64_t>();
  h.swarm = j.contains("swarm") && j["swarm"].is_boolean() && j["swarm"].get<bool>();  // absent: written before swarm mode
  return h;
}

Json swarm_json(const SwarmChoice& c) {
  Json knobs = Json::object();
  for (const auto& [k, v] : c.knobs) knobs[k] = v;
  return {{"on", c.on}, {"off", c.off}, {"knobs", knobs}, {"tie_break", std::string(to_string(c.tie_break))}, {"buggify", c.buggify}};
}

bool strings(const In& j, std::vector<std::string>& out) {
  if (!j.is_array()) return false;
  for (const In& x : j) {
    if (!x.is_string()) return false;
    out.push_back(x.get<std::string>());
  }
  return true;
}

std::optional<SwarmChoice> read_swarm(const In& j) {
  SwarmChoice c;
  if (!j.is_object() || !strings(j.value("on", In()), c.on) || !strings(j.value("off", In()), c.off) ||
      !strings(j.value("buggify", In()), c.buggify) || !j.contains("knobs") || !j["knobs"].is_object() ||
      !j.contains("tie_break") || !j["tie_break"].is_string() || !parse_tie_break(j["tie_break"].get<std::string>(), c.tie_break))
    return std::nullopt;
  for (const auto& [k, v] : j["knobs"].items()) {
    if (!v.is_string()) return std::nullopt;
    c.knobs.emplace_back(k, v.get<std::string>());
  }
  return c;
}

bool read_faults_used(const In& j, std::vector<FaultUse>& out) {
  if (!j.is_array()) return false;
  for (const In& f : j) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("on") || !f["on"].is_boolean() ||
        !f.contains("injected") || !f["injected"].is_number_unsigned() || !f.contains("skipped") || !f["skipped"].is_number_unsigned())
      return false;
    out.push_back({f["name"].get<std::string>(), f["on"].get<bool>(), f["injected"].get<std::uint64_t>(), f["skipped"].get<std::uint64_t>()});
  }
  return true;
}

bool read_points(const In& j, std::map<std::string, PointUse>& out) {
  if (!j.is_object()) return false;
  for (const auto& [name, p] : j.items()) {
    if (!p.is_object() || !p.contains("asked") || !p["asked"].is_number_unsigned() || !p.contains("fired") || !p["fired"].is_number_unsigned())
      return false;
    out[name] = PointUse{p["asked"].get<std::uint64_t>(), p["fired"].get<std::uint64_t>()};
  }
  return true;
}

/// `witnesses`: {check: {t_ns, event, processes, why, related?}} (lines written before it have none).
bool read_witnesses(const In& j, std::map<std::string, reports::Witness>& out) {
  if (!j.is_object()) return false;
  for (const auto& [name, w] : j.items()) {
    reports::Witness x;
    if (!w.is_object() || !w.contains("t_ns") || !w["t_ns"].is_number_integer() || !w.contains("event") ||
        !w["event"].is_number_unsigned() || !w.contains("why") || !w["why"].is_string() || !w.contains("processes") ||
        !strings(w["processes"], x.processes))
      return false;
    x.t_ns = w["t_ns"].get<std::int64_t>();
    x.event = w["event"].get<std::uint64_t>();
    x.why = w["why"].get<std::string>();
    if (w.contains("related")) {
      if (!w["related"].is_array()) return false;
      for (const auto& e : w["related"]) {
        if (!e.is_number_unsigned()) return false;
        x.related.push_back(e.get<std::uint64_t>());
      }
    }
    out.emplace(name, std::move(x));
  }
  return true;
}

Json witness_json(const reports::Witness& w) {
  Json j{{"t_ns", w.t_ns}, {"event", w.event}, {"processes", w.processes}, {"why", w.why}};
  if (!w.related.empty()) j["related"] = w.related;
  return j;
}

/// What the run exercised (its swarm choice and coverage): each optional, as lines written
/// before they existed have none of them.
bool read_exercised(const In& j, SeedResult& r) {
  if (j.contains("swarm") && !j["swarm"].is_null() && !(r.swarm = read_swarm(j["swarm"]))) return false;
  if (j.contains("faults") && !read_faults_used(j["faults"], r.faults)) return false;
  if (j.contains("buggify") && !read_points(j["buggify"], r.buggify)) return false;
  if (j.contains("reached") && !strings(j["reached"], r.reached)) return false;
  return !j.contains("judged") || strings(j["judged"], r.judged);
}

std::optional<SeedResult> read_result(const In& j) {
  if (!j.is_object()) return std::nullopt;
  const auto has = [&](const char* k, bool (In::*is)() const noexcept) { return j.contains(k) && (j[k].*is)(); };
  if (!has("seed", &In::is_number_unsigned) || !has("passed", &In::is_boolean) ||
      !has("trace_hash", &In::is_string) || !has("events", &In::is_number_unsigned) ||
      !has("virtual_time_ns", &In::is_number_integer) || !has("failed", &In::is_array) ||
      !j.contains("determinism") || !(j["determinism"].is_null() || j["determinism"].is_string()))
    return std::nullopt;
  SeedResult r;
  r.seed = j["seed"].get<std::uint64_t>();
  r.passed = j["passed"].get<bool>();
  r.trace_hash = j["trace_hash"].get<std::string>();
  r.events = j["events"].get<std::uint64_t>();
  r.virtual_time_ns = j["virtual_time_ns"].get<std::int64_t>();
  for (const In& f : j["failed"]) {
    if (!f.is_string()) return std::nullopt;
    r.failed.push_back(f.get<std::string>());
  }
  if (j["determinism"].is_string()) r.determinism = j["determinism"].get<std::string>();
  if (j.contains("metrics") && !reports::read_metrics(j["metrics"], r.metrics)) return std::nullopt;
  if (!read_exercised(j, r)) return std::nullopt;
  if (j.contains("witnesses") && !read_witnesses(j["witnesses"], r.witnesses)) return std::nullopt;
  return r;
}

std::string errno_text(const std::string& what, const std::string& path) {
  return fmt::format("cannot {} {}: {}", what, path, std::strerror(errno));
}

}  // namespace

SweepHeader make_sweep_header(const Scenario& s, const std::string& file, const SeedRange& seeds, const Shard& shard,
                              TieBreak tie, const std::optional<Time>& until, bool check_determinism, bool swarm) {
  SweepHeader h;
  h.version = std::string(version());
  h.scenario = s.name;
  h.file = file;
  h.seeds = to_string(seeds);
  h.shard = to_string(shard);
  h.tie_break = std::string(to_string(tie));
  if (until) h.until_ns = until->ns;
  h.check_determinism = check_determinism;
  h.swarm = swarm;
  h.scenario_hash = hash_hex(stable_hash(to_yaml(s)));
  return h;
}

std::string header_difference(const SweepHeader& a, const std::string& a_name, const SweepHeader& b,
                              const std::string& b_name, bool compare_shard) {
  const auto until = [](const SweepHeader& h) {
    return h.until_ns ? format_duration(Duration{*h.until_ns}) : std::string("none");
  };
  const auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    return fmt::format("{} {} in {}, {} in {}", what, x, a_name, y, b_name);
  };
  if (a.scenario_hash != b.scenario_hash)
    return differ("the scenario differs: scenario_hash", a.scenario_hash, b.scenario_hash);
  if (a.seeds != b.seeds) return differ("seeds", a.seeds, b.seeds);
  if (compare_shard && a.shard != b.shard) return differ("shard", a.shard, b.shard);
  if (a.tie_break != b.tie_break) return differ("tie-break", a.tie_break, b.tie_break);
  if (a.until_ns != b.until_ns) return differ("--until", until(a), until(b));
  if (a.swarm != b.swarm) return differ("--swarm", a.swarm ? "on" : "off", b.swarm ? "on" : "off");
  if (a.check_determinism != b.check_determinism)
    return differ("--check-determinism", a.check_determinism ? "on" : "off", b.check_determinism ? "on" : "off");
  return {};
}

std::string header_line(const SweepHeader& h) { return dump_line(header_json(h)); }

std::string result_line(const SeedResult& r) {
  Json j;
  j["seed"] = r.seed;
  j["passed"] = r.passed;
  j["trace_hash"] = r.trace_hash;
  j["events"] = r.events;
  j["virtual_time_ns"] = r.virtual_time_ns;
  j["failed"] = r.failed;
  if (!r.witnesses.empty()) {
    j["witnesses"] = Json::object();
    for (const auto& [name, w] : r.witnesses) j["witnesses"][name] = witness_json(w);
  }
  j["determinism"] = r.determinism ? Json(*r.determinism) : Json(nullptr);
  if (!r.metrics.empty()) j["metrics"] = reports::metrics_json(r.metrics);
  if (r.swarm) j["swarm"] = swarm_json(*r.swarm);
  if (!r.faults.empty()) {
    j["faults"] = Json::array();
    for (const FaultUse& f : r.faults) j["faults"].push_back({{"name", f.name}, {"on", f.on}, {"injected", f.injected}, {"skipped", f.skipped}});
  }
  if (!r.buggify.empty()) {
    j["buggify"] = Json::object();
    for (const auto& [name, p] : r.buggify) j["buggify"][name] = {{"asked", p.asked}, {"fired", p.fired}};
  }
  j["reached"] = r.reached;
  j["judged"] = r.judged;
  return dump_line(j);
}

// ---- reading ----------------------------------------------------------------------------------

ResultsReader::ResultsReader(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
  if (!in_) return;
  exists_ = true;
  std::string line;
  if (!std::getline(in_, line)) return;  // empty: a sweep can start it
  empty_ = false;
  const In j = In::parse(line, nullptr, false);
  const std::optional<SweepHeader> h = in_.eof() || j.is_discarded() ? std::nullopt : read_header(j);
  if (!h) error_ = fmt::format("{}:1: not a sweep results file (its first line is the header `sweep --out` writes)", path_);
  else header_ = *h;
  offset_ = line.size() + 1;
}

std::optional<SeedResult> ResultsReader::next() {
  std::string text;
  if (!error_.empty() || empty_ || !std::getline(in_, text)) return std::nullopt;
  ++line_;
  const bool whole = !in_.eof();
  const In j = whole ? In::parse(text, nullptr, false) : In();
  // A run reports tens of metrics; a line with more than kMaxLineMetrics is not one a sweep wrote,
  // and the pages and summaries built from it would take minutes (issue 34).
  if (whole && j.is_object() && j.contains("metrics") && j["metrics"].is_object() && j["metrics"].size() > kMaxLineMetrics) {
    error_ = fmt::format("{}:{}: names {} metrics, more than the {} a seed result may hold", path_, line_, j["metrics"].size(),
                         kMaxLineMetrics);
    return std::nullopt;
  }
  std::optional<SeedResult> r = whole && !j.is_discarded() ? read_result(j) : std::nullopt;
  if (r) r->line = text + "\n";
  // Torn: a last line with no newline, cut short as the sweep stopped (the writer writes a line
  // and its newline at once). A whole line that does not read is a mistake, last or not: it is
  // said, never dropped (issue 34: it was called torn, and a resume cut it off the file).
  if (!r && !whole) torn_at_ = offset_;
  else if (!r) error_ = fmt::format("{}:{}: not a seed result line", path_, line_);
  offset_ += text.size() + 1;
  return r;
}

// ---- writing ----------------------------------------------------------------------------------

ResultsWriter::~ResultsWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

std::string ResultsWriter::resume(ResultsReader& rf, const SweepHeader& want, const SeedRange& range,
                                  const Shard& shard, std::vector<std::string>& notes) {
  if (const std::string d = header_difference(rf.header(), path_, want, "this sweep", true); !d.empty())
    return fmt::format("{}:1: holds the results of another sweep ({})", path_, d);
  std::vector<std::pair<std::uint64_t, std::size_t>> lines;  // seed, line: to name duplicates
  while (const std::optional<SeedResult> r = rf.next()) {
    if (!in_shard(r->seed, range, shard))
      return fmt::format("{}:{}: seed {} is not in seeds {} shard {}", path_, rf.line(), r->seed, want.seeds, want.shard);
    lines.emplace_back(r->seed, rf.line());
    resumed_.push_back(*r);
  }
  if (!rf.error().empty()) return rf.error();
  std::sort(lines.begin(), lines.end());
  for (std::size_t i = 1; i < lines.size(); ++i)
    if (lines[i].first == lines[i - 1].first)  // two sweeps wrote the file at once, before the lock
      return fmt::format("{}:{}: seed {} is there twice (line {} too)", path_, lines[i].second, lines[i].first,
                         lines[i - 1].second);
  if (rf.torn_at()) {
    if (ftruncate(fileno(f_), static_cast<off_t>(*rf.torn_at())) != 0) return errno_text("truncate", path_);
    notes.push_back(fmt::format("{}:{}: dropped a torn last line (a result cut short when the sweep stopped)", path_, rf.line()));
  }
  for (const auto& [seed, line] : lines) done_.push_back(seed);
  resuming_ = true;
  return {};
}

std::string ResultsWriter::open(const std::string& path, const SweepHeader& want, const SeedRange& range,
                                const Shard& shard, bool fresh, std::vector<std::string>& notes) {
  path_ = path;
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  f_ = std::fopen(path.c_str(), "ab");  // appends go to the end, also after a truncation
  if (f_ == nullptr) return errno_text("write", path);
  std::string error;
  if (flock(fileno(f_), LOCK_EX | LOCK_NB) != 0) {
    error = fmt::format("{}: another sweep is writing it", path);
  } else if (fresh && ftruncate(fileno(f_), 0) != 0) {
    error = errno_text("truncate", path);
  } else if (ResultsReader rf(path); !rf.empty()) {
    error = !rf.error().empty() ? rf.error() : resume(rf, want, range, shard, notes);
    if (!error.empty()) error += "; pass --fresh to start over, or choose another --out";
  } else if (const std::string header = header_line(want);
             std::fwrite(header.data(), 1, header.size(), f_) != header.size() || std::fflush(f_) != 0) {
    error = errno_text("write", path);
  }
  if (!error.empty()) {
    std::fclose(f_);
    f_ = nullptr;
  }
  return error;
}

std::string ResultsWriter::append(const SeedResult& r) {
  const std::string line = result_line(r);
  // Flushed one by one: a killed sweep keeps every seed it finished.
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0)
    return errno_text("write", path_);
  return {};
}

std::string ResultsWriter::close() {
  std::FILE* f = f_;
  f_ = nullptr;
  if (f != nullptr && std::fclose(f) != 0) return errno_text("write", path_);
  return {};
}

// ---- merging ----------------------------------------------------------------------------------

namespace {

/// Adds one input's seeds; returns an error naming the file and line, empty when they fit.
std::string gather(ResultsReader& rf, const std::string& in, Merged& m, std::map<std::uint64_t, std::string>& origin) {
  while (const std::optional<SeedResult> r = rf.next()) {
    if (r->seed < m.range.first || r->seed > m.range.last)
      return fmt::format("{}:{}: seed {} is outside the sweep's seeds {}", in, rf.line(), r->seed, m.header.seeds);
    const auto [it, added] = m.seeds.emplace(r->seed, *r);
    if (added) origin[r->seed] = in;
    else if (!(it->second == *r))
      return fmt::format("{}:{}: seed {} has other results (trace_hash {}) than in {} (trace_hash {})", in, rf.line(),
                         r->seed, r->trace_hash, origin[r->seed], it->second.trace_hash);
  }
  if (!rf.error().empty()) return rf.error();
  if (rf.torn_at()) m.notes.push_back(fmt::format("{}:{}: ignoring a torn last line", in, rf.line()));
  return {};
}

}  // namespace

std::string merge_results(const std::vector<std::string>& inputs, Merged& m) {
  if (inputs.empty()) return "give the shards' results files to join";
  std::map<std::uint64_t, std::string> origin;  // which input each seed came from
  for (const std::string& in : inputs) {
    ResultsReader rf(in);
    if (!rf.exists()) return "cannot read " + in;
    if (rf.empty()) return in + ": empty, not a sweep results file";
    if (!rf.error().empty()) return rf.error();
    if (&in == &inputs.front()) {
      m.header = rf.header();
      if (const std::string e = parse_seed_range(m.header.seeds, m.range); !e.empty()) return in + ":1: " + e;
    } else if (const std::string d = header_difference(rf.header(), in, m.header, inputs.front(), false); !d.empty()) {
      return fmt::format("{} is not a shard of the same sweep as {} ({})", in, inputs.front(), d);
    }
    if (const std::string e = gather(rf, in, m, origin); !e.empty()) return e;
  }
  m.header.shard = "1/1";  // the merged file reads as one unsharded sweep
  return {};
}

std::string write_merged(const Merged& m, const std::string& path) {
  std::string text = header_line(m.header);
  for (const auto& [seed, r] : m.seeds) text += r.line.empty() ? result_line(r) : r.line;
  return reports::write_file_atomically(path, text);
}

std::string summary_path(const std::string& results) {
  const std::string ext = ".jsonl";
  if (results.size() > ext.size() && results.compare(results.size() - ext.size(), ext.size(), ext) == 0)
    return results.substr(0, results.size() - ext.size()) + ".summary.json";
  return results + ".summary.json";
}

std::string write_summary(const std::string& path, const SweepHeader& h, std::uint64_t seeds, std::uint64_t passed,
                          std::uint64_t failed, const MetricSummary& metrics, const std::string& coverage) {
  Json j;
  j["kind"] = "letitcrash_sweep_summary";
  j["sweep"] = header_json(h);
  j["seeds"] = seeds;
  j["passed"] = passed;
  j["failed"] = failed;
  Json m = Json::object();
  for (const auto& [name, dist] : metrics.by_name()) {
    // No value over every run (a list metric that stayed empty): no quantiles, null.
    const auto& d = dist;  // (clang 14 cannot capture a structured binding)
    const auto q = [&d](double p) { return d.values.empty() ? Json() : Json(d.quantile(p)); };
    m[name] = {{"runs", d.runs}, {"values", d.values.size()}, {"p50", q(0.5)},
               {"p90", q(0.9)},  {"p99", q(0.99)},            {"max", d.values.empty() ? Json() : Json(d.max())}};
  }
  j["metrics"] = std::move(m);
  if (!coverage.empty()) j["coverage"] = Json::parse(coverage);
  return reports::write_file_atomically(path, j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

std::vector<SeedRange> gaps(const SeedRange& r, const std::map<std::uint64_t, SeedResult>& present) {
  std::vector<SeedRange> out;
  std::uint64_t next = r.first;  // the first seed not yet accounted for
  bool done = false;
  for (const auto& [seed, res] : present) {
    if (seed > next) out.push_back({next, seed - 1});
    if (seed == r.last) done = true;
    else next = seed + 1;
  }
  if (!done) out.push_back({next, r.last});
  return out;
}

}  // namespace lic::scenarios
