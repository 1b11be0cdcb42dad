#include "scenarios/search/reach.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

namespace lic::scenarios {

namespace {

/// Whether a run of `s` at `seed` fails with identity `id` (a run the budgets or the runner stop
/// does not).
bool fails_so(const Scenario& s, const FailureId& id, std::uint64_t seed, const ReachOptions& o) {
  RunOptions ro;
  ro.seed = seed;
  ro.registry = o.registry;
  ro.budgets = o.budgets;
  ro.partial_on_budget = true;
  try {
    const RunResult r = run(s, ro);
    return std::any_of(r.checks.begin(), r.checks.end(), [&](const CheckResult& c) { return !c.passed && failure_id(c) == id; });
  } catch (const std::exception&) {
    return false;
  }
}

class Reach {
 public:
  Reach(const FailureId& id, const ReachOptions& o) : id_(id), o_(o) {}

  /// Seeds of 1..100 on which `s` fails so. With `decide`, it stops once more than 10 have
  /// passed (it cannot hold then) and the count is a lower bound; whether it holds is exact.
  std::size_t failing(const Scenario& s, bool decide) {
    std::atomic<std::uint64_t> next{1};
    std::atomic<std::size_t> fails{0};
    std::atomic<std::size_t> passes{0};
    const auto work = [&] {
      for (std::uint64_t seed = next++; seed <= kReachSeeds; seed = next++) {
        if (decide && passes.load() > kReachSeeds - kReachHolds) return;
        ++(fails_so(s, id_, seed, o_) ? fails : passes);
      }
    };
    {
      const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
      std::vector<std::jthread> pool;
      for (unsigned t = 1; t < (o_.jobs == 0 ? cores : o_.jobs); ++t) pool.emplace_back(work);
      work();
    }
    // Counted as all 100: how many ran before an early stop depends on the threads' timing, and the
    // budget that counts them must not (the pins would then depend on it).
    runs_ += kReachSeeds;
    return fails.load();
  }

  bool holds(const Scenario& s) { return failing(s, true) >= kReachHolds; }
  bool spent() const { return runs_ >= o_.max_runs || (o_.stop && o_.stop()); }
  std::size_t runs() const { return runs_; }

 private:
  const FailureId& id_;
  const ReachOptions& o_;
  std::size_t runs_ = 0;
};

/// The keys a scenario file can pin, as the reader takes them: a process's by its tree path (not
/// the script's, nor one without a label), and no name with a space in it, which would not read
/// back as one key.
bool pinnable(const std::string& key) {
  const auto words = 1 + std::count(key.begin(), key.end(), ' ');
  if (key.rfind("process ", 0) == 0) return words == 2 && key.size() > 8 && key[8] == '/';
  if (key.rfind("link ", 0) == 0) return words == 3;
  return key == "tie-break" || words == 2;
}

}  // namespace

std::vector<std::string> streams_drawn(const Scenario& s, const ReachOptions& o) {
  RunOptions ro;
  ro.registry = o.registry;
  ro.budgets = o.budgets;
  ro.partial_on_budget = true;
  ro.record_streams = true;
  std::vector<std::string> keys;
  try {
    const RunResult r = run(s, ro);
    for (const std::string& k : r.sim->streams_used())
      if (pinnable(k)) keys.push_back(k);
  } catch (const std::exception&) {
  }
  return keys;
}

namespace {

Scenario pinned(Scenario s, const std::vector<std::string>& keys) {
  for (const std::string& k : keys)
    if (std::none_of(s.streams.begin(), s.streams.end(), [&](const StreamPin& p) { return p.key == k; }))
      s.streams.push_back(StreamPin{k, s.seed, {}});
  std::sort(s.streams.begin(), s.streams.end(), [](const StreamPin& a, const StreamPin& b) { return a.key < b.key; });
  return s;
}

/// The fewest of `drawn` that make `s` hold: one stream alone first (the usual answer: one
/// process's draws), else every one, dropped one at a time while it still holds.
std::vector<std::string> fewest(const Scenario& s, const std::vector<std::string>& drawn, Reach& reach, bool& stopped) {
  for (const std::string& k : drawn) {
    if ((stopped = reach.spent())) return drawn;
    if (reach.holds(pinned(s, {k}))) return {k};
  }
  std::vector<std::string> keep = drawn;
  for (std::size_t i = 0; i < keep.size() && keep.size() > 1;) {
    if ((stopped = reach.spent())) return keep;
    std::vector<std::string> fewer = keep;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
    if (reach.holds(pinned(s, fewer))) keep = std::move(fewer);
    else ++i;
  }
  return keep;
}

}  // namespace

SeedReach pin_streams(Scenario& s, const FailureId& id, const ReachOptions& o) {
  SeedReach out;
  Reach reach(id, o);
  out.failing = out.failing_unpinned = reach.failing(s, false);
  if (out.failing >= kReachHolds) {
    out.runs = reach.runs();
    return out;
  }
  out.drawn = streams_drawn(s, o);
  ++out.runs;
  if (!out.drawn.empty() && reach.holds(pinned(s, out.drawn))) {
    out.pinned = fewest(s, out.drawn, reach, out.stopped);
    s = pinned(std::move(s), out.pinned);
    out.failing = reach.failing(s, false);
  }
  out.runs += reach.runs();
  return out;
}

}  // namespace lic::scenarios
