#include "scenarios/search/results_file.hpp"

#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <queue>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <nlohmann/json.hpp>

#include "reports/atomic_file.hpp"
#include "reports/metrics_json.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/search/json_line.hpp"
#include "scenarios/run/report.hpp"
#include "sim/rng.hpp"

namespace lic::scenarios {

namespace {

using Json = nlohmann::ordered_json;  // written: the keys in the order a person reads them
// Read: keys in a std::map. An ordered_json object finds a key by a linear search, so a line of
// n keys took n^2 to parse (300,000 metric names: minutes; issue 34); a merge writes each line
// back as it was read, so nothing needs the order.
using In = nlohmann::json;

/// A line's JSON: the fast reader's where it answers, nlohmann's parser (discarded when the line
/// is not JSON) where it declines; the same value either way (search/json_line.hpp).
In parse_line(const std::string& text) {
  if (std::optional<In> j = parse_json_line(text)) return std::move(*j);
  return In::parse(text, nullptr, false);
}

/// The most metrics a seed result line may name.
constexpr std::size_t kMaxLineMetrics = 10000;

/// How many metrics a seed line's JSON names (0 when it has no `metrics` object).
std::size_t metrics_named(const In& j) {
  return j.is_object() && j.contains("metrics") && j["metrics"].is_object() ? j["metrics"].size() : 0;
}

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

}  // namespace

std::optional<SeedResult> read_result_json(std::string_view text) {
  const In j = In::parse(text, nullptr, false);
  if (j.is_discarded() || metrics_named(j) > kMaxLineMetrics) return std::nullopt;
  return read_result(j);
}

namespace {

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
  // Another letitcrash may run the same file to other traces: its results do not mix with these.
  if (a.version != b.version)
    return differ("letitcrash version", a.version.empty() ? "(none)" : a.version, b.version.empty() ? "(none)" : b.version);
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
  const In j = parse_line(line);
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
  // Most lines: read straight into the result, no DOM (search/json_line.hpp); the rest below.
  if (whole) {
    if (std::optional<SeedResult> r = read_result_line(text)) {
      r->line = text + "\n";
      offset_ += text.size() + 1;
      return r;
    }
  }
  const In j = whole ? parse_line(text) : In();
  // A run reports tens of metrics; a line with more than kMaxLineMetrics is not one a sweep wrote,
  // and the pages and summaries built from it would take minutes (issue 34).
  if (whole && metrics_named(j) > kMaxLineMetrics) {
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

/// One seed's line of an input: where it came from, for the errors that name it.
struct Entry {
  std::uint64_t seed = 0;
  std::uint32_t input = 0;
  std::uint64_t line = 0;
  std::size_t offset = 0;  // in the chunk's text
  std::size_t size = 0;
};

/// What a spilled run holds per line, before the line's bytes.
struct SpillHead {
  std::uint64_t seed;
  std::uint64_t line;
  std::uint32_t input;
  std::uint32_t size;
};

/// Lines read and not yet spilled, sorted by (seed, input, line) when full.
struct Chunk {
  std::string text;
  std::vector<Entry> entries;
  void sort() {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.seed, a.input, a.line) < std::tie(b.seed, b.input, b.line);
    });
  }
};

/// A temporary file with no name: unlinked as soon as it is made, so it goes when it is closed
/// or the process ends, however that happens.
std::FILE* anonymous_file(std::string& error) {
  const char* dir = std::getenv("TMPDIR");
  std::string templ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/letitcrash-merge.XXXXXX";
  const int fd = mkstemp(templ.data());
  if (fd < 0) {
    error = errno_text("create a temporary file in", templ.substr(0, templ.rfind('/')));
    return nullptr;
  }
  ::unlink(templ.c_str());
  std::FILE* f = fdopen(fd, "w+b");
  if (f == nullptr) {
    ::close(fd);
    error = errno_text("open", templ);
  }
  return f;
}

