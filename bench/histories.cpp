#include "bench/histories.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "properties/jepsen.hpp"
#include "properties/linearizability.hpp"
#include "sim/rng.hpp"

namespace lic::bench {

namespace {

using properties::Linearizable;
using properties::Op;

/// "file value" lines, comments (#) left out.
std::map<std::string, std::string> pairs(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream w(line);
    std::string k;
    std::string v;
    w >> k >> v;
    out[k] = v;
  }
  return out;
}

struct Timed {
  Linearizable verdict = Linearizable::unknown;
  double seconds = 0;
};

Timed best_of(const std::vector<Op>& h, const properties::Model& m, int repeat) {
  Timed t;
  t.seconds = 1e300;
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    t.verdict = properties::check_linearizable(h, m).verdict;
    t.seconds = std::min(t.seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return t;
}

/// A linearizable key-value history of `n` operations by `clients` clients over `keys` keys: each
/// operation takes effect at one instant inside its interval, the intervals of different clients
/// overlap (a generated history, deterministic: seed 1).
std::vector<Op> generated_kv(std::size_t n, int clients, int keys) {
  Rng rng(1);
  struct Pending {
    Op op;
    std::int64_t at;  // when it takes effect
  };
  std::vector<std::int64_t> free_at(static_cast<std::size_t>(clients), 0);
  std::vector<Pending> ops;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::size_t>(rng.uniform(static_cast<std::uint64_t>(clients)));
    Op o;
    o.client = static_cast<std::int64_t>(c);
    o.call = free_at[c] + static_cast<std::int64_t>(rng.uniform(50));
    o.ret = o.call + 1 + static_cast<std::int64_t>(rng.uniform(200));
    free_at[c] = o.ret + 1;
    o.key = "k" + std::to_string(rng.uniform(static_cast<std::uint64_t>(keys)));
    o.f = rng.uniform(2) == 0 ? "read" : "append";
    if (o.f == "append") o.arg = std::to_string(i) + " ";
    ops.push_back({o, o.call + static_cast<std::int64_t>(rng.uniform(static_cast<std::uint64_t>(o.ret - o.call + 1)))});
  }
  std::vector<std::size_t> order(ops.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ops[a].at < ops[b].at; });
  std::map<std::string, std::string> value;
  for (std::size_t i : order) {
    Op& o = ops[i].op;
    if (o.f == "append") value[o.key] += o.arg;
    else o.value = value[o.key];
  }
  std::vector<Op> out;
  for (Pending& p : ops) out.push_back(std::move(p.op));
  return out;
}

}  // namespace

int run_histories(const HistoryBenchOptions& o) {
  const std::map<std::string, std::string> verdicts = pairs(o.dir + "/verdicts.txt");
  const std::map<std::string, std::string> theirs = pairs(o.dir + "/porcupine-times.txt");
  if (verdicts.empty()) {
    fmt::print(stderr, "bench histories: no verdicts in {}/verdicts.txt\n", o.dir);
    return 2;
  }
  fmt::print("histories: the linearizability checker on Porcupine's test histories (best of {}), beside Porcupine's time "
             "({}/porcupine-times.txt)\n",
             o.repeat, o.dir);
  fmt::print("{:<24} {:>6} {:>10} {:>12} {:>10}  {}\n", "history", "ops", "ours ms", "porcupine ms", "ratio", "verdict");
  std::size_t agree = 0, etcd = 0, etcd_no_slower = 0;
  double ours_total = 0, theirs_total = 0;
  for (const auto& [file, want] : verdicts) {
    std::string error;
    const bool is_etcd = file.rfind("jepsen/", 0) == 0;
    const std::vector<Op> h = is_etcd ? properties::read_jepsen_etcd(o.dir + "/" + file, error) : properties::read_jepsen_kv(o.dir + "/" + file, error);
    if (!error.empty()) {
      fmt::print(stderr, "bench histories: {}\n", error);
      return 2;
    }
    const Timed t = best_of(h, *properties::find_model(is_etcd ? "cas-register" : "kv"), o.repeat);
    const bool ok = (t.verdict == Linearizable::yes) == (want == "true") && t.verdict != Linearizable::unknown;
    agree += ok ? 1 : 0;
    const auto it = theirs.find(file);
    const double p = it == theirs.end() ? 0 : std::stod(it->second) / 1e9;
    ours_total += t.seconds;
    theirs_total += p;
    if (is_etcd && p > 0) {
      ++etcd;
      etcd_no_slower += t.seconds <= p ? 1 : 0;
    }
    fmt::print("{:<24} {:>6} {:>10.3f} {:>12.3f} {:>10.2f}  {}{}\n", file, h.size(), t.seconds * 1e3, p * 1e3, p > 0 ? t.seconds / p : 0.0,
               t.verdict == Linearizable::yes ? "linearizable" : t.verdict == Linearizable::no ? "not linearizable" : "unknown",
               ok ? "" : " (Porcupine: " + std::string(want == "true" ? "linearizable" : "not linearizable") + ")");
  }
  const std::vector<Op> big = generated_kv(100'000, 20, 100);
  const Timed g = best_of(big, *properties::find_model("kv"), o.repeat);
  fmt::print("{:<24} {:>6} {:>10.3f} {:>12} {:>10}  {}\n", "generated kv (100 keys)", big.size(), g.seconds * 1e3, "-", "-",
             g.verdict == Linearizable::yes ? "linearizable" : "NOT linearizable (it was generated linearizable)");
  fmt::print("total: ours {:.3f} s, Porcupine {:.3f} s\n", ours_total, theirs_total);
  fmt::print("targets (issue 38)\n");
  const auto target = [](const char* name, bool met, const std::string& figure) {
    fmt::print("target {}: {}: {}\n", name, figure, met ? "met" : "NOT MET");
  };
  target("porcupine_agreement", agree == verdicts.size(), fmt::format("{} of {} verdicts agree", agree, verdicts.size()));
  target("etcd_no_slower_than_porcupine", etcd_no_slower == etcd, fmt::format("{} of {} etcd histories", etcd_no_slower, etcd));
  target("kv_100k_within_1s", g.seconds <= 1.0 && g.verdict == Linearizable::yes, fmt::format("{:.3f} s", g.seconds));
  return agree == verdicts.size() && g.verdict == Linearizable::yes ? 0 : 1;
}

}  // namespace lic::bench
