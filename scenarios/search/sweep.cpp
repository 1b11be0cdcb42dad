#include "scenarios/search/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "scenarios/search/coverage.hpp"

namespace lic::scenarios {

namespace {

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

SeedResult summarise(const Scenario& written, const RunResult& r, const std::optional<SwarmChoice>& choice) {
  SeedResult s;
  s.seed = r.seed;
  s.passed = r.passed;
  s.trace_hash = hash_hex(r.trace_hash);
  s.events = r.events;
  s.virtual_time_ns = r.end.ns;
  s.metrics = r.metrics;
  for (const CheckResult& c : r.checks) {
    if (c.passed) continue;
    s.failed.push_back(c.name);
    if (c.witness) s.witnesses.emplace(c.name, *c.witness);
  }
  s.swarm = choice;
  record_coverage(written, r, s);
  return s;
}

/// A second run that differs from the first fails the seed, saying how.
void compare(SeedResult& first, const SeedResult& again) {
  first.determinism = "ok";
  if (again.trace_hash != first.trace_hash) {
    first.failed.push_back(fmt::format("determinism: hash {} then {}", first.trace_hash, again.trace_hash));
  } else if (again.failed != first.failed) {
    first.failed.push_back(fmt::format("determinism: failed [{}] then [{}]", join(first.failed), join(again.failed)));
  } else {
    return;
  }
  first.determinism = "mismatch";
  first.passed = false;
}

}  // namespace

std::string parse_seed(std::string_view text, std::uint64_t& out) {
  if (!parse_u64(text, out))
    return fmt::format("'{}' is not a seed: a seed is a whole number from 0 to {}", text, UINT64_MAX);
  return {};
}

std::string parse_seed_range(std::string_view text, SeedRange& out) {
  const std::size_t dots = text.find("..");
  if (dots == std::string_view::npos) return fmt::format("'{}' is not a range of seeds: write A..B, e.g. 1..1000", text);
  SeedRange r;
  if (!parse_u64(text.substr(0, dots), r.first) || !parse_u64(text.substr(dots + 2), r.last))
    return fmt::format("'{}' is not a range of seeds: A and B in A..B are whole numbers from 0 to {}", text, UINT64_MAX);
  if (r.first > r.last) return fmt::format("'{}' is an empty range: the first seed is after the last", text);
  if (r.first == 0 && r.last == UINT64_MAX) return fmt::format("'{}' holds 2^64 seeds, one more than a sweep counts", text);
  out = r;
  return {};
}

std::string to_string(const SeedRange& r) { return fmt::format("{}..{}", r.first, r.last); }

std::string parse_shard(std::string_view text, Shard& out) {
  const std::size_t slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !parse_u64(text.substr(0, slash), s.index) ||
      !parse_u64(text.substr(slash + 1), s.count))
    return fmt::format("'{}' is not a shard: write K/N, shard K of N counting from 1, e.g. 2/8", text);
  if (s.count == 0 || s.index == 0 || s.index > s.count)
    return fmt::format("'{}' is not a shard: K/N needs 1 <= K <= N (shards count from 1)", text);
  out = s;
  return {};
}

std::string to_string(const Shard& s) { return fmt::format("{}/{}", s.index, s.count); }