/// A sorted run of lines: the last chunk in memory, or a spilled one read back in order.
class Run {
 public:
  explicit Run(Chunk* mem) : mem_(mem) {}
  explicit Run(std::FILE* f) : file_(f) { std::rewind(f); }
  Run(Run&& o) noexcept : mem_(o.mem_), at_(o.at_), file_(o.file_), head(o.head), text(std::move(o.text)) { o.file_ = nullptr; }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  Run& operator=(Run&&) = delete;
  ~Run() {
    if (file_ != nullptr) std::fclose(file_);
  }
  /// Moves to the next line; false at the end.
  bool next() {
    if (mem_ != nullptr) {
      if (at_ == mem_->entries.size()) return false;
      const Entry& e = mem_->entries[at_++];
      head = {e.seed, e.line, e.input, static_cast<std::uint32_t>(e.size)};
      text.assign(mem_->text, e.offset, e.size);
      return true;
    }
    if (std::fread(&head, sizeof head, 1, file_) != 1) return false;
    text.resize(head.size);
    return head.size == 0 || std::fread(text.data(), 1, head.size, file_) == head.size;
  }

 private:
  Chunk* mem_ = nullptr;
  std::size_t at_ = 0;
  std::FILE* file_ = nullptr;

 public:
  SpillHead head{};
  std::string text;
};

/// Which seeds of the range were seen: a bit a seed for ranges up to 2^28 seeds (32 MiB), a
/// set of those present beyond.
class SeenSeeds {
 public:
  explicit SeenSeeds(const SeedRange& r) : first_(r.first) {
    const std::uint64_t size = r.last - r.first;  // one less than the count: no overflow
    if (size < (std::uint64_t{1} << 28)) bits_.assign(size / 64 + 1, 0);
  }
  /// Marks `seed`; false when it was marked already.
  bool insert(std::uint64_t seed) {
    if (bits_.empty()) return set_.insert(seed).second;
    const std::uint64_t i = seed - first_;
    std::uint64_t& word = bits_[i / 64];
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    if ((word & bit) != 0) return false;
    word |= bit;
    return true;
  }

 private:
  std::uint64_t first_;
  std::vector<std::uint64_t> bits_;
  std::unordered_set<std::uint64_t> set_;  // membership only: never iterated
};

/// The state of one merge: the runs made so far and the chunk being filled.
struct Merger {
  const std::vector<std::string>& inputs;
  Merged& m;
  const std::function<void(const SeedResult&)>& each;
  const MergeOptions& options;
  Chunk chunk;
  std::vector<std::FILE*> spilled;
  SeenSeeds seen;

  Merger(const std::vector<std::string>& in, Merged& out, const std::function<void(const SeedResult&)>& e,
         const MergeOptions& o)
      : inputs(in), m(out), each(e), options(o), seen(out.range) {}
  Merger(const Merger&) = delete;
  Merger& operator=(const Merger&) = delete;
  ~Merger() {
    for (std::FILE* f : spilled) std::fclose(f);
  }

  std::string spill() {
    chunk.sort();
    std::string error;
    std::FILE* f = anonymous_file(error);
    if (f == nullptr) return error;
    spilled.push_back(f);
    for (const Entry& e : chunk.entries) {
      const SpillHead h{e.seed, e.line, e.input, static_cast<std::uint32_t>(e.size)};
      if (std::fwrite(&h, sizeof h, 1, f) != 1 || std::fwrite(chunk.text.data() + e.offset, 1, e.size, f) != e.size)
        return errno_text("write a temporary file for", inputs.front());
    }
    if (std::fflush(f) != 0) return errno_text("write a temporary file for", inputs.front());
    chunk.text.clear();
    chunk.entries.clear();
    return {};
  }

  /// Files one result read from input `index` at `line`.
  std::string file(SeedResult& r, std::uint32_t index, std::uint64_t line) {
    if (r.seed < m.range.first || r.seed > m.range.last)
      return fmt::format("{}:{}: seed {} is outside the sweep's seeds {}", inputs[index], line, r.seed, m.header.seeds);
    if (seen.insert(r.seed) && each) each(r);
    chunk.entries.push_back({r.seed, index, line, chunk.text.size(), r.line.size()});
    chunk.text += r.line;
    if (chunk.text.size() >= options.chunk_bytes) return spill();
    return {};
  }

