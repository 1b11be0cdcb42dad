#include "bench/bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "bench/commands.hpp"
#include "bench/figures.hpp"
#include "bench/seed_cost.hpp"
#include "bench/targets.hpp"
#include "bench/workloads.hpp"

namespace lic::bench {
namespace {


/// Throughput on a shared machine is noisy; the best of a few runs is the least disturbed one.
template <class F>
double best_of(int n, F run) {
  double best = 0;
  for (int i = 0; i < n; ++i) best = std::max(best, run());
  return best;
}

std::string backend_suffix(FiberBackend b) {
  return b == FiberBackend::context ? "" : "_boost_fiber";
}

void run_w1(const BenchOptions& o, Figures& f) {
  const std::uint64_t hops = o.quick ? 200'000 : 5'000'000;
  const int n = o.quick ? 1 : o.repeat;
  // Interleaved, so drift in the machine's load hits the three alike; best of n each.
  RingConfig c;
  c.hops = hops;
  RingConfig h = c;
  h.trace = TraceMode::hash;
  RingConfig k = c;
  k.trace = TraceMode::keep;
  k.hops = hops / 2;  // kept events cost memory: 2 events a hop
  RingConfig x = c;
  x.network_nodes = 2;  // every hop crosses the network between n0 and n1
  double plain = 0;
  double hashed = 0;
  double kept = 0;
  double cross = 0;
  double kept_bytes_per_event = 0;
  for (int i = 0; i < n; ++i) {
    plain = std::max(plain, ring(c).hops_per_s);
    hashed = std::max(hashed, ring(h).hops_per_s);
    const RingResult r = ring(k);
    kept = std::max(kept, r.hops_per_s);
    kept_bytes_per_event = static_cast<double>(r.trace_kept_bytes) / static_cast<double>(std::max<std::uint64_t>(1, r.trace_events));
    cross = std::max(cross, ring(x).hops_per_s);
  }
  f.add("w1_ring_behaviour_hops_per_s", plain, "hops/s");
  f.add("w1_ring_behaviour_cross_node_hops_per_s", cross, "hops/s");
  f.add("w1_ring_behaviour_trace_hash_hops_per_s", hashed, "hops/s");
  f.add("w1_ring_behaviour_trace_keep_hops_per_s", kept, "hops/s");
  f.add("w1_trace_hash_overhead_percent", (plain / hashed - 1) * 100, "%");
  f.add("w1_trace_keep_overhead_percent", (plain / kept - 1) * 100, "%");
  // The compact store (issue 37): what the kept W1 trace holds an event (sim/trace.hpp, EventLog).
  f.add("w1_trace_bytes_per_event", kept_bytes_per_event, "B");
  // Channels against mailboxes: the same ping-pong both ways.
  PingPongConfig pp;
  pp.round_trips = o.quick ? 20'000 : 500'000;
  const double chan = best_of(n, [&] { return pingpong(pp); });
  pp.channels = false;
  const double mail = best_of(n, [&] { return pingpong(pp); });
  f.add("channel_pingpong_ops_per_s", chan, "ops/s");
  f.add("mailbox_pingpong_ops_per_s", mail, "ops/s");
  f.add("channel_vs_mailbox_ratio", chan / mail, "x");
  for (FiberBackend b : {FiberBackend::context, FiberBackend::boost_fiber}) {
    if (b == FiberBackend::boost_fiber && !o.both_backends) continue;
    RingConfig fib;
    fib.behaviour = false;
    fib.backend = b;
    fib.hops = o.quick ? 100'000 : 2'000'000;
    f.add("w1_ring_fiber" + backend_suffix(b) + "_hops_per_s",
          best_of(n, [&] { return ring(fib).hops_per_s; }), "hops/s");
  }
}

void run_w2(const BenchOptions& o, Figures& f) {
  std::vector<std::size_t> sizes = o.quick ? std::vector<std::size_t>{10'000}
                                           : std::vector<std::size_t>{10'000, 100'000, 1'000'000};
  for (bool behaviour : {true, false}) {
    for (std::size_t n : sizes) {
      if (!behaviour && n > o.w2_fiber_max) continue;
      const char* kind = behaviour ? "behaviour" : "fiber";
      const std::vector<double> r = isolated([&] {
        SpawnConfig c;
        c.processes = n;
        c.behaviour = behaviour;
        const SpawnResult s = spawn(c);
        return std::vector<double>{s.spawns_per_s, s.resident_bytes_per_process};
      });
      if (r.size() != 2) {
        std::fprintf(stderr, "bench: W2 %s %zu failed\n", kind, n);
        continue;
      }
      const std::string base = std::string("w2_spawn_") + kind + "_" + std::to_string(n);
      f.add(base + "_per_s", r[0], "spawns/s");
      f.add(base + "_resident_per_process_bytes", r[1], "B");
    }
  }
}

void run_w3(const BenchOptions& o, Figures& f) {
  struct Size {
    std::size_t n, m;
  };
  const std::vector<Size> sizes = o.quick ? std::vector<Size>{{1000, 200}, {100'000, 2}}
                                          : std::vector<Size>{{1000, 10'000}, {1'000'000, 10}};
  const int n = o.quick ? 1 : o.repeat;
  for (const Size& s : sizes) {
    const std::vector<double> r = isolated([&] {
      TimerConfig c;
      c.processes = s.n;
      c.sleeps = s.m;
      return std::vector<double>{best_of(n, [&] { return timers(c); })};
    });
    if (r.size() == 1) {
      f.add("w3_timers_behaviour_" + std::to_string(s.n) + "_events_per_s", r[0], "events/s");
    }
  }
  TimerConfig fib;
  fib.behaviour = false;
  fib.processes = 1000;
  fib.sleeps = o.quick ? 100 : 2000;
  f.add("w3_timers_fiber_1000_events_per_s", best_of(n, [&] { return timers(fib); }), "events/s");
}

/// The SimGrid peer's figures, read from its output and added among ours (its `name value
/// unit` lines), so --json holds them too.
void run_peer(const BenchOptions& o, Figures& f) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) self = o.self_path;
  const fs::path peer = self.parent_path() / "letitcrash-simgrid-peer";
  if (!fs::exists(peer)) {
    std::fprintf(stderr, "bench: SimGrid peer not built (libsimgrid-dev missing?): skipped\n");
    return;
  }
  std::string cmd = "'" + peer.string() + "'";
  if (!o.w1 || !o.w2 || !o.w3) {
    // The peer runs one workload or all of them.
    cmd += o.w1 ? " w1" : o.w2 ? " w2" : " w3";
  }
  if (o.quick) cmd += " --quick";
  std::fflush(stdout);
  std::FILE* out = ::popen(cmd.c_str(), "r");
  if (out == nullptr) {
    std::fprintf(stderr, "bench: cannot run the SimGrid peer\n");
    return;
  }
  char line[512];
  while (std::fgets(line, sizeof line, out) != nullptr) {
    char name[256];
    char unit[64];
    double value = 0;
    if (std::sscanf(line, "%255s %lf %63s", name, &value, unit) == 3) f.add(name, value, unit);
    else std::fprintf(stderr, "bench: from the SimGrid peer: %s", line);
  }
  const int rc = ::pclose(out);
  if (rc != 0) std::fprintf(stderr, "bench: SimGrid peer exited with status %d\n", rc);
  const std::optional<double> ours = f.get("w3_timers_behaviour_1000_events_per_s");
  const std::optional<double> theirs = f.get("simgrid_w3_timer_events_per_s");
  if (ours && theirs) f.add("w3_1k_vs_simgrid", *ours / *theirs, "x");
}

std::string self_exe(const BenchOptions& o) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? o.self_path : self.string();
}

/// A whole command's figure, or why it has none (it did not start, or exited 2 or worse: 0 and
/// 1 are a run's verdicts, both fine here).
bool ran(const CommandResult& r, const std::string& name, Figures& f) {
  if (r.exit_code == 0 || r.exit_code == 1) return true;
  f.absent(name, "the command exited " + std::to_string(r.exit_code));
  return false;
}

void pipeline_memory_growth(const BenchOptions& o, Figures& f, const ScratchFolder& dir, const std::string& file);

/// The pipeline for 24 virtual hours (quick: 10 minutes), with every report and without.
void run_pipeline(const BenchOptions& o, Figures& f, const ScratchFolder& dir) {
  const std::string file = dir.write("pipeline.yaml", kPipelineScenario).string();
  const std::string until = o.quick ? "10m" : "24h";
  const double virtual_s = o.quick ? 600 : 86400;
  const std::string base = o.quick ? "pipeline_10m_" : "pipeline_";
  const std::filesystem::path out = dir.path() / "pipeline-out";
  const CommandResult with = run_command({self_exe(o), "run", file, "--until", until, "--out", out.string(), "--max-events", "0"});
  if (ran(with, base + "reports_x_realtime", f)) {
    f.add(base + "reports_x_realtime", virtual_s / with.wall_s, "x");
    f.add(base + "reports_x_cpu_time", virtual_s / with.cpu_s, "x");  // steadier on a busy machine
    f.add(base + "reports_peak_rss_mib", with.peak_rss_mib, "MiB");
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(out / "trace.jsonl", ec);
    if (!ec) f.add(base + "trace_jsonl_mib", static_cast<double>(bytes) / (1 << 20), "MiB");
  }
  std::error_code ec;
  std::filesystem::remove_all(out, ec);
  const CommandResult without = run_command({self_exe(o), "run", file, "--until", until, "--max-events", "0"});
  if (ran(without, base + "x_realtime", f)) {
    f.add(base + "x_realtime", virtual_s / without.wall_s, "x");
    f.add(base + "x_cpu_time", virtual_s / without.cpu_s, "x");
    f.add(base + "peak_rss_mib", without.peak_rss_mib, "MiB");
  }
  if (!o.quick) pipeline_memory_growth(o, f, dir, file);
}

/// Flat memory (issue 37): the pipeline again for 2 and 8 virtual hours, with every report and
/// without, beside the 24-hour runs above; peak RSS at each, and its growth a virtual hour from
/// 2 to 24 hours (the 2-hour run carries the process's start-up and the tree's).
void pipeline_memory_growth(const BenchOptions& o, Figures& f, const ScratchFolder& dir, const std::string& file) {
  const std::filesystem::path out = dir.path() / "pipeline-out";
  for (const bool reports : {true, false}) {
    const std::string base = reports ? "pipeline_reports_" : "pipeline_";
    const std::optional<double> day = f.get(base + "peak_rss_mib");
    std::optional<double> two;
    for (const int hours : {2, 8}) {
      std::vector<std::string> cmd{self_exe(o), "run", file, "--until", std::to_string(hours) + "h", "--max-events", "0"};
      if (reports) cmd.insert(cmd.end(), {"--out", out.string()});
      const CommandResult r = run_command(cmd);
      std::error_code ec;
      std::filesystem::remove_all(out, ec);
      if (!ran(r, base + "rss_growth_mib_per_hour", f)) break;  // the other series still runs
      f.add(base + "peak_rss_mib_" + std::to_string(hours) + "h", r.peak_rss_mib, "MiB");
      if (hours == 2) two = r.peak_rss_mib;
    }
    if (day && two) f.add(base + "rss_growth_mib_per_hour", (*day - *two) / 22.0, "MiB/h");
  }
}

/// The same seeds swept with one job and with two: the second's speed-up. A pair takes about
/// a second, so one pair is mostly noise (1.68x and 2.03x on the same idle machine): the pairs
/// run `--repeat` times (at least 5), one job then two, and the figure is the median ratio, with
/// the lowest and highest beside it.
void run_sweep(const BenchOptions& o, Figures& f, const ScratchFolder& dir) {
  const std::string file = dir.write("sweep.yaml", kPipelineScenario).string();
  const std::string seeds = o.quick ? "1..4" : "1..32";
  const std::string until = o.quick ? "1m" : "10m";
  const std::string name = o.quick ? "sweep_quick_jobs2_speedup" : "sweep_jobs2_speedup";
  const int pairs = o.quick ? 1 : std::max(o.repeat, 5);
  std::vector<double> ratios;
  for (int i = 0; i < pairs; ++i) {
    const CommandResult one = run_command({self_exe(o), "sweep", file, "--seeds", seeds, "--until", until, "--jobs", "1"});
    const CommandResult two = run_command({self_exe(o), "sweep", file, "--seeds", seeds, "--until", until, "--jobs", "2"});
    if (!ran(one, name, f) || !ran(two, name, f)) return;
    ratios.push_back(one.wall_s / two.wall_s);
  }
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  f.add(name, n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2, "x");
  if (n > 1) {
    f.add(name + "_min", ratios.front(), "x");
    f.add(name + "_max", ratios.back(), "x");
  }
}

/// A root with 10,000 idle workers (quick: 1,000), run with every report and without; and a
/// lifecycle chain of as many services, with every report.
void run_tree(const BenchOptions& o, Figures& f, const ScratchFolder& dir) {
  const std::size_t n = o.quick ? 1000 : 10'000;
  const std::string size = o.quick ? "1k" : "10k";
  const std::string file = dir.write("tree.yaml", wide_tree_scenario(n)).string();
  const std::filesystem::path out = dir.path() / "tree-out";
  const CommandResult with = run_command({self_exe(o), "run", file, "--out", out.string()});
  if (ran(with, "out_" + size + "_children_s", f)) f.add("out_" + size + "_children_s", with.wall_s, "s");
  const CommandResult without = run_command({self_exe(o), "run", file});
  if (ran(without, "run_" + size + "_children_s", f)) f.add("run_" + size + "_children_s", without.wall_s, "s");
  // A chain of depends_on as deep as the tree is wide: linear, where a scan of every service at
  // every event made 20,000 cost a minute with the reports.
  const std::string chain = dir.write("chain.yaml", lifecycle_chain_scenario(n)).string();
  const std::string name = "out_" + size + "_lifecycle_chain_s";
  const CommandResult stopped = run_command({self_exe(o), "run", chain, "--out", (dir.path() / "chain-out").string()});
  if (ran(stopped, name, f)) f.add(name, stopped.wall_s, "s");
}

/// Shards of `seeds` seeds (the base sweep's lines again under new seed numbers), written as 16
/// shards of one sweep would be: seed s in shard (s - 1) mod 16 + 1, each pair of neighbours
/// swapped (a sweep on two cores writes its seeds about in order, as they finish).
bool write_shards(const std::filesystem::path& base, std::uint64_t seeds, const std::filesystem::path& dir,
                  std::vector<std::string>& paths) {
  std::ifstream in(base);
  std::string header, line;
  std::vector<std::string> tails;  // each base line after its seed number
  if (!std::getline(in, header)) return false;
  while (std::getline(in, line)) {
    const std::size_t comma = line.find(',');
    if (line.rfind("{\"seed\":", 0) != 0 || comma == std::string::npos) return false;
    tails.push_back(line.substr(comma));
  }
  if (tails.empty()) return false;
  constexpr std::uint64_t kShards = 16;
  const auto replace = [](std::string h, const std::string& key, const std::string& value) {
    const std::size_t at = h.find("\"" + key + "\":\"");
    if (at == std::string::npos) return h;
    const std::size_t from = at + key.size() + 4, to = h.find('"', from);
    return h.replace(from, to - from, value);
  };
  for (std::uint64_t k = 1; k <= kShards; ++k) {
    paths.push_back((dir / fmt::format("shard{}.jsonl", k)).string());
    std::ofstream out(paths.back(), std::ios::binary);
    out << replace(replace(header, "seeds", fmt::format("1..{}", seeds)), "shard", fmt::format("{}/{}", k, kShards)) << "\n";
    std::string text;
    const auto put = [&](std::uint64_t s) {
      if (s > seeds) return;
      text += fmt::format("{{\"seed\":{}", s);
      text += tails[(s - 1) % tails.size()];
      text += '\n';
    };
    for (std::uint64_t s = k; s <= seeds; s += 2 * kShards) {
      put(s + kShards);
      put(s);
      if (text.size() > (std::size_t{1} << 20)) out << text, text.clear();
    }
    out << text;
    if (!out) return false;
  }
  return true;
}

/// Issue 36: `merge` of 16 shards of 10,000,000 seeds (quick: 100,000) of a small catalogue file,
/// timed as a whole command with its peak RSS; the bytes a seed takes in a results file; and a
/// sweep's cost per seed at 1,000,000 seeds against 1,000 (quick: 10,000), results kept.
void run_merge(const BenchOptions& o, Figures& f, const ScratchFolder& dir) {
  const std::string file = dir.write("small.yaml", kSmallScenario).string();
  const std::filesystem::path base = dir.path() / "base.jsonl";
  const CommandResult sweep = run_command({self_exe(o), "sweep", file, "--seeds", "1..1000", "--jobs", "1", "--out", base.string()});
  if (!ran(sweep, "results_bytes_per_seed", f) && sweep.exit_code != 1) return;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(base, ec);
  std::ifstream header_in(base);
  std::string header;
  std::getline(header_in, header);
  if (ec) return f.absent("results_bytes_per_seed", "the base sweep wrote no results file");
  f.add("results_bytes_per_seed", static_cast<double>(bytes - header.size() - 1) / 1000.0, "B");

  const std::uint64_t seeds = o.quick ? 100'000 : 10'000'000;
  const std::string name = o.quick ? "merge_100k" : "merge_10m";
  std::vector<std::string> shards;
  if (!write_shards(base, seeds, dir.path(), shards)) return f.absent(name + "_s", "the shards could not be written");
  std::vector<std::string> argv{self_exe(o), "merge", (dir.path() / "merged").string()};
  argv.insert(argv.end(), shards.begin(), shards.end());
  const CommandResult merge = run_command(argv);
  for (const std::string& s : shards) std::filesystem::remove(s, ec);
  if (ran(merge, name + "_s", f)) {
    f.add(name + "_s", merge.wall_s, "s");
    f.add(name + "_peak_rss_mib", merge.peak_rss_mib, "MiB");
  }
  std::filesystem::remove_all(dir.path() / "merged", ec);

  // The cost of a seed at two sizes, each a whole command with its results kept.
  const std::uint64_t big = o.quick ? 10'000 : 1'000'000;
  double per_seed[2] = {0, 0};
  const std::uint64_t sizes[2] = {1000, big};
  for (int i = 0; i < 2; ++i) {
    const std::filesystem::path out = dir.path() / fmt::format("cost{}.jsonl", i);
    const CommandResult r = run_command({self_exe(o), "sweep", file, "--seeds", fmt::format("1..{}", sizes[i]), "--jobs", "1", "--out", out.string()});
    if (!ran(r, "sweep_seed_cost_growth_pct", f)) return;
    per_seed[i] = r.cpu_s / static_cast<double>(sizes[i]);
    std::filesystem::remove(out, ec);
  }
  f.add(fmt::format("sweep_seed_us_{}", 1000), per_seed[0] * 1e6, "us");
  f.add(fmt::format("sweep_seed_us_{}", big), per_seed[1] * 1e6, "us");
  f.add("sweep_seed_cost_growth_pct", (per_seed[1] / per_seed[0] - 1) * 100, "%");
}

void run_supervised(const BenchOptions& o, Figures& f) {
  const std::size_t n = o.quick ? 10'000 : 1'000'000;
  const std::string size = o.quick ? "10k" : "1m";
  for (const bool flat : {false, true}) {
    const std::string bytes = "supervised_worker_bytes_" + size + (flat ? "_flat" : "");
    const std::vector<double> r = isolated([n, flat] {
      const SupervisedResult s = supervised_workers(n, flat);
      return std::vector<double>{s.bytes_per_worker, s.start_s, s.restart_ms, s.shutdown_s};
    });
    const std::pair<std::string, const char*> names[] = {
        {bytes, "B"},
        {"supervised_flat_" + size + "_start_s", "s"},
        {"supervised_flat_" + size + "_restart_ms", "ms"},
        {"supervised_flat_" + size + "_shutdown_s", "s"},
    };
    for (std::size_t k = 0; k < (flat ? 4U : 1U); ++k) {
      if (r.size() == 4) f.add(names[k].first, r[k], names[k].second);
      else f.absent(names[k].first, "the workload's process failed");
    }
  }
}

/// The headline names (issue 17), each a figure measured above under its own name, or
/// null with the reason it was not measured in this invocation.
void headline(const BenchOptions& o, Figures& f) {
  const std::string quick = "quick mode measures smaller sizes";
  const auto need = [&](const std::string& name, bool selected, const std::string& from, const std::string& what) {
    const std::string why = !selected ? what + " was not selected (--only)" : o.quick ? quick : "not measured (see stderr)";
    if (name != from) f.alias(name, from, why);
    else if (!f.has(name)) f.absent(name, why);
  };
  need("pipeline_reports_x_realtime", o.pipeline, "pipeline_reports_x_realtime", "pipeline");
  need("pipeline_reports_peak_rss_mib", o.pipeline, "pipeline_reports_peak_rss_mib", "pipeline");
  need("pipeline_reports_rss_growth_mib_per_hour", o.pipeline, "pipeline_reports_rss_growth_mib_per_hour", "pipeline");
  need("trace_keep_overhead_pct", o.w1, "w1_trace_keep_overhead_percent", "w1");
  need("trace_hash_overhead_pct", o.w1, "w1_trace_hash_overhead_percent", "w1");
  need("trace_bytes_per_event", o.w1, "w1_trace_bytes_per_event", "w1");
  need("w3_1m_events_per_s", o.w3, "w3_timers_behaviour_1000000_events_per_s", "w3");
  if (!f.has("w3_1k_vs_simgrid"))
    f.absent("w3_1k_vs_simgrid", !o.peer ? "--no-peer" : !o.w3 ? "w3 was not selected (--only)" : "the SimGrid peer did not run or gave no W3 figure");
  need("sweep_jobs2_speedup", o.sweep, "sweep_jobs2_speedup", "sweep");
  need("supervised_worker_bytes_1m", o.supervised, "supervised_worker_bytes_1m", "supervised");
  need("out_10k_children_s", o.tree, "out_10k_children_s", "tree");
  need("one_supervisor_1m_children_start_s", o.supervised, "supervised_flat_1m_start_s", "supervised");
  need("merge_10m_s", o.merge, "merge_10m_s", "merge");
  need("merge_10m_peak_rss_mib", o.merge, "merge_10m_peak_rss_mib", "merge");
  need("results_bytes_per_seed", o.merge, "results_bytes_per_seed", "merge");
  need("sweep_seed_cost_growth_pct", o.merge, "sweep_seed_cost_growth_pct", "merge");
  need("sweep_seed_overhead_pct", o.seed, "sweep_seed_overhead_pct", "seed");
  need("explore_feedback_overhead_pct", o.seed, "explore_feedback_overhead_pct", "seed");
}

}  // namespace

int run(const BenchOptions& o) {
  Figures f(o.json);
  {
    // The whole commands first, while this process is small: a spawned child's peak RSS
    // (wait4's ru_maxrss) counts this process's own peak too (the kernel keeps the larger of the
    // two at the child's exec), so after W3 at 1M every child "peaked" at bench's 389 MiB.
    const ScratchFolder dir;
    if (o.pipeline) run_pipeline(o, f, dir);
    if (o.sweep) run_sweep(o, f, dir);
    if (o.tree) run_tree(o, f, dir);
    if (o.merge) run_merge(o, f, dir);
  }
  if (o.w1) run_w1(o, f);
  if (o.w2) run_w2(o, f);
  if (o.w3) run_w3(o, f);
  if (o.peer && (o.w1 || o.w2 || o.w3)) run_peer(o, f);
  if (o.supervised) run_supervised(o, f);
  if (o.seed) run_seed_cost(o, f);
  headline(o, f);
  judge_targets(f, o.quick);
  if (o.json) std::printf("%s\n", f.to_json(o.quick).c_str());
  return 0;
}

}  // namespace lic::bench
