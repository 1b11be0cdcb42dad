#include "bench/bugs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <vector>

#include "scenarios/file/read.hpp"
#include "scenarios/run/shrink.hpp"
#include "scenarios/run/sweep.hpp"

namespace lic::bench {

namespace {

using scenarios::Scenario;

/// Range r starts far from the others: seeds 1 + r * 1,000,000 on.
constexpr std::uint64_t kRangeStride = 1'000'000;

/// Seeds run up to and including the first failure; nothing when none failed in max_seeds.
std::optional<std::size_t> seeds_to_failure(const Scenario& s, std::size_t range, bool swarm, const BugBenchOptions& o) {
  scenarios::SweepOptions so;
  so.swarm = swarm;
  so.stop_at_first_failure = true;
  so.jobs = o.jobs;
  const std::uint64_t first = 1 + range * kRangeStride;
  std::size_t seen = 0;
  bool failed = false;
  scenarios::run_seeds(s, scenarios::SeedRange{first, first + o.max_seeds - 1}, scenarios::Shard{}, so, {},
                       [&](const scenarios::SeedResult& r) {
                         ++seen;
                         failed = failed || !r.passed;
                         return true;
                       });
  return failed ? std::optional(seen) : std::nullopt;
}

struct Spread {
  std::size_t found = 0;
  double median = 0;
  std::size_t max = 0;
};

Spread spread(std::vector<std::size_t> v) {
  Spread s;
  s.found = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = v.size() % 2 == 1 ? static_cast<double>(v[v.size() / 2]) : (static_cast<double>(v[v.size() / 2 - 1]) + static_cast<double>(v[v.size() / 2])) / 2;
  s.max = v.back();
  return s;
}

std::string cell(const Spread& s, std::size_t ranges) {
  if (s.found == 0) return fmt::format("{:>22}", "not found");
  return fmt::format("{:>8g} {:>6} {:>2}/{:<2}", s.median, s.max, s.found, ranges);
}

struct Measured {
  std::string name;
  Spread uniform;
  Spread swarm;
  std::optional<scenarios::ShrinkResult> shrunk;
};

Measured measure(const std::string& name, const Scenario& s, const BugBenchOptions& o) {
  Measured m{name, {}, {}, std::nullopt};
  std::vector<std::size_t> uniform;
  std::vector<std::size_t> swarm;
  std::optional<std::uint64_t> first_failing;
  for (std::size_t r = 0; r < o.ranges; ++r) {
    if (const auto n = seeds_to_failure(s, r, false, o)) {
      uniform.push_back(*n);
      if (!first_failing) first_failing = 1 + r * kRangeStride + *n - 1;
    }
    if (const auto n = seeds_to_failure(s, r, true, o)) swarm.push_back(*n);
  }
  m.uniform = spread(uniform);
  m.swarm = spread(swarm);
  if (first_failing && o.shrink_runs > 0) {
    scenarios::ShrinkOptions so;
    so.seed = first_failing;
    so.max_runs = o.shrink_runs;
    m.shrunk = scenarios::shrink(s, so);
  }
  return m;
}

void print_row(const Measured& m, std::size_t ranges) {
  std::string shrunk = "-";
  if (m.shrunk && m.shrunk->failed)
    shrunk = fmt::format("faults {}->{}, events {}->{}", m.shrunk->before.faults, m.shrunk->after.faults, m.shrunk->before.events,
                         m.shrunk->after.events);
  fmt::print("{:<36} {} {}  {}\n", m.name, cell(m.uniform, ranges), cell(m.swarm, ranges), shrunk);
  std::fflush(stdout);
}

}  // namespace

int run_bugs(const BugBenchOptions& o) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(o.dir, ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    fmt::print(stderr, "bench bugs: no bug files (*.yaml) in {}\n", o.dir);
    return 2;
  }
  fmt::print("planted bugs: seeds to the first failure over {} seed ranges (at most {} seeds each), uniform and swarm; "
             "the first failing case shrunk ({} runs at most)\n",
             o.ranges, o.max_seeds, o.shrink_runs);
  fmt::print("{:<36} {:>8} {:>6} {:>5} {:>8} {:>6} {:>5}  {}\n", "bug", "median", "max", "found", "swarm", "max", "found", "shrunk");
  const auto start = std::chrono::steady_clock::now();
  std::size_t missed = 0;
  for (const std::filesystem::path& f : files) {
    const scenarios::ParseResult p = scenarios::load_scenario(f.string());
    if (!p.ok()) {
      fmt::print(stderr, "bench bugs: {} does not read: {}\n", f.string(), p.errors.front().message);
      return 2;
    }
    const Measured m = measure(f.stem().string(), p.scenario, o);
    missed += m.uniform.found < o.ranges || m.swarm.found < o.ranges ? 1 : 0;
    print_row(m, o.ranges);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("bugs {}; missed in some range: {}; wall time {:.0f} s\n", files.size(), missed, wall);
  return 0;
}

}  // namespace lic::bench