  /// Reads every input into the runs, in input order.
  std::string read_all() {
    for (std::uint32_t i = 0; i < inputs.size(); ++i) {
      ResultsReader rf(inputs[i]);
      while (std::optional<SeedResult> r = rf.next())
        if (std::string e = file(*r, i, rf.line()); !e.empty()) return e;
      if (!rf.error().empty()) return rf.error();
      if (rf.torn_at()) m.notes.push_back(fmt::format("{}:{}: ignoring a torn last line", inputs[i], rf.line()));
    }
    return {};
  }

  void note_gap(std::uint64_t first, std::uint64_t last) {
    m.missing_seeds += last - first + 1;
    ++m.missing_gaps;
    if (m.missing.size() < Merged::kGapsKept) m.missing.push_back({first, last});
  }

  /// The runs merged into `path`: each seed once, in order.
  std::string write(const std::string& path) {
    std::vector<Run> runs;
    if (spilled.empty()) {
      chunk.sort();
      runs.emplace_back(&chunk);
    } else {
      if (!chunk.entries.empty())
        if (std::string e = spill(); !e.empty()) return e;
      for (std::FILE*& f : spilled) runs.emplace_back(std::exchange(f, nullptr));
      spilled.clear();
    }
    using Key = std::tuple<std::uint64_t, std::uint32_t, std::uint64_t, std::size_t>;  // seed, input, line, run
    std::priority_queue<Key, std::vector<Key>, std::greater<>> heads;
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (runs[i].next()) heads.emplace(runs[i].head.seed, runs[i].head.input, runs[i].head.line, i);
    reports::AtomicFileWriter out(path);
    out.write(header_line(m.header));
    std::optional<SpillHead> last;
    std::string last_text;
    std::uint64_t next = m.range.first;  // the first seed not yet accounted for
    bool done = false;
    while (!heads.empty()) {
      const std::size_t at = std::get<3>(heads.top());
      Run& run = runs[at];
      heads.pop();
      const SpillHead h = run.head;
      if (last && last->seed == h.seed) {
        if (run.text != last_text) {
          // The same results written otherwise (another writer's field order): compared as results.
          const std::optional<SeedResult> x = read_result_json(run.text), y = read_result_json(last_text);
          if (!x || !y || !(*x == *y))
            return fmt::format("{}:{}: seed {} has other results (trace_hash {}) than in {}:{} (trace_hash {})", inputs[h.input],
                               h.line, h.seed, x ? x->trace_hash : "?", inputs[last->input], last->line,
                               y ? y->trace_hash : "?");
        }
      } else {
        if (h.seed > next) note_gap(next, h.seed - 1);
        if (h.seed == m.range.last) done = true;
        else next = h.seed + 1;
        ++m.seeds;
        out.write(run.text);
        last = h;
        last_text = run.text;
      }
      if (run.next()) heads.emplace(run.head.seed, run.head.input, run.head.line, at);
    }
    if (!done) note_gap(next, m.range.last);
    return out.commit();
  }
};

}  // namespace

std::string merge_headers(const std::vector<std::string>& inputs, Merged& m) {
  if (inputs.empty()) return "give the shards' results files to join";
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
  }
  m.header.shard = "1/1";  // the merged file reads as one unsharded sweep
  return {};
}

std::string merge_results(const std::vector<std::string>& inputs, const std::string& path, Merged& m,
                          const std::function<void(const SeedResult&)>& each, const MergeOptions& options) {
  if (std::string e = merge_headers(inputs, m); !e.empty()) return e;
  if (inputs.size() > std::numeric_limits<std::uint32_t>::max()) return "too many results files to merge at once";
  Merger merger(inputs, m, each, options);
  if (std::string e = merger.read_all(); !e.empty()) return e;
  return merger.write(path);
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
    const auto q = [&d](double p) { return d.empty() ? Json() : Json(d.quantile(p)); };
    m[name] = {{"runs", d.runs}, {"values", d.count()}, {"p50", q(0.5)},
               {"p90", q(0.9)},  {"p99", q(0.99)},       {"max", d.empty() ? Json() : Json(d.max())}};
    // Past Distribution::kExactValues the quantiles come from a sketch: say how far off they may be.
    if (!d.exact()) m[name]["quantile_rel_error"] = d.quantile_error();
  }
  j["metrics"] = std::move(m);
  if (!coverage.empty()) j["coverage"] = Json::parse(coverage);
  return reports::write_file_atomically(path, j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

}  // namespace lic::scenarios
