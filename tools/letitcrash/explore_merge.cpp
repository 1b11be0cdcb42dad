// `merge OUT DIR...` of guided sweeps' shards (docs/explore.md "In CI"): each shard ran its own
// search over its own seeds, so merging is a union -- the corpora (a schedule two shards both
// kept is kept once), the coverage slots, the distinct failures (by identity: check, kind,
// roles), each check's best margin -- with each shard's own figures beside it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "reports/atomic_file.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/run/report.hpp"
#include "scenarios/search/signature.hpp"
#include "scenarios/search/sweep.hpp"
#include "tools/letitcrash/explore.hpp"
#include "tools/letitcrash/explore_page.hpp"

namespace lic::tools {

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

/// One shard's folder and what its explore.json says.
struct Input {
  fs::path dir;
  Json state;
  scenarios::Shard shard;
};

fs::path folder_of(const std::string& path) {
  const fs::path p(path);
  return p.filename() == "explore.json" ? p.parent_path() : p;
}

std::string read_text(const fs::path& p, bool& ok) {
  std::ifstream in(p, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A corpus file's schedule: the file but its first comment line (which says where it was found).
std::string schedule_text(const std::string& text) {
  if (text.rfind("# corpus entry", 0) != 0) return text;
  const std::size_t nl = text.find('\n');
  return nl == std::string::npos ? std::string() : text.substr(nl + 1);
}

/// What in an explore.json is not of the shape a guided sweep writes (a field merge reads with
/// another type), or empty: merge says so rather than stop on a JSON type error.
std::string shape_error(const Json& j) {
  const auto count = [&](const char* k) { return !j.contains(k) || j[k].is_number_unsigned(); };
  for (const char* k : {"runs", "max_runs", "plain_runs", "coverage", "corpus"})
    if (!count(k)) return std::string("`") + k + "` is not a count";
  if (j.contains("cpu_s") && !j["cpu_s"].is_number()) return "`cpu_s` is not a number";
  if (j.contains("runs_to_first_failure") && !j["runs_to_first_failure"].is_null() && !j["runs_to_first_failure"].is_number_unsigned())
    return "`runs_to_first_failure` is not a count";
  for (const char* k : {"slots", "checks", "failures", "corpus_entries"})
    if (j.contains(k) && !j[k].is_array()) return std::string("`") + k + "` is not a list";
  for (const Json& slot : j.value("slots", Json::array()))
    if (!slot.is_number_unsigned() || slot.get<std::uint64_t>() >= scenarios::kSignatureSlots) return "a slot is not one of the map's";
  for (const char* k : {"checks", "failures", "corpus_entries"})
    for (const Json& x : j.value(k, Json::array()))
      if (!x.is_object()) return std::string("an item of `") + k + "` is not an object";
  for (const Json& c : j.value("checks", Json::array()))
    if ((c.contains("guided") && !c["guided"].is_boolean()) || (c.contains("best_margin") && !c["best_margin"].is_null() && !c["best_margin"].is_number()))
      return "a check's `guided` or `best_margin` is of another type";
  for (const Json& f : j.value("failures", Json::array()))
    for (const char* k : {"check", "kind", "reproducer"})
      if (f.contains(k) && !f[k].is_string() && !(std::string_view(k) == "reproducer" && f[k].is_null())) return std::string("a failure's `") + k + "` is not text";
  for (const Json& e : j.value("corpus_entries", Json::array()))
    if (!e.contains("file") || !e["file"].is_string() || (e.contains("run") && !e["run"].is_number_unsigned()))
      return "a corpus entry's `file` or `run` is of another type";
  return {};
}

/// Reads and checks the inputs; returns the reason they do not belong together, empty when they do.
std::string read_inputs(const std::vector<std::string>& paths, std::vector<Input>& inputs) {
  for (const std::string& p : paths) {
    Input in;
    in.dir = folder_of(p);
    bool ok = false;
    const std::string text = read_text(in.dir / "explore.json", ok);
    if (!ok) return fmt::format("{}: no explore.json (is it a `sweep --guided --out` folder?)", in.dir.string());
    in.state = Json::parse(text, nullptr, false);
    if (in.state.is_discarded() || !in.state.is_object() || in.state.value("format", "") != kExploreFormat)
      return fmt::format("{}: explore.json is not one this version reads (format {})", in.dir.string(), kExploreFormat);
    if (in.state.value("version", "") != scenarios::version())
      return fmt::format("{}: made by letitcrash {} (this is {}): shards of different versions are not one search", in.dir.string(),
                         in.state.value("version", "?"), scenarios::version());
    const Json& sw = in.state.contains("sweep") ? in.state["sweep"] : Json();
    if (!sw.is_object())
      return fmt::format("{}: an explore, not a shard of `sweep --guided`: merge joins guided sweeps' shards", in.dir.string());
    if (!sw.contains("seeds") || !sw["seeds"].is_string() || !sw.contains("shard") || !sw["shard"].is_string() ||
        (sw.contains("fixed") && !sw["fixed"].is_boolean()))
      return fmt::format("{}: explore.json's `sweep` is not of the shape a guided sweep writes", in.dir.string());
    if (const std::string e = shape_error(in.state); !e.empty())
      return fmt::format("{}: explore.json is not of the shape a guided sweep writes: {}", in.dir.string(), e);
    if (const std::string e = scenarios::parse_shard(sw.value("shard", ""), in.shard); !e.empty())
      return fmt::format("{}: its shard '{}': {}", in.dir.string(), sw.value("shard", ""), e);
    inputs.push_back(std::move(in));
  }
  const Input& a = inputs.front();
  for (const Input& b : inputs) {
    const auto differs = [&](const char* what, const Json& x, const Json& y) {
      return x == y ? std::string()
                    : fmt::format("{} and {} are not shards of one guided sweep: their {} differ ({} and {})", a.dir.string(), b.dir.string(),
                                  what, x.dump(), y.dump());
    };
    for (const std::string& e : {differs("files", a.state.value("file_hash", Json()), b.state.value("file_hash", Json())),
                                 differs("seed ranges", a.state["sweep"].value("seeds", Json()), b.state["sweep"].value("seeds", Json())),
                                 differs("fixes (--fixed)", a.state["sweep"].value("fixed", Json()), b.state["sweep"].value("fixed", Json())),
                                 differs("runs' budgets (--max-events, --max-memory)", a.state["sweep"].value("budgets", Json()),
                                         b.state["sweep"].value("budgets", Json())),
                                 differs("shard counts", Json(a.shard.count), Json(b.shard.count))})
      if (!e.empty()) return e;
    if (&a != &b && a.shard.index == b.shard.index)
      return fmt::format("{} and {} are both shard {}", a.dir.string(), b.dir.string(), scenarios::to_string(b.shard));
  }
  std::set<std::uint64_t> seen;
  for (const Input& in : inputs)
    if (!seen.insert(in.shard.index).second)
      return fmt::format("shard {} is given twice", scenarios::to_string(in.shard));
  std::sort(inputs.begin(), inputs.end(), [](const Input& x, const Input& y) { return x.shard.index < y.shard.index; });
  return {};
}

struct MergeOut {
  Json state;
  std::vector<std::pair<fs::path, std::string>> files;  ///< relative path, text
  std::size_t duplicates = 0;                           ///< corpus schedules kept by two shards
};

/// Lower of two margins (null: none).
Json least(const Json& a, const Json& b) {
  if (!a.is_number()) return b;
  if (!b.is_number()) return a;
  return a.get<double>() <= b.get<double>() ? a : b;
}

/// The union, shard by shard (in shard order).
class Merger {
 public:
  Merger(const std::vector<Input>& inputs, const fs::path& out, MergeOut& m)
      : inputs_(inputs), out_(out), m_(m), checks_(inputs.front().state.value("checks", Json::array())) {}

  std::string run() {
    header();
    for (const Input& in : inputs_) {
      std::string e = totals(in);
      if (e.empty()) e = failures(in);
      if (e.empty()) e = corpus(in);
      if (!e.empty()) return e;
    }
    finish();
    return {};
  }

 private:
  void header() {
    const Json& first = inputs_.front().state;
    Json& j = m_.state;
    j["format"] = kExploreFormat;
    j["version"] = scenarios::version();
    j["file"] = first.value("file", "");
    j["scenario"] = first.value("scenario", "");
    j["file_hash"] = first.value("file_hash", "");
    const std::uint64_t count = inputs_.front().shard.count;
    // The shards not given: how many, and the first kMissingListed of them (a count of shards can
    // be far more than anyone runs; the inputs are sorted by index).
    constexpr std::size_t kMissingListed = 100;
    Json merged = Json::array(), missing = Json::array();
    std::size_t i = 0;
    for (std::uint64_t k = 1; k <= count && (i < inputs_.size() || missing.size() < kMissingListed); ++k) {
      if (i < inputs_.size() && inputs_[i].shard.index == k) merged.push_back(k), ++i;
      else if (missing.size() < kMissingListed) missing.push_back(k);
      else k = inputs_[i].shard.index - 1;  // skip to the next shard given
    }
    j["sweep"] = {{"seeds", first["sweep"].value("seeds", "")}, {"shard", "merged"},          {"shards", count},
                  {"merged", merged},                           {"missing", missing},         {"missing_count", count - inputs_.size()},
                  {"fixed", first["sweep"].value("fixed", false)}, {"budgets", first["sweep"].value("budgets", Json())}};
  }

  /// The counts, the slots, the checks' margins and the shard's own row.
  std::string totals(const Input& in) {
    const Json& s = in.state;
    runs_ += s.value("runs", std::size_t{0});
    max_runs_ += s.value("max_runs", std::size_t{0});
    plain_ += s.value("plain_runs", std::size_t{0});
    cpu_ += s.value("cpu_s", 0.0);
    nothing_ = nothing_ && s.value("nothing_to_mutate", false);
    const Json rf = s.contains("runs_to_first_failure") ? s["runs_to_first_failure"] : Json();
    if (rf.is_number() && (!first_failure_.is_number() || rf.get<std::size_t>() < first_failure_.get<std::size_t>())) first_failure_ = rf;
    for (const Json& slot : s.value("slots", Json::array()))
      if (slot.is_number_unsigned()) slots_.insert(slot.get<std::uint32_t>());
    const Json theirs = s.value("checks", Json::array());
    if (theirs.size() != checks_.size())
      return fmt::format("{} names {} checks, {} names {}", inputs_.front().dir.string(), checks_.size(), in.dir.string(), theirs.size());
    for (std::size_t c = 0; c < checks_.size(); ++c) {
      checks_[c]["guided"] = checks_[c].value("guided", false) || theirs[c].value("guided", false);
      checks_[c]["best_margin"] = least(checks_[c].value("best_margin", Json()), theirs[c].value("best_margin", Json()));
    }
    shards_.push_back({{"shard", scenarios::to_string(in.shard)},
                       {"folder", in.dir.string()},
                       {"runs", s.value("runs", std::size_t{0})},
                       {"plain_runs", s.value("plain_runs", std::size_t{0})},
                       {"corpus", s.value("corpus", std::size_t{0})},
                       {"coverage", s.value("coverage", std::size_t{0})},
                       {"runs_to_first_failure", rf},
                       {"failures", s.value("failures", Json::array()).size()},
                       {"cpu_s", s.value("cpu_s", 0.0)},
                       {"series", s.value("series", Json::object())}});
    return {};
  }

  /// One failure an identity (check, kind, roles), the first shard's, its reproducer copied.
  std::string failures(const Input& in) {
    for (Json f : in.state.value("failures", Json::array())) {
      const std::string id = Json{f.value("check", ""), f.value("kind", ""), f.value("roles", Json::array())}.dump();
      if (!identities_.insert(id).second) continue;  // the same bug, found by an earlier shard
      f["shard"] = scenarios::to_string(in.shard);
      if (f.contains("reproducer") && f["reproducer"].is_string()) {
        const fs::path from = in.dir / fs::path(f["reproducer"].get<std::string>()).filename();
        bool ok = false;
        const std::string text = read_text(from, ok);
        if (!ok) return fmt::format("{}: its reproducer {} cannot be read", in.dir.string(), from.string());
        const std::string name = failures_.empty() ? "reproducer.yaml" : fmt::format("reproducer-{}.yaml", failures_.size() + 1);
        m_.files.emplace_back(name, text);
        f["reproducer"] = (out_ / name).string();
      }
      failures_.push_back(std::move(f));
    }
    return {};
  }

  /// Every entry, a schedule another shard kept already written once.
  std::string corpus(const Input& in) {
    const std::string shard = scenarios::to_string(in.shard);
    for (Json e : in.state.value("corpus_entries", Json::array())) {
      bool ok = false;
      const std::string text = read_text(in.dir / e.value("file", ""), ok);
      if (!ok) return fmt::format("{}: its corpus file {} cannot be read", in.dir.string(), e.value("file", ""));
      if (!schedules_.insert(schedule_text(text)).second) {
        ++m_.duplicates;
        continue;
      }
      const std::string name = fmt::format("corpus/{:04}.yaml", entries_.size() + 1);
      m_.files.emplace_back(name, fmt::format("# corpus entry {}: shard {}'s {}, found at run {}\n", entries_.size() + 1, shard,
                                              e.value("file", ""), e.value("run", std::size_t{0})) +
                                      schedule_text(text));
      e["file"] = name;
      e["shard"] = shard;
      entries_.push_back(std::move(e));
    }
    return {};
  }

  void finish() {
    Json& j = m_.state;
    j["runs"] = runs_;
    j["max_runs"] = max_runs_;
    j["plain_runs"] = plain_;
    j["runs_to_first_failure"] = first_failure_;
    j["coverage"] = slots_.size();
    j["corpus"] = entries_.size();
    j["cpu_s"] = std::round(cpu_ * 1000) / 1000;
    j["nothing_to_mutate"] = nothing_;
    j["checks"] = checks_;
    j["failures"] = failures_;
    j["failure"] = failures_.empty() ? Json(nullptr) : failures_.front();
    j["reproducer"] = failures_.empty() ? Json(nullptr) : failures_.front().value("reproducer", Json());
    j["corpus_entries"] = entries_;
    j["slots"] = slots_;
    j["shards"] = shards_;
  }

  const std::vector<Input>& inputs_;
  const fs::path& out_;
  MergeOut& m_;
  Json checks_;
  std::size_t runs_ = 0, max_runs_ = 0, plain_ = 0;
  double cpu_ = 0;
  Json first_failure_ = nullptr;
  std::set<std::uint32_t> slots_;
  bool nothing_ = true;
  Json failures_ = Json::array(), entries_ = Json::array(), shards_ = Json::array();
  std::set<std::string> identities_, schedules_;
};

std::string merge_into(const std::vector<Input>& inputs, const fs::path& out, MergeOut& m) { return Merger(inputs, out, m).run(); }

}  // namespace

bool is_explore_output(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (p.filename() == "explore.json") return fs::is_regular_file(p, ec);
  return fs::is_directory(p, ec) && fs::is_regular_file(p / "explore.json", ec);
}

int explore_merge_command(const Invocation& cli, const std::string& out, const std::vector<std::string>& paths) {
  std::vector<Input> inputs;
  if (const std::string e = read_inputs(paths, inputs); !e.empty()) {
    std::fprintf(stderr, "merge: %s\n", scenarios::printable(e).c_str());
    return 2;
  }
  std::error_code ec;
  for (const Input& in : inputs)
    if (fs::exists(out, ec) && fs::equivalent(in.dir, out, ec)) {
      std::fprintf(stderr, "merge: %s is one of the shards: give another folder for the merge\n", scenarios::printable(out).c_str());
      return 2;
    }
  if (out.size() >= 6 && out.ends_with(".jsonl")) {
    std::fprintf(stderr, "merge: %s: guided sweeps merge into a folder (explore.json, index.html, corpus/, reproducers), not a .jsonl file\n",
                 scenarios::printable(out).c_str());
    return 2;
  }
  MergeOut m;
  if (const std::string e = merge_into(inputs, fs::path(out), m); !e.empty()) {
    std::fprintf(stderr, "merge: %s\n", scenarios::printable(e).c_str());
    return 2;
  }
  const Json& j = m.state;
  fs::remove(fs::path(out) / "explore.json", ec);  // an earlier merge's must not stand for this one if it stops on the way
  const std::size_t failures = j["failures"].size();
  if (failures == 0) fs::remove(fs::path(out) / "reproducer.yaml", ec);
  for (std::size_t i = std::max<std::size_t>(failures, 1) + 1; fs::remove(fs::path(out) / fmt::format("reproducer-{}.yaml", i), ec); ++i) {
  }
  // The corpus and reproducers, then the page, then explore.json (last: a folder that has it is whole).
  for (const auto& [name, text] : m.files)
    if (const std::string e = reports::write_file_atomically(fs::path(out) / name, text); !e.empty()) {
      std::fprintf(stderr, "merge: %s\n", scenarios::printable(e).c_str());
      return 2;
    }
  for (std::size_t i = j["corpus"].get<std::size_t>() + 1; fs::remove(fs::path(out) / fmt::format("corpus/{:04}.yaml", i), ec); ++i) {
  }
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"index.html", explore_page(j, j.value("file", ""))},
                                   {"explore.json", j.dump(2) + "\n"}})
    if (const std::string e = reports::write_file_atomically(fs::path(out) / name, text); !e.empty()) {
      std::fprintf(stderr, "merge: %s\n", scenarios::printable(e).c_str());
      return 2;
    }
  const Json& sw = j["sweep"];
  fmt::print("merge: {} of {} shards of a guided sweep of {} (seeds {}): {} runs, corpus {} ({} kept by two shards, once), coverage {} slots\n",
             sw["merged"].size(), sw.value("shards", std::size_t{0}), scenarios::printable(j.value("file", "")), sw.value("seeds", ""),
             j.value("runs", std::size_t{0}), j.value("corpus", std::size_t{0}), m.duplicates, j.value("coverage", std::size_t{0}));
  for (const Json& sh : j["shards"]) {
    const Json& rf = sh["runs_to_first_failure"];
    fmt::print("  shard {}: {} runs, corpus {}, coverage {}, {}\n", sh.value("shard", ""), sh.value("runs", std::size_t{0}),
               sh.value("corpus", std::size_t{0}), sh.value("coverage", std::size_t{0}),
               rf.is_number() ? fmt::format("first failure at run {}", rf.get<std::size_t>()) : std::string("no failure"));
  }
  if (!sw["missing"].empty())
    fmt::print("missing shards: {}{} (run them, then merge again)\n", sw["missing"].dump(),
               sw.value("missing_count", std::size_t{0}) > sw["missing"].size()
                   ? fmt::format(", {} in all", sw.value("missing_count", std::size_t{0}))
                   : std::string());
  for (const Json& f : j["failures"]) {
    fmt::print("FAIL (shard {}, run {}): {}\n  {}\n", f.value("shard", ""), f.value("run", std::size_t{0}),
               scenarios::printable(f.value("identity", "")), scenarios::printable(f.value("detail", "")));
    if (f.contains("reproducer") && f["reproducer"].is_string())
      fmt::print("reproduce: {} run {}\n", scenarios::shell_word(cli.program), scenarios::shell_word(f["reproducer"].get<std::string>()));
  }
  fmt::print("page: {}\n", (fs::path(out) / "index.html").string());
  const bool failed = !j["failures"].empty();
  fmt::print("verdict: {}\n", failed              ? "FAIL"
                              : !sw["missing"].empty() ? "INCOMPLETE (shards missing; none of those merged failed)"
                                                       : fmt::format("PASS (no failure in {} runs)", j.value("runs", std::size_t{0})));
  return failed || !sw["missing"].empty() ? 1 : 0;
}

}  // namespace lic::tools