namespace {

constexpr std::string_view kAuto = "auto";

/// "auto" or "auto/N": the count N (0 when not given), or false when `text` is neither.
bool auto_count(std::string_view text, std::uint64_t& count, std::string& why) {
  if (text.substr(0, kAuto.size()) != kAuto) return false;
  const std::string_view rest = text.substr(kAuto.size());
  count = 0;
  if (rest.empty()) return true;
  if (rest.front() != '/' || !parse_u64(rest.substr(1), count) || count == 0)
    why = fmt::format("'{}' is not a shard: auto/N needs a count N of 1 or more", text);
  return true;
}

/// The environment's value of `name` as a whole number; `why` says what is wrong with it.
std::optional<std::uint64_t> env_number(const EnvLookup& env, const char* name, std::string& why) {
  const std::optional<std::string> v = env(name);
  if (!v) return std::nullopt;
  std::uint64_t n = 0;
  if (!parse_u64(*v, n)) {
    why = fmt::format("--shard auto: {}='{}' is not a whole number", name, *v);
    return std::nullopt;
  }
  return n;
}

/// The runner's K and N (N 0: it gives none), from the first runner whose index variable is set.
std::string runner_shard(const EnvLookup& env, Shard& s, std::string& source) {
  std::string why;
  if (env("JOB_COMPLETION_INDEX")) {
    const auto i = env_number(env, "JOB_COMPLETION_INDEX", why);
    if (!i) return why;
    if (*i == UINT64_MAX)  // K = index + 1 would wrap to 0
      return fmt::format("--shard auto: JOB_COMPLETION_INDEX={} is past any shard a count can name", *i);
    s = {*i + 1, 0};
    source = "JOB_COMPLETION_INDEX (Kubernetes Indexed Job)";
  } else if (env("CI_NODE_INDEX")) {
    const auto i = env_number(env, "CI_NODE_INDEX", why);
    const auto n = env_number(env, "CI_NODE_TOTAL", why);
    if (!why.empty()) return why;
    s = {i.value_or(0), n.value_or(0)};
    source = "CI_NODE_INDEX/CI_NODE_TOTAL (GitLab)";
  } else if (env("SLURM_ARRAY_TASK_ID")) {
    const auto id = env_number(env, "SLURM_ARRAY_TASK_ID", why);
    const auto min = env_number(env, "SLURM_ARRAY_TASK_MIN", why);
    const auto n = env_number(env, "SLURM_ARRAY_TASK_COUNT", why);
    // --array=0-15:4 runs tasks 0, 4, 8, 12: SLURM_ARRAY_TASK_STEP 4, and K counts the steps.
    const auto step = env_number(env, "SLURM_ARRAY_TASK_STEP", why);
    if (!why.empty()) return why;
    if (id.value_or(0) < min.value_or(0))
      return fmt::format("--shard auto: SLURM_ARRAY_TASK_ID {} is below SLURM_ARRAY_TASK_MIN {}", *id, *min);
    const std::uint64_t by = step.value_or(1);
    const std::uint64_t from_min = *id - min.value_or(0);
    if (by == 0 || from_min % by != 0)
      return fmt::format("--shard auto: SLURM_ARRAY_TASK_ID {} is not SLURM_ARRAY_TASK_MIN {} plus a whole number of "
                         "SLURM_ARRAY_TASK_STEP {}: give --shard K/N",
                         *id, min.value_or(0), by);
    s = {from_min / by + 1, n.value_or(0)};
    source = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_MIN/SLURM_ARRAY_TASK_STEP/SLURM_ARRAY_TASK_COUNT (Slurm)";
  } else {
    return "--shard auto: none of JOB_COMPLETION_INDEX (Kubernetes), CI_NODE_INDEX (GitLab) or SLURM_ARRAY_TASK_ID "
           "(Slurm) is set: give --shard K/N";
  }
  return {};
}

}  // namespace

std::string check_shard_spec(std::string_view text) {
  std::uint64_t count = 0;
  std::string why;
  if (auto_count(text, count, why)) return why;
  Shard s;
  return parse_shard(text, s);
}

std::string resolve_shard(std::string_view text, const EnvLookup& env, Shard& out, std::string& source) {
  std::uint64_t given = 0;
  std::string why;
  if (!auto_count(text, given, why)) {
    source.clear();
    return parse_shard(text, out);
  }
  if (!why.empty()) return why;
  Shard s;
  if (std::string e = runner_shard(env, s, source); !e.empty()) return e;
  if (s.count != 0 && given != 0 && s.count != given)
    return fmt::format("--shard {}: the runner says {} shards ({}), not {}", text, s.count, source, given);
  if (s.count == 0) s.count = given;
  if (s.count == 0) return fmt::format("--shard auto: {} gives the index but not the count: write --shard auto/N", source);
  if (s.index == 0 || s.index > s.count)
    return fmt::format("--shard auto: {} gives shard {} of {}, outside 1..{}", source, s.index, s.count, s.count);
  out = s;
  return {};
}

std::uint64_t shard_size(const SeedRange& r, const Shard& s) {
  const std::uint64_t span = r.last - r.first;  // seeds - 1
  const std::uint64_t first = s.index - 1;
  return first > span ? 0 : (span - first) / s.count + 1;
}

bool in_shard(std::uint64_t seed, const SeedRange& r, const Shard& s) {
  return seed >= r.first && seed <= r.last && (seed - r.first) % s.count == s.index - 1;
}

std::uint64_t shard_seed(const SeedRange& r, const Shard& s, std::uint64_t i) {
  return r.first + (s.index - 1) + i * s.count;
}

