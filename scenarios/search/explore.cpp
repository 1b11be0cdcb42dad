#include "scenarios/search/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>

#include "scenarios/run/judge.hpp"
#include "scenarios/search/reach.hpp"
#include "scenarios/search/schedule.hpp"

namespace lic::scenarios {

namespace {

/// A run to make: a plain seed of the file, or a mutated schedule.
struct Candidate {
  bool plain = false;
  std::uint64_t seed = 0;
  Scenario schedule;  ///< a mutant (plain: unused)
  std::string how;
};

/// What a run gave.
struct Outcome {
  bool ran = false;  ///< false: the runner refused it or a budget stopped it (counts as passing)
  std::vector<CheckResult> checks;
  Scenario schedule;  ///< the explicit schedule it ran (a plain seed: its concretisation)
  Signature signature;
  RunMarks marks;
  std::vector<std::optional<double>> margins;
  std::optional<double> least;
  std::uint64_t trace_hash = 0;
};

class Explorer {
 public:
  Explorer(const Scenario& s, const ExploreOptions& o)
      : s_(s), o_(o), reg_(o.registry != nullptr ? *o.registry : Registry::builtin()), palette_(palette_of(s)),
        checks_(effective_checks(s)), root_(Rng(o.seed).derive("explore")) {
    hits_.assign(kSignatureSlots, 0);
    // The streams a run draws from, for one to be re-seeded alone (one run of the file, at its
    // own seed, before the search; a file without faults varies its seed alone).
    if (mutable_schedule(palette_)) {
      ReachOptions ro;
      ro.registry = &reg_;
      ro.budgets = o.budgets;
      palette_.streams = streams_drawn(s, ro);
      // A fault's own stream draws its times, and a schedule's faults are explicit: nothing to vary.
      std::erase_if(palette_.streams, [](const std::string& k) { return k.rfind("fault ", 0) == 0; });
    }
  }

  ExploreResult run();

 private:
  Candidate draw(std::size_t index);
  std::size_t pick_by_margin(Rng& rng, std::size_t check) const;
  std::size_t pick_by_rarity(Rng& rng) const;
  double rarity(const CorpusEntry& e) const;
  Outcome execute(const Candidate& c) const;
  /// Folds one run in; true when it failed.
  bool fold(std::size_t index, const Candidate& c, Outcome&& out, ExploreResult& r);
  void evict();

