#include "bench/seed_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "scenarios/file/read.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/search/schedule.hpp"
#include "scenarios/search/signature.hpp"
#include "scenarios/search/sweep.hpp"

namespace lic::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One file's split, summed over its seeds.
struct Split {
  double seed_s = 0;      ///< run_seed whole: the world built, the loop, the checks, the summary, the run freed
  double loop_s = 0;      ///< inside the event loop
  double run_s = 0;       ///< run() alone, for the feedback's share
  double signature_s = 0;
  double marks_s = 0;
};

Split measure(const scenarios::Scenario& s, std::uint64_t seeds) {
  Split x;
  scenarios::SweepOptions so;
  so.jobs = 1;
  so.registry = &scenarios::Registry::builtin();
  Clock::time_point begun, ended;
  so.on_loop = [&](bool begins) { (begins ? begun : ended) = Clock::now(); };
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto t0 = Clock::now();
    begun = ended = t0;  // a run that never reached its loop counts none of it
    (void)scenarios::run_seed(s, seed, so);
    x.seed_s += seconds(Clock::now() - t0);
    x.loop_s += seconds(ended - begun);
  }
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const FeedbackTimes t = feedback_times(s, scenarios::Registry::builtin(), seed);
    x.run_s += t.run_s;
    x.signature_s += t.signature_s;
    x.marks_s += t.marks_s;
  }
  return x;
}

}  // namespace

FeedbackTimes feedback_times(const scenarios::Scenario& s, const scenarios::Registry& registry, std::optional<std::uint64_t> seed) {
  scenarios::RunOptions ro;
  ro.seed = seed;
  ro.registry = &registry;
  const auto t0 = Clock::now();
  const scenarios::RunResult r = scenarios::run(s, ro);
  const auto t1 = Clock::now();
  const scenarios::Signature sig = scenarios::signature_of(r.kept_events(), r.checks);
  const auto t2 = Clock::now();
  const scenarios::RunMarks marks = scenarios::marks_of(r.kept_events());
  const auto t3 = Clock::now();
  return {seconds(t1 - t0), seconds(t2 - t1), seconds(t3 - t2), sig.slots.empty() && marks.landmarks.empty()};
}

void run_seed_cost(const BenchOptions& o, Figures& f) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.catalog, ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    const std::string why = "no catalogue files in " + o.catalog + " (run from the repository, or give --catalog DIR)";
    for (const char* name : {"sweep_seed_overhead_pct", "sweep_seed_overhead_median_pct", "explore_feedback_overhead_pct", "explore_marks_pct"})
      f.absent(name, why);
    return;
  }
  // Enough seeds that a file's sum is tens of milliseconds at least; the same seeds every time.
  const std::uint64_t seeds = o.quick ? 2 : 40;
  std::vector<double> overheads, feedback, marks;
  std::string worst;
  double worst_pct = -1;
  for (const fs::path& p : files) {
    const scenarios::ParseResult parsed = scenarios::load_scenario(p.string(), scenarios::Registry::builtin());
    if (!parsed.ok()) {
      std::fprintf(stderr, "bench: %s does not read: %s\n", p.string().c_str(), parsed.errors.front().message.c_str());
      continue;
    }
    // Twice, the lesser of each share: the first pass warms the caches and the atom table.
    Split best;
    for (int k = 0; k < (o.quick ? 1 : 2); ++k) {
      const Split x = measure(parsed.scenario, seeds);
      if (k == 0 || (x.seed_s - x.loop_s) / x.loop_s < (best.seed_s - best.loop_s) / best.loop_s) best = x;
    }
    if (best.loop_s <= 0 || best.run_s <= 0) continue;
    const double pct = 100 * (best.seed_s - best.loop_s) / best.loop_s;
    const std::string stem = p.stem().string();
    f.add("sweep_seed_overhead_pct_" + stem, pct, "%");
    f.add("sweep_seed_us_" + stem, 1e6 * best.seed_s / static_cast<double>(seeds), "us");
    overheads.push_back(pct);
    feedback.push_back(100 * best.signature_s / best.run_s);
    marks.push_back(100 * best.marks_s / best.run_s);
    if (pct > worst_pct) worst_pct = pct, worst = stem;
  }
  if (overheads.empty()) {
    for (const char* name : {"sweep_seed_overhead_pct", "sweep_seed_overhead_median_pct", "explore_feedback_overhead_pct", "explore_marks_pct"})
      f.absent(name, "no catalogue file read");
    return;
  }
  f.add("sweep_seed_overhead_pct", worst_pct, "%");
  f.add("sweep_seed_overhead_median_pct", median(overheads), "%");
  f.add("explore_feedback_overhead_pct", median(feedback), "%");
  f.add("explore_marks_pct", median(marks), "%");
  if (!f.json()) std::printf("(the worst seed overhead: %s; %zu catalogue files, %llu seeds each)\n", worst.c_str(), overheads.size(),
                             static_cast<unsigned long long>(seeds));
}

}  // namespace lic::bench