SeedResult run_seed(const Scenario& s, std::uint64_t seed, const SweepOptions& o) {
  RunOptions ro;
  ro.seed = seed;
  ro.tie_break = o.tie_break;
  ro.until = o.until;
  ro.registry = o.registry;
  ro.budgets = o.budgets;
  ro.on_loop = o.on_loop;
  try {
    std::optional<Swarmed> sw;
    if (o.swarm) sw = swarm(s, seed, o.registry != nullptr ? *o.registry : Registry::builtin());
    const Scenario& as_run = sw ? sw->scenario : s;
    const std::optional<SwarmChoice> choice = sw ? std::optional(sw->choice) : std::nullopt;
    // The trace is kept (the checks read it) and freed with the RunResult before a second run.
    SeedResult first = summarise(s, run(as_run, ro), choice);
    if (o.check_determinism) compare(first, summarise(s, run(as_run, ro), choice));
    return first;
  } catch (const std::exception& e) {
    SeedResult r;
    r.seed = seed;
    r.failed.push_back(std::string("error: ") + e.what());
    if (o.check_determinism) r.determinism = "ok";
    return r;
  }
}

unsigned sweep_jobs(unsigned jobs, std::uint64_t pending) {
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<std::uint64_t>(pending, 1, jobs == 0 ? cores : jobs));
}

namespace {

/// With stop_at_first_failure, results wait here until every earlier position has finished, and
/// reach `each` in seed order; delivery stops at the first failure.
class InOrder {
 public:
  /// Hands over what is now in order; false once a failure was delivered (or `each` said stop).
  bool deliver(std::uint64_t position, const SeedResult& r, const std::function<bool(const SeedResult&)>& each) {
    waiting_.emplace(position, r);
    return flush(each);
  }
  /// A position done before (a resumed seed) counts as delivered.
  bool skip(std::uint64_t position, const std::function<bool(const SeedResult&)>& each) {
    skipped_.insert(position);
    return flush(each);
  }

 private:
  bool flush(const std::function<bool(const SeedResult&)>& each) {
    for (;;) {
      if (stopped_) return false;
      if (skipped_.erase(next_) != 0) {
        ++next_;
        continue;
      }
      const auto first = waiting_.find(next_);
      if (first == waiting_.end()) return true;
      stopped_ = !each(first->second) || !first->second.passed;
      waiting_.erase(first);
      ++next_;
    }
  }

  std::uint64_t next_ = 0;
  bool stopped_ = false;
  std::map<std::uint64_t, SeedResult> waiting_;
  std::set<std::uint64_t> skipped_;
};

}  // namespace

std::uint64_t run_seeds(const Scenario& s, const SeedRange& range, const Shard& shard, const SweepOptions& o,
                        const std::vector<std::uint64_t>& done, const std::function<bool(const SeedResult&)>& each) {
  const std::uint64_t positions = shard_size(range, shard);
  std::atomic<std::uint64_t> next{0};
  std::mutex mutex;
  std::uint64_t ran = 0;
  InOrder order;
  std::atomic<std::uint64_t> limit{positions};  // no position past a known failure is started
  const auto work = [&] {
    for (;;) {
      const std::uint64_t i = next.fetch_add(1);
      if (i >= positions || i >= limit.load()) return;
      const std::uint64_t seed = shard_seed(range, shard, i);
      if (std::binary_search(done.begin(), done.end(), seed)) {
        if (o.stop_at_first_failure) {
          std::lock_guard lock(mutex);
          if (!order.skip(i, each)) next.store(positions);
        }
        continue;
      }
      const SeedResult r = run_seed(s, seed, o);
      if (o.stop_at_first_failure && !r.passed) {
        std::uint64_t seen = limit.load();
        while (i < seen && !limit.compare_exchange_weak(seen, i)) {
        }
      }
      std::lock_guard lock(mutex);
      ++ran;
      const bool go_on = o.stop_at_first_failure ? order.deliver(i, r, each) : each(r);
      if (!go_on) next.store(positions);
    }
  };
  {
    std::vector<std::jthread> workers;
    const unsigned jobs = sweep_jobs(o.jobs, positions - std::min<std::uint64_t>(positions, done.size()));
    for (unsigned i = 0; i < jobs; ++i) workers.emplace_back(work);
  }
  return ran;
}

std::vector<SeedResult> run_seeds(const Scenario& s, const SeedRange& range, const SweepOptions& o) {
  std::vector<SeedResult> out;
  run_seeds(s, range, Shard{}, o, {}, [&](const SeedResult& r) {
    out.push_back(r);
    return true;
  });
  std::sort(out.begin(), out.end(), [](const SeedResult& a, const SeedResult& b) { return a.seed < b.seed; });
  return out;
}

}  // namespace lic::scenarios