  const Scenario& s_;
  const ExploreOptions& o_;
  const Registry& reg_;
  MutationPalette palette_;
  std::vector<CheckDecl> checks_;
  Rng root_;
  std::vector<CorpusEntry> corpus_;
  std::vector<std::uint32_t> hits_;  // runs that reached each slot
  std::size_t reached_ = 0;
  std::vector<std::optional<double>> best_;
  std::vector<std::optional<double>> first_;  // per check, the first margin it reported
  /// Per check, the corpus entry with its smallest margin (none: no entry has a margin for it).
  std::vector<std::optional<std::size_t>> best_entry_;
  std::optional<std::uint64_t> first_hash_;  // the first run's trace hash
  bool hashes_differ_ = false;               // some run's trace differed from the first's
  std::size_t plains_ = 0;                   // plain seeds drawn (draw() runs in index order)
};

/// Plain seeds first: this many (a tenth of the budget, 4 to 16).
std::size_t plain_first(std::size_t runs) { return std::clamp<std::size_t>(runs / 100, 2, 4); }

double least_of(const CorpusEntry& e) { return e.least.value_or(std::numeric_limits<double>::infinity()); }

/// An entry's margin for one check (infinite when it has none).
double margin_of(const CorpusEntry& e, std::size_t check) {
  return check < e.margins.size() && e.margins[check] ? *e.margins[check] : std::numeric_limits<double>::infinity();
}

std::size_t Explorer::pick_by_margin(Rng& rng, std::size_t check) const {
  std::size_t best = rng.uniform(corpus_.size());
  for (int k = 0; k < 2; ++k) {
    const std::size_t c = rng.uniform(corpus_.size());
    if (margin_of(corpus_[c], check) < margin_of(corpus_[best], check)) best = c;
  }
  return best;
}

double Explorer::rarity(const CorpusEntry& e) const {
  double score = 0;
  for (const std::uint32_t slot : e.signature.slots) score += 1.0 / std::max<std::uint32_t>(hits_[slot], 1);
  return score / static_cast<double>(1 + e.picked);
}

std::size_t Explorer::pick_by_rarity(Rng& rng) const {
  std::size_t best = rng.uniform(corpus_.size());
  for (int k = 0; k < 2; ++k) {
    const std::size_t c = rng.uniform(corpus_.size());
    if (rarity(corpus_[c]) > rarity(corpus_[best])) best = c;
  }
  return best;
}

Candidate Explorer::draw(std::size_t index) {
  Rng rng = root_.derive(static_cast<std::uint64_t>(index));
  Candidate c;
  const bool mutate_ok = mutable_schedule(palette_) && !corpus_.empty();
  const std::uint64_t roll = rng.uniform(100);
  if (index < plain_first(o_.runs) || !mutate_ok || roll < 10) {
    c.plain = true;
    c.seed = o_.plain_seed ? o_.plain_seed(plains_++) : rng.uniform(1'000'000'000) + 1;
    c.how = fmt::format("seed {}", c.seed);
    return c;
  }
  // The energy: a check with a margin, drawn at random (one whose margin never moves must not
  // hide another's), and the entry closest to failing it -- most often the closest of all, else
  // the closest of three -- or the entry whose coverage is rarest (the best of three).
  // A check whose margin has not moved since the first run says nothing of where to go: three
  // times in four the check is drawn from those that moved, when any did.
  std::vector<std::size_t> guided, moved;
  for (std::size_t k = 0; k < best_entry_.size(); ++k) {
    if (!best_entry_[k]) continue;
    guided.push_back(k);
    if (first_[k] && best_[k] && *best_[k] < *first_[k]) moved.push_back(k);
  }
  if (!moved.empty() && rng.uniform(4) != 0) guided = std::move(moved);
  std::size_t parent = 0;
  if (!guided.empty() && roll < 80) {
    const std::size_t check = guided[rng.uniform(guided.size())];
    parent = roll < 60 ? *best_entry_[check] : pick_by_margin(rng, check);
  } else {
    parent = pick_by_rarity(rng);
  }
  ++corpus_[parent].picked;
  c.schedule = corpus_[parent].schedule;
  const Scenario* other = corpus_.size() > 1 ? &corpus_[rng.uniform(corpus_.size())].schedule : nullptr;
  std::string notes;
  for (const MutationNote& n : mutate(c.schedule, other, palette_, rng, &corpus_[parent].marks)) notes += (notes.empty() ? "" : "; ") + n;
  c.seed = c.schedule.seed;
  c.how = fmt::format("run {}: {}", corpus_[parent].run, notes);
  return c;
}

Outcome Explorer::execute(const Candidate& c) const {
  Outcome out;
  const Scenario& s = c.plain ? s_ : c.schedule;
  RunOptions ro;
  ro.seed = c.seed;
  ro.registry = &reg_;
  ro.budgets = o_.budgets;
  ro.partial_on_budget = true;
  try {
    RunResult r = scenarios::run(s, ro);
    if (!r.stopped.empty()) return out;
    out.ran = true;
    out.trace_hash = r.trace_hash;
    out.checks = std::move(r.checks);
    out.schedule = c.plain ? concretize(s_, c.seed, r.kept_events()) : c.schedule;
    out.signature = signature_of(r.kept_events(), out.checks);
    for (const CheckResult& k : out.checks) {
      out.margins.push_back(k.margin);
      if (k.margin && (!out.least || *k.margin < *out.least)) out.least = k.margin;
    }
    // The marks only a corpus entry needs (mutations aim at its run's): a run the corpus may
    // keep -- a slot no run reached, or a margin better than the best -- is measured before its
    // trace goes. Nothing is folded while a generation runs, so reading the state here is safe,
    // and a run kept at fold time is one of these (slots are only ever reached, margins only
    // get better).
    const bool fresh = std::any_of(out.signature.slots.begin(), out.signature.slots.end(), [&](std::uint32_t sl) { return hits_[sl] == 0; });
    bool closer = false;
    for (std::size_t k = 0; k < out.margins.size() && k < best_.size(); ++k)
      closer = closer || (out.margins[k] && (!best_[k] || *out.margins[k] < *best_[k]));
    if (fresh || closer) out.marks = marks_of(r.kept_events());
  } catch (const std::exception&) {
    return Outcome{};  // a schedule the runner refuses is not a failure of the system
  }
  return out;
}

void Explorer::evict() {
  // The entry furthest from failing, of those that are no check's best; the oldest among equals.
  constexpr std::size_t kMaxCorpus = 512;
  if (corpus_.size() <= kMaxCorpus) return;
  const auto is_best = [&](std::size_t i) {
    return std::any_of(best_entry_.begin(), best_entry_.end(), [&](const std::optional<std::size_t>& b) { return b == i; });
  };
  std::size_t worst = corpus_.size();
  for (std::size_t i = 0; i < corpus_.size(); ++i) {
    if (is_best(i)) continue;
    if (worst == corpus_.size() || least_of(corpus_[i]) > least_of(corpus_[worst])) worst = i;
  }
  if (worst == corpus_.size()) return;
  corpus_.erase(corpus_.begin() + static_cast<std::ptrdiff_t>(worst));
  for (std::optional<std::size_t>& b : best_entry_)
    if (b && *b > worst) --*b;
}

bool Explorer::fold(std::size_t index, const Candidate& c, Outcome&& out, ExploreResult& r) {
  ExploreStep step;
  step.run = index + 1;
  step.plain = c.plain;
  bool failed = false;
  if (out.ran) {
    if (!first_hash_) first_hash_ = out.trace_hash;
    hashes_differ_ = hashes_differ_ || out.trace_hash != *first_hash_;
    bool fresh = false;
    for (const std::uint32_t slot : out.signature.slots) {
      if (hits_[slot] == 0) fresh = true, ++reached_;
      ++hits_[slot];
    }
    bool closer = false;
    for (std::size_t k = 0; k < out.margins.size() && k < best_.size(); ++k) {
      if (!out.margins[k]) continue;
      r.has_margin[k] = true;
      if (!first_[k]) first_[k] = out.margins[k];
      if (!best_[k] || *out.margins[k] < *best_[k]) best_[k] = out.margins[k], closer = true;
    }
    if (const auto f = first_failing(out.checks, checks_, s_.expect_fail)) {
      failed = true;
      ExploreFailure x;
      x.run = index + 1;
      x.plain = c.plain;
      x.seed = c.seed;
      x.schedule = out.schedule;  // a plain seed's: its faults as explicit events
      x.check = checks_[*f];
      x.result = out.checks[*f];
      x.id = failure_id(x.result);
      x.how = c.how;
      const bool sought = !o_.accept || o_.accept(x);
      failed = sought;
      if (sought && !r.runs_to_first_failure) r.runs_to_first_failure = index + 1;
      const bool known = std::any_of(r.failures.begin(), r.failures.end(), [&](const ExploreFailure& y) { return y.id == x.id; });
      if (!known) r.failures.push_back(std::move(x));
    }
    if (fresh || closer) {
      CorpusEntry e{std::move(out.schedule), std::move(out.margins), out.least, std::move(out.signature), std::move(out.marks), index + 1, 0, c.how};
      corpus_.push_back(std::move(e));
      const std::size_t at = corpus_.size() - 1;
      for (std::size_t k = 0; k < best_entry_.size(); ++k)
        if (margin_of(corpus_[at], k) < (best_entry_[k] ? margin_of(corpus_[*best_entry_[k]], k) : std::numeric_limits<double>::infinity()))
          best_entry_[k] = at;
      step.kept = true;
      evict();
    }
  }
  step.failed = failed;
  step.coverage = reached_;
  step.best = best_;
  r.steps.push_back(std::move(step));
  return failed;
}

ExploreResult Explorer::run() {
  ExploreResult r;
  for (const CheckDecl& c : checks_) r.checks.push_back(check_title(c, reg_));
  r.has_margin.assign(checks_.size(), false);
  best_.assign(checks_.size(), std::nullopt);
  best_entry_.assign(checks_.size(), std::nullopt);
  first_.assign(checks_.size(), std::nullopt);
  // A file with no fault has only its seed to vary: plain seeds, until two runs show that the seed
  // changes nothing either (the same trace), when there is nothing to mutate at all.
  const bool seeds_only = !mutable_schedule(palette_);
  const std::size_t budget = o_.runs;
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const unsigned jobs = o_.jobs == 0 ? cores : o_.jobs;
  std::size_t done = 0;
  bool over = false;
  while (done < budget && !over) {
    if (o_.stop && o_.stop()) {
      r.stopped = true;
      break;
    }
    const std::size_t n = std::min(kExploreGeneration, budget - done);
    std::vector<Candidate> cands;
    for (std::size_t i = 0; i < n; ++i) cands.push_back(draw(done + i));
    std::vector<Outcome> outs(n);
    std::atomic<std::size_t> next{0};
    // The first failure in index order ends the search: the candidates after it need not run
    // (those before it all do, since they are taken in order), whatever the threads.
    std::atomic<std::size_t> last{n};
    const auto work = [&] {
      for (std::size_t i = next++; i < n && i <= last.load(); i = next++) {
        outs[i] = execute(cands[i]);
        if (!o_.keep_going && !o_.accept && outs[i].ran && first_failing(outs[i].checks, checks_, s_.expect_fail)) {
          std::size_t seen = last.load();
          while (i < seen && !last.compare_exchange_weak(seen, i)) {
          }
        }
      }
    };
    {
      std::vector<std::jthread> pool;
      for (unsigned t = 1; t < std::min<std::size_t>(jobs, n); ++t) pool.emplace_back(work);
      work();
    }
    for (std::size_t i = 0; i < n; ++i) {
      ++r.runs;
      const bool failed = fold(done + i, cands[i], std::move(outs[i]), r);
      if (failed && !o_.keep_going) {
        over = true;
        break;
      }
    }
    done += n;
    if (seeds_only && r.runs >= 2 && !hashes_differ_) {
      r.nothing_to_mutate = true;
      break;
    }
    if (o_.progress) {
      ExploreProgress p{r.runs, budget, corpus_.size(), reached_, r.failures.size(), &r.checks, &best_};
      o_.progress(p);
    }
  }
  r.coverage = reached_;
  for (std::uint32_t slot = 0; slot < hits_.size(); ++slot)
    if (hits_[slot] != 0) r.slots.push_back(slot);
  r.plain_runs = static_cast<std::size_t>(std::count_if(r.steps.begin(), r.steps.end(), [](const ExploreStep& s) { return s.plain; }));
  r.best = best_;
  r.corpus = std::move(corpus_);
  return r;
}

}  // namespace

ExploreResult explore(const Scenario& s, const ExploreOptions& o) { return Explorer(s, o).run(); }

}  // namespace lic::scenarios
