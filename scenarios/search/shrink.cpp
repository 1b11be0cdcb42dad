#include "scenarios/search/shrink.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "scenarios/faults/table.hpp"
#include "scenarios/file/fix.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/file/validate.hpp"
#include "scenarios/file/write.hpp"
#include "scenarios/run/judge.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/run/tree_build.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios {

namespace {

using faults::Fault;

// ---- Round values ----------------------------------------------------------------------------

/// The units a value is rounded to, coarsest first: a multiple of an earlier one reads rounder.
constexpr std::array<std::int64_t, 13> kUnits{
    kHour.ns,       kMinute.ns * 10,      kMinute.ns,           kSecond.ns * 10,      kSecond.ns,
    kMillisecond.ns * 100, kMillisecond.ns * 10, kMillisecond.ns, kMicrosecond.ns * 100, kMicrosecond.ns * 10,
    kMicrosecond.ns, 100,                  1};

/// A binary search stops when what is left to search is under 1/kPrecision of the value: the last
/// few percent are not worth a run each.
constexpr std::int64_t kPrecision = 16;

/// How rough a duration is: the position in kUnits of the coarsest unit it is a multiple of.
std::size_t roughness(Duration d) {
  for (std::size_t i = 0; i < kUnits.size(); ++i)
    if (d.ns % kUnits[i] == 0) return i;
  return kUnits.size();
}

/// The roundest value strictly between lo (>= 0) and hi, nearest their middle, in whole `grain`s
/// at least; none when there is none.
std::optional<Duration> roundest_between(Duration lo, Duration hi, std::int64_t grain) {
  const std::int64_t mid = lo.ns + (hi.ns - lo.ns) / 2;
  for (std::int64_t u : kUnits) {
    if (u < grain) break;
    const std::int64_t first = lo.ns / u + 1;   // the multiples of u above lo...
    const std::int64_t last = (hi.ns - 1) / u;  // ...and below hi
    if (first > last) continue;
    return Duration{std::clamp((mid + u / 2) / u, first, last) * u};
  }
  return std::nullopt;
}

/// How fine a search below `d` goes: a millisecond (a shorter time is no simpler to read), or the
/// coarsest unit below d when d itself is shorter.
std::int64_t grain(Duration d) {
  for (std::int64_t u : kUnits)
    if (u <= std::min(d.ns, kMillisecond.ns)) return u;
  return 1;
}

/// The values near `d` that are rounder than it, coarsest first (never 0: that would mean
/// something else, "until healed" or "no fault").
std::vector<Duration> rounder(Duration d) {
  std::vector<Duration> out;
  for (std::size_t i = 0; i < roughness(d) && i < kUnits.size(); ++i) {
    const std::int64_t u = kUnits[i];
    if (u >= d.ns) continue;  // it would round to 0, or to double the value
    const Duration c{(d.ns + u / 2) / u * u};
    if (c != d && (out.empty() || out.back() != c)) out.push_back(c);
  }
  return out;
}

/// The ratios near `r` with a smaller denominator (tenths, hundredths, thousandths), coarsest
/// first; never 0.
std::vector<Ratio> rounder(Ratio r) {
  r = reduce(r);
  std::vector<Ratio> out;
  for (std::uint64_t den : {10U, 100U, 1000U}) {
    __extension__ using Wide = unsigned __int128;
    const auto num = static_cast<std::uint64_t>((static_cast<Wide>(r.num) * den + r.den / 2) / r.den);
    const Ratio c = reduce(Ratio{num, den});
    if (num != 0 && c.den < r.den && (out.empty() || out.back() != c)) out.push_back(c);
  }
  return out;
}

/// The round values within a fifth of `d` either side that are rounder than it, coarsest unit
/// first, then nearest, then lower: 5.3 s gives 5 s and 6 s; 58 s gives 1 min and 50 s; 64 s
/// gives 1 min and 70 s (never 0).
std::vector<Duration> nearby(Duration d) {
  std::vector<Duration> out;
  for (std::size_t i = 0; i < roughness(d) && i < kUnits.size(); ++i) {
    const std::int64_t u = kUnits[i];
    std::array<std::int64_t, 2> near{d.ns / u * u, (d.ns / u + 1) * u};
    if (d.ns - near[0] > near[1] - d.ns) std::swap(near[0], near[1]);
    for (const std::int64_t c : near) {
      const std::int64_t off = c > d.ns ? c - d.ns : d.ns - c;
      if (c > 0 && off * 5 <= d.ns && std::find(out.begin(), out.end(), Duration{c}) == out.end()) out.push_back(Duration{c});
    }
  }
  return out;
}

// ---- What a person reads about a scenario ------------------------------------------------------

/// A time as a person reads it: 33.3712s, where the file may say 33371200us.
std::string offset(Time t) { return format_time(t); }

std::string join(const std::vector<Atom>& v) {
  std::string s;
  for (Atom a : v) s += (s.empty() ? "" : ", ") + std::string(a.text());
  return s;
}

std::string timing(const Fault& f) {
  std::string t = f.mtbf ? "mtbf " + format_duration(*f.mtbf) : "at " + offset(f.at.value_or(Time{}));
  if (f.every) t += ", every " + format_duration(*f.every);
  if (f.until) t += ", until " + offset(*f.until);
  return t;
}

/// What a fault is aimed at: a path, a name, a node, the sides of a cut, or all.
std::string aim(const Fault& f) {
  const faults::KindInfo& k = faults::info(f.kind);
  if (k.aim == faults::Aim::process || k.aim == faults::Aim::node) return f.target.text;
  if (k.aim == faults::Aim::sides) return "[" + join(f.side_a) + "]" + (f.side_b.empty() ? "" : " to [" + join(f.side_b) + "]");
  return "all";
}

std::string describe(const Fault& f) { return fmt::format("{} {}, {}", faults::info(f.kind).name, aim(f), timing(f)); }

std::size_t count_nodes(const std::vector<TreeNode>& trees) {
  std::size_t n = 0;
  for (const TreeNode& t : trees) n += 1 + t.services.size() + count_nodes(t.children);
  return n;
}

std::string describe(const TreeNode& t) {
  switch (t.kind) {
    case TreeNode::Kind::worker: return "worker " + t.behaviour.name;
    case TreeNode::Kind::supervisor:
      return fmt::format("{} supervisor of {} process{}", supervision::to_string(t.flags.strategy), count_nodes(t.children),
                         count_nodes(t.children) == 1 ? "" : "es");
    case TreeNode::Kind::lifecycle:
      return fmt::format("lifecycle supervisor of {} service{}", t.services.size(), t.services.size() == 1 ? "" : "s");
  }
  return "";
}


/// Takes the child, service or root tree at `path` (with what it holds) out; says what it was.
bool erase_path(std::vector<TreeNode>& nodes, const std::string& prefix, const std::string& path, std::string& what) {
  for (auto it = nodes.begin(); it != nodes.end(); ++it) {
    const std::string p = prefix + "/" + it->spec.id;
    if (p == path) {
      what = describe(*it);
      nodes.erase(it);
      return true;
    }
    if (path.rfind(p + "/", 0) != 0) continue;
    auto& svcs = it->services;
    const auto s = std::find_if(svcs.begin(), svcs.end(), [&](const ServiceDecl& d) { return p + "/" + d.name == path; });
    if (s != svcs.end()) {
      what = "service " + s->behaviour.name;
      svcs.erase(s);
      return true;
    }
    return erase_path(it->children, p, path, what);
  }
  return false;
}

/// The behaviour of the worker or lifecycle service at `path`, or null (a supervisor, or nothing);
/// `what` says which of the two.
BehaviourRef* behaviour_at(std::vector<TreeNode>& nodes, const std::string& prefix, const std::string& path,
                           std::string* what = nullptr) {
  for (TreeNode& t : nodes) {
    const std::string p = prefix + "/" + t.spec.id;
    if (p == path) {
      if (what != nullptr) *what = "worker";
      return t.kind == TreeNode::Kind::worker ? &t.behaviour : nullptr;
    }
    if (path.rfind(p + "/", 0) != 0) continue;
    for (ServiceDecl& d : t.services) {
      if (p + "/" + d.name != path) continue;
      if (what != nullptr) *what = "service";
      return &d.behaviour;
    }
    return behaviour_at(t.children, p, path, what);
  }
  return nullptr;
}

/// A behaviour's argument `name` as the file gives it, or null (its default then holds).
const ArgValue* given_arg(const BehaviourRef& b, const std::string& name) {
  for (const auto& [k, v] : b.args)
    if (k == name) return &v;
  return nullptr;
}

/// Sets argument `name` to `text` (written where it was, or added after the others).
void set_arg(BehaviourRef& b, const std::string& name, const std::string& text) {
  for (auto& [k, v] : b.args) {
    if (k == name) {
      v.scalar = text;
      return;
    }
  }
  b.args.emplace_back(name, ArgValue{text});
}

// ---- A fault's knobs ---------------------------------------------------------------------------

/// A duration a fault may carry, and whether shorter is simpler (a window, a time) or only a
/// rounder value is (a rate, a period: shorter would mean more faults).
struct Knob {
  const char* field;  ///< "timing" for when it fires, else the option's name
  bool shorter;
  std::optional<Duration> (*get)(const Fault&);
  void (*set)(Fault&, Duration);
};

std::optional<Duration> positive(Duration d) { return d > Duration::zero() ? std::optional(d) : std::nullopt; }

const std::array<Knob, 9> kKnobs{{
    // A repeating fault with an end moves with its end: the same firings, earlier.
    {"timing", true, [](const Fault& f) { return f.at ? positive(*f.at - Time{}) : std::nullopt; },
     [](Fault& f, Duration d) {
       if (f.every && f.until) f.until = *f.until - (*f.at - (Time{} + d));
       f.at = Time{} + d;
     }},
    {"timing", false, [](const Fault& f) { return f.every; }, [](Fault& f, Duration d) { f.every = d; }},
    {"timing", false, [](const Fault& f) { return f.until ? positive(*f.until - Time{}) : std::nullopt; },
     [](Fault& f, Duration d) { f.until = Time{} + d; }},
    {"timing", false, [](const Fault& f) { return f.mtbf; }, [](Fault& f, Duration d) { f.mtbf = d; }},
    {"duration", true, [](const Fault& f) { return positive(f.duration); }, [](Fault& f, Duration d) { f.duration = d; }},
    {"delay", true, [](const Fault& f) { return positive(f.delay); }, [](Fault& f, Duration d) { f.delay = d; }},
    {"restart_after", true, [](const Fault& f) { return f.restart_after; }, [](Fault& f, Duration d) { f.restart_after = d; }},
    // A stop's grace is the time the task is given to drain, as the quiet phase is the time given
    // to recover: shorter, any task loses work (a slip), so it is only made rounder.
    {"grace", false, [](const Fault& f) { return positive(f.grace); }, [](Fault& f, Duration d) { f.grace = d; }},
    // A skew is signed: its size is rounded, its sign kept.
    {"skew", false,
     [](const Fault& f) { return f.skew ? positive(*f.skew < Duration::zero() ? Duration::zero() - *f.skew : *f.skew) : std::nullopt; },
     [](Fault& f, Duration d) { f.skew = *f.skew < Duration::zero() ? Duration::zero() - d : d; }},
}};

// ---- The search ------------------------------------------------------------------------------

/// One thing removed or moved, for the list a person reads.
struct Edit {
  std::string subject;  ///< "fault gc_c1", "chaos phase", "child /root/a"
  std::string field;    ///< what of it changed; empty: the subject itself
  std::string from;     ///< what it was (a removal: what it is)
  std::string to;       ///< what it became; empty: removed
};

Edit removal(std::string subject, std::string what = {}) { return {std::move(subject), {}, std::move(what), {}}; }

/// A scenario being shrunk, with a name for each step that outlives the steps around it.
struct State {
  Scenario s;
  std::vector<std::string> step_keys;
};

/// What a run of a candidate says.
struct Outcome {
  bool fails = false;  ///< the kept check failed
  CheckResult check;
  Duration end{};
  std::uint64_t events = 0;
  std::map<std::string, std::vector<Time>> acted;  ///< fault name -> when it acted
};

/// How a candidate of a pass that changes what the system is, or crowds its faults, is judged
/// besides its failure (Shrinker::guarded_).
/// none: it fails alike, no longer than the original; saved: that, and a declared fix still
/// saves it; no_longer: no longer than now, and saved; shorter: shorter than now, and saved.
enum class Guard : std::uint8_t { none, saved, no_longer, shorter };

/// Sets a guard (or any setting of the search) for a scope and puts the one before back,
/// whatever way the scope ends.
template <class T>
class Scoped {
 public:
  Scoped(T& g, T now) : g_(g), was_(g) { g_ = now; }
  ~Scoped() { g_ = was_; }
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;

 private:
  T& g_;
  T was_;
};
using Guarded = Scoped<Guard>;

/// What became of one candidate: kept, run and not failing the same way, or neither (invalid,
/// tried before, too long, not saved by the fix, or the budget spent).
enum class Tried : std::uint8_t { kept, not_failing, other };

class Shrinker {
 public:
  Shrinker(const ShrinkOptions& o, const Registry& r) : o_(o), reg_(r) {}

  ShrinkResult shrink(const Scenario& s);

 private:
  bool start(const Scenario& s, ShrinkResult& r);
  RunResult run_one(const Scenario& s, std::uint64_t seed) const;
  Outcome read(const Scenario& s, const RunResult& r) const;
  Outcome judge(const Scenario& s) const;
  bool spent() const;
  bool attempt(State c, const std::vector<Edit>& edits);
  void hop_home(bool first);
  Tried try_one(State& c, const std::vector<Edit>& edits);
  void note(const Edit& e);
  void report() const;
  ShrinkSize size_of(const Scenario& s, const Outcome& out) const;
  void finish(const Scenario& from, ShrinkResult& r) const;

  void normalise(const Scenario& s);
  void rounds();
  bool try_subset(const State& base, const std::vector<std::size_t>& keep);
  void ddmin();
  void remove_each();
  void remove_children();
  void remove_nodes();
  void remove_buggify();
  void schedule_stochastic();
  void split_firings(std::size_t i, const std::vector<Time>& times);
  bool has_sibling(std::size_t i) const;
  void rename_survivors();
  void snap_to_grid();
  void shorten_phases();
  void cut_to_failure();
  void shift_together();
  void simplify_faults();
  void simplify_fault(std::size_t i);
  void narrow_sides(std::size_t i);
  void shorten_period(std::size_t i);
  void one_firing(std::size_t i);
  std::size_t never_heal(std::size_t i);
  std::size_t catch_earlier(std::size_t i);
  void round_nearby();
  void simplify_steps();
  void simplify_arguments();
  void simplify_argument(const std::string& path, const ArgInfo& a);
  void bisect(Duration& lo, Duration& hi, Duration probe, std::int64_t fine, const std::function<bool(Duration)>& keep);
  void search_int(std::int64_t v, const std::string& key, const std::function<bool(std::int64_t)>& keep);
  void shorten_quiet();
  std::optional<bool> fix_saves(const Scenario& s, bool reserved = false);
  void defer();
  std::size_t settle();
  void simplify(Duration value, bool shorter, const std::function<bool(Duration)>& keep, const std::string& key = {},
                bool top_first = false);

  const ShrinkOptions& o_;
  const Registry& reg_;
  std::uint64_t seed_ = 0;
  TieBreak tie_ = TieBreak::fifo;
  CheckDecl target_;
  FailureId id_;        ///< the identity of its first failure
  Budgets budgets_;     ///< each candidate's: the options', held to ten times the first run's events
  ShrinkSize before_;
  /// The most trace events a candidate may make: the original run's, or the run of the
  /// original at seed 1 when the search hopped there first (hop_home).
  std::uint64_t longest_ = 0;
  bool first_hop_ = false;  ///< hop_home's first try, held to longest_ alone
  State cur_;
  Outcome cur_out_;
  std::set<std::string> tried_;  ///< every candidate's YAML: none is run twice
  std::vector<Edit> edits_;
  std::map<std::string, std::string> given_;  ///< each fault and step as given, by subject
  std::string_view pass_ = "the scenario as given";
  std::size_t runs_ = 0;
  std::size_t reused_ = 0;
  std::size_t invalid_ = 0;
  std::size_t kept_ = 0;
  bool exhausted_ = false;
  bool stopped_ = false;
  /// Set by the passes that change what the system is (its arguments, its quiet phase) or crowd
  /// its faults (a repeating fault's period): a candidate must not lengthen the current trace
  /// (or must shorten it: a duration argument, where shorter is not simpler in itself, as a
  /// burst every 1 ms is not), and the file's fix must still save it.
  Guard guarded_ = Guard::none;
  /// Guarded candidates that failed the same way but that the fix, run, did not save.
  std::size_t unsaved_ = 0;
  /// Set within one binary search (simplify()): a guarded candidate that fails alike is kept
  /// without the fix's run, and the fix is run once when the search ends (settle()).
  bool deferring_ = false;
  /// What a deferred search has kept, oldest first, and what stood before it.
  struct Kept {
    State state;
    Outcome out;
    std::vector<Edit> edits;
  };
  std::vector<Kept> unverified_;
  std::optional<Kept> verified_;
  /// Set by the passes that move values (times, phases, arguments): a candidate that does not
  /// fail at the current seed is tried once more at another (seed_hop), and kept there.
  bool hopping_ = false;
  std::size_t hops_ = 0;  ///< runs at another seed so far (at most a fifth of the budget)
  /// Of them, in a row since one was last kept: at kHopsMissed the hops stop (a failure that
  /// does not depend on the seed keeps none, and each would be a run spent for nothing).
  std::size_t hops_missed_ = 0;
  static constexpr std::size_t kHopsMissed = 16;
  /// The seeds hop_home's first try looks at, from 1: the lowest where the file fails.
  static constexpr std::uint64_t kLowSeeds = 8;
  /// The faults a stochastic one was split into, one per firing -> the name it had.
  std::map<std::string, std::string> split_;
  bool snapped_ = false;  ///< snap_to_grid has had its one try
  /// Each value's last binary search: the longest value it found not to fail alike, by subject.
  std::map<std::string, Duration> floor_;
  std::map<std::string, std::int64_t> int_floor_;  ///< likewise, an int argument's
  std::size_t round_ = 0;  ///< the greedy passes' rounds so far
  /// The round (from 0) from which a value's search first probes where its last one ended
  /// (simplify()). From round 1, one seed of the pool file's 17 took another way and ended on a
  /// file of its own (a netsplit of 70 s at seed 2). From round 2, a budget of 200 runs ended the
  /// naive election at 790 events, not under 739 (a probe that failed alike cost one run more in
  /// a round that the budget cut short). From round 3, neither.
  static constexpr std::size_t kWarmFrom = 3;
  /// The cuts catch_earlier has tried to move, by name and time: each is tried once.
  std::set<std::pair<std::string, std::int64_t>> catch_tried_;
};

Outcome Shrinker::read(const Scenario& s, const RunResult& r) const {
  Outcome out;
  out.end = r.end - Time{};
  out.events = r.events;
  const std::vector<CheckDecl> checks = effective_checks(s);
  for (std::size_t i = 0; i < checks.size() && i < r.checks.size(); ++i) {
    if (!(checks[i] == target_)) continue;
    out.check = r.checks[i];
    out.fails = !r.checks[i].passed && (o_.any_failure || failure_id(r.checks[i]) == id_);
    break;
  }
  for (const TraceEvent& e : r.sim->trace().events())
    if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected) out.acted[e.text(keys::kFault)].push_back(e.time);
  return out;
}

RunResult Shrinker::run_one(const Scenario& s, std::uint64_t seed) const {
  RunOptions ro;
  ro.seed = seed;
  ro.tie_break = tie_;
  ro.registry = &reg_;
  ro.budgets = budgets_;
  // TraceMode::keep, the default, is the cheapest that judges: the checks read the kept trace
  // (hash mode keeps none, and every check would judge an empty one).
  return run(s, ro);
}

Outcome Shrinker::judge(const Scenario& s) const {
  try {
    return read(s, run_one(s, s.seed));
  } catch (const std::exception& e) {
    Outcome out;  // a candidate the runner refuses is not the same failure
    out.check.detail = e.what();
    return out;
  }
}

ShrinkSize Shrinker::size_of(const Scenario& s, const Outcome& out) const {
  ShrinkSize z;
  z.faults = s.faults.size();
  z.steps = s.script.size();
  z.processes = count_processes(s);
  z.nodes = s.nodes.size();
  z.checks = effective_checks(s).size();
  z.virtual_time = out.end;
  z.events = out.events;
  return z;
}

void Shrinker::report() const {
  if (o_.progress) o_.progress(ShrinkProgress{runs_, o_.max_runs, pass_, kept_, size_of(cur_.s, cur_out_)});
}

bool Shrinker::spent() const { return exhausted_ || stopped_; }

void Shrinker::note(const Edit& e) {
  if (e.to.empty()) {  // a removal says it all: what it was in the scenario as given
    // ...but for a split, which says where the faults named after it came from.
    std::erase_if(edits_, [&](const Edit& x) { return x.subject == e.subject && x.field != "split"; });
    edits_.push_back(e);
    if (const auto it = given_.find(e.subject); it != given_.end()) edits_.back().from = it->second;
    return;
  }
  for (Edit& x : edits_) {
    if (x.subject == e.subject && x.field == e.field) {
      x.to = e.to;  // moved again: from what it was first to what it is now
      return;
    }
  }
  edits_.push_back(e);
}

/// Keeps `c` when it is valid, reads back from its YAML as itself, was never tried, and fails
/// the kept check in a trace no longer than the original's. Every candidate comes through here.
/// How many times a scheduled fault fires in a chaos phase of `chaos` (`every` from `at`, before
/// `until`); none for a stochastic one.
std::optional<std::int64_t> firings(const Fault& f, Duration chaos) {
  if (f.mtbf || !f.at) return std::nullopt;
  if (!f.every) return 1;
  const Time end = std::min(f.until.value_or(Time{} + chaos), Time{} + chaos);
  if (*f.at >= end) return 0;
  return ((end - *f.at).ns - 1) / f.every->ns + 1;
}

/// Whether `c` fires some scheduled fault more often than `cur` does: moving a repeating fault's
/// start earlier, or its end later, turns two crashes into a storm, another failure (a slip that
/// the fix of restart_intensity_default showed).
bool more_firings(const Scenario& c, const Scenario& cur) {
  for (const Fault& f : c.faults) {
    const auto was = std::find_if(cur.faults.begin(), cur.faults.end(), [&](const Fault& g) { return g.name == f.name; });
    if (was == cur.faults.end()) continue;
    const auto now = firings(f, c.duration);
    const auto before = firings(*was, cur.duration);
    if (now && before && *now > *before) return true;
  }
  return false;
}

/// The seed a candidate of a value pass is tried at when it does not fail at `seed`: 1, or 2 from
/// seed 1. The same for every starting seed, so that shrinks of one bug from different seeds meet
/// on the same draws, and on the same file.
std::uint64_t seed_hop(std::uint64_t seed) { return seed == 1 ? 2 : 1; }

bool Shrinker::attempt(State c, const std::vector<Edit>& edits) {
  const Tried t = try_one(c, edits);
  if (t != Tried::not_failing || !hopping_ || !o_.move_seed || hops_ >= o_.max_runs / 5 || hops_missed_ >= kHopsMissed)
    return t == Tried::kept;
  // A value moved can need other draws to fail as before (a stop that lands between two
  // batches at this seed, inside one at another): the same candidate at another seed.
  const std::uint64_t from = cur_.s.seed;
  c.s.seed = seed_hop(c.s.seed);
  std::vector<Edit> hopped = edits;
  hopped.push_back({"seed", "", std::to_string(from), std::to_string(c.s.seed)});
  const std::size_t runs = runs_;
  const bool kept = try_one(c, hopped) == Tried::kept;
  hops_ += runs_ - runs;
  hops_missed_ = kept ? 0 : hops_missed_ + (runs_ - runs);
  return kept;
}

/// The scenario as it stands, at the seed the value passes hop to: when it fails the same way there
/// too, the search goes on from there. Shrinks of one bug from different seeds then take the
/// same path whenever that seed fails (a bug that fails at most seeds), and meet on one file.
/// Before anything is removed, the run at seed 1 may be a little longer than the original's (a
/// bug that fails at every seed, where each seed's run has its own length): up to a quarter
/// longer, and the bound on every later candidate becomes that run's length, shorter or longer
/// than the original's. A bound kept from the starting seed's run would differ from seed to seed
/// and part the shrinks that met there (a naive election's from seed 3,000,001 took another way
/// at seed 4 than the others did, under a bound 210 events longer).
void Shrinker::hop_home(bool first) {
  if (!o_.move_seed || cur_.s.seed == seed_hop(0) || spent()) return;
  pass_ = "seed";
  // Before anything is removed, the lowest seed of 1..8 below the starting one where the file
  // fails the same way: a bug that fails at some seeds only (the ingest file's loss catches a
  // put at seeds 4, 14, 34, ...) then starts from one seed whichever failing seed it came from.
  // Later, only seed 1.
  const std::uint64_t start = cur_.s.seed;
  const std::uint64_t last = !first ? seed_hop(0) : start == 0 ? kLowSeeds : std::min(kLowSeeds, start - 1);
  for (std::uint64_t k = seed_hop(0); k <= last && !spent(); ++k) {
    State c = cur_;
    c.s.seed = k;
    const Edit e{"seed", "", std::to_string(start), std::to_string(k)};
    const std::uint64_t was = longest_;
    if (first) longest_ = was + was / 4;
    const Scoped<bool> any_length(first_hop_, first);
    if (attempt(std::move(c), {e})) {
      if (first) longest_ = cur_out_.events;
      return;
    }
    longest_ = was;
  }
}

Tried Shrinker::try_one(State& c, const std::vector<Edit>& edits) {
  if (spent()) return Tried::other;
  if (more_firings(c.s, cur_.s) || !validate(c.s, reg_).empty()) {
    ++invalid_;
    return Tried::other;
  }
  std::string text = to_yaml(c.s);
  if (!tried_.insert(text).second) {
    ++reused_;  // judged before (and not kept then, or it would be the current one)
    return Tried::other;
  }
  const ParseResult back = parse_scenario(text, "shrunk.yaml", reg_);
  if (!back.ok() || !(back.scenario == c.s)) {  // the file would not be what was judged
    ++invalid_;
    return Tried::other;
  }
  // The budget is looked at here, just before a run, and nowhere else. A deferred search keeps
  // one run for the fix at its end (settle()), or what it found would all be undone.
  if (runs_ + (deferring_ && !unverified_.empty() ? 1 : 0) >= o_.max_runs) exhausted_ = true;
  else if (o_.stop && o_.stop()) stopped_ = true;
  if (spent()) return Tried::other;
  Outcome out = judge(c.s);
  ++runs_;
  const bool failing = out.fails;
  bool keep = out.fails && (guarded_ == Guard::shorter ? out.events < cur_out_.events
                            : guarded_ == Guard::no_longer ? out.events <= cur_out_.events
                                                           : out.events <= longest_);
  // At another seed a candidate is kept only with a trace no longer than the current one: a
  // shorter chaos phase whose other draws run longer is not smaller.
  if (c.s.seed != cur_.s.seed && !first_hop_) keep = keep && out.events <= cur_out_.events;
  if (keep && guarded_ != Guard::none && !c.s.fix.empty() && !deferring_) {
    const std::optional<bool> saved = fix_saves(c.s);
    keep = saved.value_or(false);
    unsaved_ += saved == false ? 1 : 0;  // counted only after a run with the fix
  }
  if (keep) {
    cur_ = std::move(c);
    cur_out_ = std::move(out);
    ++kept_;
    for (const Edit& e : edits) note(e);
    if (deferring_ && guarded_ != Guard::none && !cur_.s.fix.empty()) unverified_.push_back({cur_, cur_out_, edits_});
  }
  report();
  return keep ? Tried::kept : failing ? Tried::other : Tried::not_failing;
}

// ---- Starting and finishing ------------------------------------------------------------------

/// Runs the scenario as given: false when it passes (nothing to shrink).
bool Shrinker::start(const Scenario& s, ShrinkResult& r) {
  seed_ = o_.seed.value_or(s.seed);
  tie_ = o_.tie_break.value_or(s.tie_break);
  r.seed = seed_;
  r.tie_break = tie_;
  budgets_ = o_.budgets;
  const RunResult first = run_one(s, seed_);
  const std::vector<CheckDecl> checks = effective_checks(s);
  // The check to keep: the caller's, or the first failing one (npos: none fails).
  std::size_t keep = std::string::npos;
  if (o_.target) {
    for (std::size_t k = 0; k < checks.size() && k < first.checks.size(); ++k)
      if (checks[k] == *o_.target && !first.checks[k].passed) keep = k;
  } else if (const std::optional<std::size_t> k = first_failing(first.checks, checks, s.expect_fail)) {
    keep = *k;
  }
  if (keep == std::string::npos) return false;
  // A candidate may use ten times the events of the run it shrinks (a variant that loops at one
  // instant, or runs away, stops there), within the caller's own budgets.
  // The file's own budgets first (a default scales to it), then ten times what the first run
  // used: its events and the timers it cancelled, which --max-events counts too.
  const auto held = [](std::uint64_t given, std::uint64_t bound) { return given == 0 ? bound : std::min(given, bound); };
  const Budgets file = o_.budgets.scaled_to(s);
  const std::uint64_t used = first.sim->events_processed() + first.sim->timers_cancelled();
  budgets_.max_events = held(file.max_events, std::max<std::uint64_t>(used * 10, 100'000));
  budgets_.max_events_at_instant = held(file.max_events_at_instant, std::max<std::uint64_t>(used * 10, 100'000));
  r.failed = true;
  target_ = checks[keep];
  r.check = target_;
  r.original = first.checks[keep];
  id_ = failure_id(r.original);
  cur_.s = s;
  cur_out_ = read(s, first);
  before_ = size_of(s, cur_out_);
  longest_ = before_.events;
  r.before = before_;
  report();
  return true;
}

/// The seed and tie-break written in, each fault named as the injector names it (its random
/// stream stays the same when the faults before it go): the same run, as a file that says so.
/// Then the first candidate: the other checks gone.
void Shrinker::normalise(const Scenario& s) {
  cur_.s.seed = seed_;
  cur_.s.tie_break = tie_;
  for (std::size_t i = 0; i < cur_.s.faults.size(); ++i) {
    Fault& f = cur_.s.faults[i];
    if (f.name.empty()) f.name = fmt::format("{}#{}", faults::to_string(f.kind), i);
    f.ranges.clear();  // a range runs as its low end, which its field holds: the file says so plainly
  }
  cur_.s.fault_marks.clear();  // the marks of the file it came from, which it no longer matches
  for (std::size_t i = 0; i < s.script.size(); ++i) {
    cur_.step_keys.push_back(fmt::format("step {}: {} {}", i + 1, to_string(s.script[i].op), s.script[i].target));
    given_[cur_.step_keys.back()] = "at " + offset(s.script[i].at);
  }
  for (const Fault& f : cur_.s.faults) given_["fault " + f.name] = describe(f);
  tried_.insert(to_yaml(cur_.s));
  std::vector<Edit> edits;
  for (const CheckDecl& d : effective_checks(s))
    if (!(d == target_)) edits.push_back(removal("check " + d.name));
  State c = cur_;
  c.s.checks = {target_};
  c.s.expect_fail = {target_.name};
  pass_ = "checks";
  attempt(std::move(c), edits);
}

/// The shrunk file's own description: what it now holds and what it fails, not the original's
/// (which described a scenario it no longer is). Only the file's contents and the failure's
/// identity go in, never the seed: two seeds that shrink to one file write one description.
std::string shrunk_description(const Scenario& from, const Scenario& s, const FailureId& id) {
  std::string what = fmt::format("What is left of {} that still fails {}", from.name.empty() ? "the scenario" : from.name, to_string(id));
  const std::size_t n = count_processes(s);
  what += fmt::format(": {} process{} in {} tree{}", n, n == 1 ? "" : "es", s.trees.size(), s.trees.size() == 1 ? "" : "s");
  if (s.faults.empty()) what += ", no fault";
  for (std::size_t i = 0; i < s.faults.size(); ++i) what += (i == 0 ? "; faults: " : "; ") + describe(s.faults[i]);
  if (!s.script.empty()) what += fmt::format("; {} script step{}", s.script.size(), s.script.size() == 1 ? "" : "s");
  return what + ".";
}

void Shrinker::finish(const Scenario& from, ShrinkResult& r) const {
  r.scenario = cur_.s;
  r.scenario.file.clear();  // no longer the file it was read from
  r.scenario.description = shrunk_description(from, cur_.s, failure_id(cur_out_.check));
  r.failure = cur_out_.check;
  r.after = size_of(cur_.s, cur_out_);
  r.runs = runs_;
  r.reused = reused_;
  r.invalid = invalid_;
  r.exhausted = exhausted_;
  r.stopped = stopped_;
  r.unsaved = unsaved_;
  // A change to what a later removal took away (an argument of a worker whose tree went) is not
  // in the file: it is left out.
  const auto path = [](const std::string& subject) {
    const std::size_t sp = subject.find(' ');
    return sp == std::string::npos || subject.compare(sp + 1, 1, "/") != 0 ? std::string() : subject.substr(sp + 1, subject.find(' ', sp + 1) - sp - 1);
  };
  std::vector<std::string> gone;
  for (const Edit& e : edits_)
    if (e.to.empty() && !path(e.subject).empty()) gone.push_back(path(e.subject));
  const auto under_gone = [&](const std::string& p) {
    return !p.empty() && std::any_of(gone.begin(), gone.end(), [&](const std::string& g) { return p == g || p.rfind(g + "/", 0) == 0; });
  };
  for (const Edit& e : edits_) {
    if (e.to.empty()) r.removed.push_back(e.subject + (e.from.empty() ? "" : " (" + e.from + ")"));
    // A value moved and moved back (a seed hopped to 2, then home to 1) is no change.
    else if (!under_gone(path(e.subject)) && e.to != e.from)
      r.changed.push_back(e.subject + (e.field.empty() ? "" : " " + e.field) + ": " + e.from + " -> " + e.to);
  }
}

ShrinkResult Shrinker::shrink(const Scenario& s) {
  ShrinkResult r;
  if (!start(s, r)) return r;
  normalise(s);
  hop_home(true);  // before anything is removed
  ddmin();
  rounds();
  // At the fixed point, each repeating cut once for good. Not in the rounds: the two stalls'
  // loss windows become one only once the ratio is 100 % and the step has moved, and a try each
  // round would cost every file with a cut a run or two a round. One kept runs the rounds again
  // (the two stalls' fault and step then move from 42 s to 1 ms and 1.1 s).
  if (!spent()) {
    const std::size_t kept = kept_;
    pass_ = "cuts for good";
    for (std::size_t i = 0; i < cur_.s.faults.size() && !spent(); ++i) i = never_heal(i);
    if (kept_ != kept) rounds();
  }
  round_nearby();
  finish(s, r);
  return r;
}

void Shrinker::rounds() {
  // Greedy passes until a whole round keeps nothing (or two in a row keep only small moves,
  // below). Every kept candidate costs a run, so the budget bounds the rounds. The phases are cut
  // as soon as the faults have moved earlier, before the steps and the arguments: each of those
  // candidates then runs only as long as the failure needs (a 20-minute leader file's argument
  // pass ran 88 runs of 36,000 events each, and a budget of 200 ran out before the chaos phase
  // was cut).
  std::size_t small_rounds = 0;  // rounds in a row that kept only small moves
  for (bool again = true; again && !spent(); ++round_) {
    const std::size_t kept = kept_;
    const ShrinkSize at = size_of(cur_.s, cur_out_);
    hop_home(false);
    remove_each();
    remove_children();
    remove_nodes();
    remove_buggify();
    const std::size_t scheduled = kept_;
    schedule_stochastic();
    // Faults now scheduled, or one split into its firings: most are noise now that they no longer
    // move with the run, and each left costs the time pass a binary search of its own (a lease
    // file's 8 firings took 145 of a budget of 200 runs there, a leader file's 4 faults 88 runs of
    // 36,000 events each).
    if (kept_ > scheduled) {
      remove_each();
      // Scheduled, the faults act when they acted at this seed, whatever seed runs them: a
      // failure that needed only their times (a cut longer than detection) now holds at seed 1,
      // and every later pass runs there, so shrinks from different seeds meet on one file (the
      // remote sink's, held to each seed, kept each seed's own shorter cut).
      hop_home(false);
    }
    rename_survivors();
    snap_to_grid();
    cut_to_failure();
    shift_together();   // a coincidence of faults keeps its gaps while it moves earlier
    simplify_faults();  // times earlier first: the chaos phase can then end sooner
    shorten_phases();
    shorten_quiet();
    simplify_steps();
    simplify_arguments();
    // Another round when this one kept anything, unless it is the second round in a row that
    // kept only small moves: no fault, step, process or node gone, and a run less than 1 %
    // shorter, in trace events and in virtual time. Such rounds are near the fixed point, and
    // each costs every pass again (37 runs of a lease file's 399, for one event); one small round
    // is still followed by another, since a small move can open the way to a large one (a
    // store's keepalive 1 s shorter, then its chaos phase 1 s shorter: 6,079 events, then 5,548).
    const ShrinkSize now = size_of(cur_.s, cur_out_);
    const bool fewer = now.faults < at.faults || now.steps < at.steps || now.processes < at.processes || now.nodes < at.nodes;
    const bool shorter = now.events * 100 < at.events * 99 || now.virtual_time.ns / 99 < at.virtual_time.ns / 100;
    small_rounds = fewer || shorter ? 0 : small_rounds + 1;
    again = kept_ != kept && small_rounds < 2;
  }
}

// ---- Removing ----------------------------------------------------------------------------------

/// The faults and steps of `base` whose items (faults first, then steps) `keep` lists.
bool Shrinker::try_subset(const State& base, const std::vector<std::size_t>& keep) {
  State c{base.s, {}};
  c.s.faults.clear();
  c.s.script.clear();
  const std::size_t nf = base.s.faults.size();
  std::vector<Edit> edits;
  for (std::size_t k = 0; k < nf + base.s.script.size(); ++k) {
    const bool kept = std::find(keep.begin(), keep.end(), k) != keep.end();
    if (k < nf && kept) c.s.faults.push_back(base.s.faults[k]);
    if (k < nf && !kept) edits.push_back(removal("fault " + base.s.faults[k].name, describe(base.s.faults[k])));
    if (k >= nf && kept) {
      c.s.script.push_back(base.s.script[k - nf]);
      c.step_keys.push_back(base.step_keys[k - nf]);
    }
    if (k >= nf && !kept) edits.push_back(removal(base.step_keys[k - nf], "at " + offset(base.s.script[k - nf].at)));
  }
  return attempt(std::move(c), edits);
}

/// Zeller's ddmin over the faults and steps together: the smallest subset it can find (each
/// part removed failing alone) that still fails, in O(n log n) runs when most are noise.
void Shrinker::ddmin() {
  pass_ = "faults and steps";
  const State base = cur_;
  std::vector<std::size_t> items(base.s.faults.size() + base.s.script.size());
  std::iota(items.begin(), items.end(), std::size_t{0});
  if (items.empty() || try_subset(base, {})) return;
  std::size_t parts = 2;
  while (items.size() >= 2 && !spent()) {
    std::vector<std::vector<std::size_t>> chunks(parts);
    for (std::size_t i = 0; i < items.size(); ++i) chunks[i * parts / items.size()].push_back(items[i]);
    bool reduced = false;
    for (const auto& chunk : chunks) {
      if ((reduced = try_subset(base, chunk))) {
        items = chunk;
        parts = 2;
        break;
      }
    }
    for (std::size_t i = 0; !reduced && i < chunks.size(); ++i) {
      std::vector<std::size_t> rest;
      for (std::size_t x : items)
        if (std::find(chunks[i].begin(), chunks[i].end(), x) == chunks[i].end()) rest.push_back(x);
      if ((reduced = try_subset(base, rest))) {
        items = rest;
        parts = std::max<std::size_t>(parts - 1, 2);
      }
    }
    if (reduced) continue;
    if (parts >= items.size()) break;
    parts = std::min(parts * 2, items.size());
  }
}

void Shrinker::remove_each() {
  pass_ = "each fault and step";
  for (std::size_t i = cur_.s.faults.size(); i-- > 0 && !spent();) {
    State c = cur_;
    const Fault f = c.s.faults[i];
    c.s.faults.erase(c.s.faults.begin() + static_cast<std::ptrdiff_t>(i));
    attempt(std::move(c), {removal("fault " + f.name, describe(f))});
  }
  for (std::size_t i = cur_.s.script.size(); i-- > 0 && !spent();) {
    State c = cur_;
    const Edit e = removal(c.step_keys[i], "at " + offset(c.s.script[i].at));
    c.s.script.erase(c.s.script.begin() + static_cast<std::ptrdiff_t>(i));
    c.step_keys.erase(c.step_keys.begin() + static_cast<std::ptrdiff_t>(i));
    attempt(std::move(c), {e});
  }
}

/// Whole root trees, subtrees, workers and services, parents first: a subtree that goes takes
/// its children with it in one run. What a check, a fault or a step names stays (validation).
void Shrinker::remove_children() {
  pass_ = "children";
  // A process taken out changes the system, as an argument does: with a declared fix, a
  // candidate that fails alike is kept only when the fix still saves it. Without the guard a
  // cache shrunk to no backend at all failed "the same way", and its fix (a longer timeout)
  // could no longer save it: another bug (examples/cache's every_command.sh found it).
  const Guarded g(guarded_, Guard::saved);
  const std::vector<std::string> paths = tree_paths(cur_.s.trees);
  for (const std::string& p : paths) {
    if (spent()) return;
    State c = cur_;
    std::string what;
    if (!erase_path(c.s.trees, "", p, what)) continue;  // gone with its parent
    const bool root = p.find('/', 1) == std::string::npos;
    attempt(std::move(c), {removal((root ? "tree " : "child ") + p, what)});
  }
}

/// Nodes (with their links), then links; a node something still runs on or names stays.
void Shrinker::remove_nodes() {
  pass_ = "nodes and links";
  for (std::size_t i = cur_.s.nodes.size(); i-- > 0 && !spent();) {
    State c = cur_;
    const std::string name = c.s.nodes[i].name;
    c.s.nodes.erase(c.s.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    std::erase_if(c.s.links, [&](const LinkDecl& l) { return l.from == name || l.to == name; });
    attempt(std::move(c), {removal("node " + name)});
  }
  for (std::size_t i = cur_.s.links.size(); i-- > 0 && !spent();) {
    State c = cur_;
    const LinkDecl l = c.s.links[i];
    c.s.links.erase(c.s.links.begin() + static_cast<std::ptrdiff_t>(i));
    attempt(std::move(c), {removal("link " + l.from + " -> " + l.to)});
  }
}

/// Each buggify point the scenario turns on (a swarm case's): what is left is what the failure needs.
void Shrinker::remove_buggify() {
  pass_ = "buggify points";
  for (std::size_t i = cur_.s.buggify.size(); i-- > 0 && !spent();) {
    State c = cur_;
    const std::string point = c.s.buggify[i];
    c.s.buggify.erase(c.s.buggify.begin() + static_cast<std::ptrdiff_t>(i));
    attempt(std::move(c), {removal("buggify point " + point)});
  }
}

// ---- Moving values -----------------------------------------------------------------------------

/// Moves `value` toward simpler values while `keep` accepts them. With `shorter`: a binary
/// search over round values below it, to the millisecond (the shortest that still fails, if
/// failing is monotone in it), which tries the grain as soon as the value has moved at all, and
/// with `top_first` first tries just below the value.
/// Then the nearest rounder values, coarsest first, until one is kept.
void Shrinker::simplify(Duration value, bool shorter, const std::function<bool(Duration)>& keep, const std::string& key,
                        bool top_first) {
  if (shorter) {
    const Duration given = value;
    Duration lo = Duration::zero();
    Duration hi = value;
    // From round kWarmFrom, where the value still sits where the last search of it (by `key`)
    // ended, the value that search found not to fail alike is probed first: each round searches
    // every value again, and where nothing it depends on moved, that one run ends the search
    // (four or five runs a value a round before). Where it now fails alike, the search goes on
    // below it as from the start.
    const auto last = key.empty() ? floor_.end() : floor_.find(key);
    const bool warm = round_ >= kWarmFrom && last != floor_.end() && last->second > lo && last->second < hi &&
                      (hi - last->second).ns * kPrecision <= hi.ns;
    // With `top_first`, and no warm probe, the value is probed first just below itself (within
    // 1/kPrecision), where a value that cannot move ends its search in one run. For a behaviour's
    // durations (a timeout, a keepalive): in bench bugs only 285 of 3,794 such searches moved at
    // all, and the others cost about three runs each.
    Duration probe{};  // zero: none
    if (warm) probe = last->second;
    else if (top_first) probe = roundest_between(hi - Duration{hi.ns / kPrecision}, hi, grain(value)).value_or(Duration{});
    bisect(lo, hi, probe, grain(value), keep);
    if (!key.empty()) floor_[key] = lo;
    value = hi;
    // Round times fall on the instants periodic work runs (a reader's line every 50 ms, a tick
    // a second): a fault moved onto one can fail another way, or in a way the fix does not save,
    // and the search above stops where it began. Then (only then: it costs runs) earlier by
    // whole seconds, keeping the time's place within its second, then by tenths and hundredths
    // of a second likewise (55.78 s to 0.78 s to 0.08 s; issue 32: the pipeline's crash).
    for (const Duration period : {kSecond, kMillisecond * 100, kMillisecond * 10}) {
      if (value != given && period == kSecond) break;  // the round search moved it
      const Duration phase{value.ns % period.ns};
      if (value < period * 2 || phase == Duration::zero()) continue;
      std::int64_t low = 0, high = value.ns / period.ns;  // whole periods before the phase
      while (!spent() && low < high) {
        const std::int64_t mid = low + (high - low) / 2;
        if (keep(period * mid + phase)) high = mid, value = period * mid + phase;
        else low = mid + 1;
      }
    }
  }
  // Nearest rounder values; a value being shortened is only rounded down (9.5 s to 10 s made a
  // store's chaos phase and its trace longer again).
  for (Duration d : rounder(value))
    if (!(shorter && d > value) && (spent() || keep(d))) return;
}

/// simplify()'s binary search between `lo` (not failing alike) and `hi` (the value now): `probe`
/// first when not zero, then round values in whole `fine`s, narrowed until what is left is
/// under 1/kPrecision of `hi`. Leaves `lo` and `hi` where it ended.
void Shrinker::bisect(Duration& lo, Duration& hi, Duration probe, std::int64_t fine, const std::function<bool(Duration)>& keep) {
  const Duration start = hi;
  // A guarded search with a declared fix runs the fix once, at its end, not after every value
  // kept (a chaos phase halved from 85 s to 650 ms kept eleven values, and ran the fix eleven
  // times). Where the fix does not save the end, the search goes back to the last value it
  // saves (settle()) and goes on from there running the fix at each value, as before.
  std::vector<Duration> kept_at;  // the values kept while deferring, in order
  const bool deferred = guarded_ != Guard::none && !cur_.s.fix.empty();
  if (deferred) defer();
  const auto test = [&](Duration d) {
    const std::size_t was = unverified_.size();
    const bool k = keep(d);
    if (k && unverified_.size() > was) kept_at.push_back(d);
    return k;
  };
  if (probe > Duration::zero() && !spent()) (test(probe) ? hi : lo) = probe;
  // Once a value has moved down at all, the least it could be (the grain) is probed next: a
  // fault's time that does not matter, a window that does not, goes there in two runs, not in
  // a dozen halvings (issue 32's replays).
  bool galloped = false;
  for (bool again = true; again;) {
    while (!spent() && (hi - lo).ns * kPrecision > hi.ns) {
      const std::optional<Duration> mid = roundest_between(lo, hi, fine);
      if (!mid) break;
      const bool kept = test(*mid);
      (kept ? hi : lo) = *mid;
      if (kept && !galloped && lo.ns < fine && fine < hi.ns && !spent()) {
        galloped = true;
        (test(Duration{fine}) ? hi : lo) = Duration{fine};
      }
    }
    again = false;
    if (!deferring_) continue;
    const std::size_t saved = settle();
    if (saved == kept_at.size()) continue;
    lo = std::max(lo, kept_at[saved]);  // the first the fix did not save
    hi = saved == 0 ? start : kept_at[saved - 1];
    again = true;  // on from there, the fix run at each value kept
  }
}

/// The ways a stochastic fault that acted at `times` can be scheduled instead, simplest first:
/// once when it first acted, once when it last did, and its last two injections (`every` the gap
/// between them, `until` just after the second: a failure that needs two faults close together).
std::vector<Fault> scheduled(const Fault& f, const std::vector<Time>& times) {
  Fault once = f;
  once.mtbf.reset();
  once.after.reset();
  once.until.reset();
  std::vector<Fault> out;
  for (Time t : {times.front(), times.back()}) {
    once.at = t;
    if (out.empty() || out.back() != once) out.push_back(once);
  }
  if (times.size() < 2 || times[times.size() - 2] == times.back()) return out;
  Fault twice = once;
  twice.at = times[times.size() - 2];
  twice.every = times.back() - *twice.at;
  twice.until = times.back() + kNanosecond;
  out.push_back(twice);
  return out;
}

/// A stochastic fault that acted becomes a scheduled one (scheduled() says how): no draws left to
/// read, and times the next passes can move and round.
void Shrinker::schedule_stochastic() {
  pass_ = "stochastic faults";
  for (std::size_t i = 0; i < cur_.s.faults.size() && !spent(); ++i) {
    const Fault f = cur_.s.faults[i];
    const auto it = cur_out_.acted.find(f.name);
    if (!f.mtbf || it == cur_out_.acted.end() || it->second.empty()) continue;
    bool kept = false;
    for (const Fault& g : scheduled(f, it->second)) {
      State c = cur_;
      c.s.faults[i] = g;
      if ((kept = attempt(std::move(c), {{"fault " + f.name, "timing", timing(f), timing(g)}}))) break;
    }
    if (!kept) split_firings(i, it->second);
  }
}

/// A stochastic fault as one scheduled fault per time it acted, the first under its own name
/// (its random stream, for a loss ratio's draws, stays), the others `NAME.2`, `NAME.3`, ...: the
/// same run when the failure needs three of them, which the next passes then take out one by one.
void Shrinker::split_firings(std::size_t i, const std::vector<Time>& times) {
  constexpr std::size_t kMostFirings = 16;  // more, and removing them one by one costs too much
  if (times.size() < 2 || times.size() > kMostFirings) return;
  const Fault f = cur_.s.faults[i];
  const auto taken = [&](const std::string& name) {
    return std::any_of(cur_.s.faults.begin(), cur_.s.faults.end(), [&](const Fault& x) { return x.name == name; });
  };
  State c = cur_;
  std::vector<Fault> each;
  std::string when;
  for (std::size_t k = 0; k < times.size(); ++k) {
    Fault g = f;
    g.mtbf.reset();
    g.after.reset();
    g.every.reset();
    g.until.reset();
    g.at = times[k];
    // A name another fault has would share its random stream: no split then.
    if (k > 0 && taken(g.name = fmt::format("{}.{}", f.name, k + 1))) return;
    when += (k == 0 ? "at " : ", ") + offset(times[k]);
    each.push_back(std::move(g));
  }
  c.s.faults.erase(c.s.faults.begin() + static_cast<std::ptrdiff_t>(i));
  c.s.faults.insert(c.s.faults.begin() + static_cast<std::ptrdiff_t>(i), each.begin(), each.end());
  if (attempt(std::move(c), {{"fault " + f.name, "split", timing(f), when + " (a fault each)"}}))
    for (const Fault& g : each) split_[g.name] = f.name;
}

/// Whether fault `i` is one of a split fault's firings and another of them is still there.
bool Shrinker::has_sibling(std::size_t i) const {
  const auto it = split_.find(cur_.s.faults[i].name);
  if (it == split_.end()) return false;
  for (std::size_t k = 0; k < cur_.s.faults.size(); ++k) {
    const auto o = split_.find(cur_.s.faults[k].name);
    if (k != i && o != split_.end() && o->second == it->second) return true;
  }
  return false;
}

/// The last of a split fault's firings takes back the fault's own name (`s3_loss.2` is
/// `s3_loss` again, and draws from its stream): the firing left differs from seed to seed, and
/// the file need not say which it was.
void Shrinker::rename_survivors() {
  pass_ = "fault names";
  for (std::size_t i = 0; i < cur_.s.faults.size() && !spent(); ++i) {
    const auto it = split_.find(cur_.s.faults[i].name);
    if (it == split_.end() || it->second == it->first || has_sibling(i)) continue;
    const std::string own = it->second;
    if (std::any_of(cur_.s.faults.begin(), cur_.s.faults.end(), [&](const Fault& f) { return f.name == own; })) continue;
    State c = cur_;
    const std::string was = c.s.faults[i].name;
    c.s.faults[i].name = own;
    if (!attempt(std::move(c), {{"fault " + was, "name", was, own}})) continue;
    split_[own] = own;
    // The firing that had the name went; the name did not: the list says what the file holds.
    std::erase_if(edits_, [&](const Edit& x) { return x.subject == "fault " + own && x.to.empty(); });
  }
}

/// The grid's spacings, finest first (snap_to_grid). None below a second: faults packed into a
/// tree's first instants meet its start-up, which each seed orders its own way (a lease file's
/// cuts and pause 10 ms apart failed on 38 of seeds 1..100; its one cut on a 10 s grid, on all).
constexpr std::array<std::int64_t, 10> kGridMs{1'000, 2'000, 5'000, 10'000, 30'000, 60'000, 120'000, 300'000, 600'000, 1'200'000};

/// Once every fault left (two or more) fires once at a time of its own, they go onto one grid, in the order they
/// fire: the k-th at k × g, for the finest g of kGridMs where the file fails alike (and a declared
/// fix still saves it); a window (a cut's, a stall's) keeps its length, which is still the file's.
/// The times a seed's own draws gave are gone: shrinks of one bug from different seeds that kept
/// the same faults start the time pass from the same file, and end on the same file (four crashes
/// of a consumer, kept at each seed's own four times, gave a file per seed). A split fault's
/// firings are named again in that order (`NAME`, `NAME.2`, ...), and the list is written in it.
/// Then seed 1 is tried, on which shrinks from other seeds may have landed. Tried once: at most
/// 11 runs, and one more for each candidate that fails alike when the file declares a fix
/// (Guard::saved runs the fix on it).
void Shrinker::snap_to_grid() {
  if (snapped_ || spent()) return;
  const auto once = [](const Fault& f) { return f.at && !f.mtbf && !f.every && !f.until; };
  // One fault alone has no order to keep: the time pass's own search moves it as far.
  if (cur_.s.faults.size() < 2 || !std::all_of(cur_.s.faults.begin(), cur_.s.faults.end(), once)) return;
  snapped_ = true;
  pass_ = "fault grid";
  std::vector<Fault> order = cur_.s.faults;
  std::stable_sort(order.begin(), order.end(), [](const Fault& a, const Fault& b) { return *a.at < *b.at; });
  // A split fault's firings, in the order they fire: NAME, NAME.2, ... (the names it was split into).
  std::map<std::string, std::size_t> next;   // a split fault's name -> its firings named so far
  std::map<std::string, std::string> names;  // new name -> the split fault's
  std::vector<Edit> renamed;
  for (Fault& f : order) {
    const auto it = split_.find(f.name);
    if (it == split_.end()) continue;
    const std::size_t k = ++next[it->second];
    const std::string now = k == 1 ? it->second : fmt::format("{}.{}", it->second, k);
    // Under its new name (another firing's old one may go later, and note() would take a
    // rename filed under that name with it).
    if (now != f.name) renamed.push_back({"fault " + now, "name", f.name, now});
    names[f.name = now] = it->second;
  }
  const auto n = static_cast<std::int64_t>(order.size());
  const Guarded g(guarded_, Guard::saved);
  for (const std::int64_t ms : kGridMs) {
    const Duration step = kMillisecond * ms;
    if (spent() || step * n >= cur_.s.duration) return;  // the last would fire after the chaos phase
    State c = cur_;
    c.s.faults = order;
    for (std::int64_t k = 0; k < n; ++k) c.s.faults[static_cast<std::size_t>(k)].at = Time{} + step * (k + 1);
    std::vector<Edit> edits = renamed;
    edits.push_back({"faults", "grid", "their own times", fmt::format("every {}", format_duration(step))});
    if (!attempt(std::move(c), edits)) continue;
    for (const auto& [name, base] : names) {
      split_[name] = base;
      // A firing that had the name went earlier; the name did not: the list says what the file holds.
      const std::string subject = "fault " + name;
      std::erase_if(edits_, [&subject](const Edit& x) { return x.subject == subject && x.to.empty(); });
    }
    hop_home(false);  // the grid's times are any seed's: seed 1 may fail with them as well
    return;
  }
}

/// Every scheduled fault earlier by the same amount: a failure that needs two faults a few
/// milliseconds apart keeps that gap while the pair moves toward t=0 (each alone, moved earlier,
/// would break it), and the chaos phase can then end sooner.
void Shrinker::shift_together() {
  pass_ = "faults together";
  const Scoped<bool> hop(hopping_, true);
  std::optional<Time> first;
  std::size_t timed = 0;
  for (const Fault& f : cur_.s.faults) {
    if (!f.at || f.mtbf) continue;
    ++timed;
    first = std::min(first.value_or(*f.at), *f.at);
  }
  if (timed < 2 || !first || *first == Time{}) return;
  const Duration was = *first - Time{};
  simplify(was, true, [&](Duration d) {
    State c = cur_;
    for (Fault& f : c.s.faults) {
      if (!f.at || f.mtbf) continue;
      f.at = *f.at - (was - d);
      if (f.until) f.until = *f.until - (was - d);
    }
    return attempt(std::move(c), {{"faults", "earliest", offset(*first), offset(Time{} + d)}});
  }, "faults together");
}

/// The chaos phase, shorter. The quiet phase stays as written: it is the time the system is given
/// to recover, and a check that judges the end (converges, alive, leader_at_end) would fail
/// without it for want of time, not because of the bug.
void Shrinker::shorten_phases() {
  pass_ = "chaos phase";
  const Scoped<bool> hop(hopping_, true);
  // A shorter run can end before a fixed system has done its work (a job redelivered after the
  // crash): with a declared fix, the cut must leave it time to pass (the tutorial's jobs file).
  const Guarded g(guarded_, Guard::saved);
  const std::string was = format_duration(cur_.s.duration);
  simplify(cur_.s.duration, true, [&](Duration d) {
    State c = cur_;
    c.s.duration = d;
    return attempt(std::move(c), {{"chaos phase", "", was, format_duration(d)}});
  }, "chaos phase");
}

/// The chaos phase cut first, before the faults' times move, when faults are timed past the point
/// the failure needs: the faults it leaves with nothing to do go in one pass, and no run of the
/// time pass is spent on them (a lease file's 20-minute chaos phase spent 89 of its 200 runs on
/// the times of five faults of which four then went).
void Shrinker::cut_to_failure() {
  const auto late = [&] {
    return std::any_of(cur_.s.faults.begin(), cur_.s.faults.end(), [&](const Fault& f) { return f.at && !f.mtbf && *f.at >= Time{} + cur_.s.duration; });
  };
  const auto timed = std::count_if(cur_.s.faults.begin(), cur_.s.faults.end(), [](const Fault& f) { return f.at && !f.mtbf; });
  if (timed < 2 || spent()) return;
  shorten_phases();
  if (late()) remove_each();
}

void Shrinker::simplify_faults() {
  pass_ = "fault times and knobs";
  const Scoped<bool> hop(hopping_, true);
  for (std::size_t i = 0; i < cur_.s.faults.size() && !spent(); ++i) simplify_fault(i);
}

/// A cut between fewer nodes: each node taken out of either side while the side keeps one (an
/// empty `to` side, every other node, stays as it is).
void Shrinker::narrow_sides(std::size_t i) {
  for (const bool a : {true, false}) {
    for (std::size_t k = (a ? cur_.s.faults[i].side_a : cur_.s.faults[i].side_b).size(); k-- > 0 && !spent();) {
      if ((a ? cur_.s.faults[i].side_a : cur_.s.faults[i].side_b).size() < 2) break;
      State c = cur_;
      std::vector<Atom>& side = a ? c.s.faults[i].side_a : c.s.faults[i].side_b;
      side.erase(side.begin() + static_cast<std::ptrdiff_t>(k));
      const Edit e{"fault " + c.s.faults[i].name, "sides", aim(cur_.s.faults[i]), aim(c.s.faults[i])};
      attempt(std::move(c), {e});
    }
  }
}

/// A repeating fault's period shorter with as many firings (its end moves with them): the storm
/// comes sooner, and the chaos phase can end sooner after it.
void Shrinker::shorten_period(std::size_t i) {
  const std::optional<std::int64_t> n = firings(cur_.s.faults[i], cur_.s.duration);
  if (!cur_.s.faults[i].every || !n || *n < 2) return;
  const std::string subject = "fault " + cur_.s.faults[i].name;
  const std::string was = timing(cur_.s.faults[i]);
  // As many firings closer together can be a storm (another failure of the same kind), as one of
  // a split fault's firings moved alone can: guarded, as the arguments are.
  const Guarded g(guarded_, Guard::no_longer);
  simplify(*cur_.s.faults[i].every, true, [&](Duration d) {
    State c = cur_;
    Fault& f = c.s.faults[i];
    f.every = d;
    f.until = *f.at + d * (*n - 1) + kNanosecond;
    const Edit e{subject, "timing", was, timing(f)};
    return attempt(std::move(c), {e});
  }, subject + " every");
}

/// A repeating fault whose first firing alone does not fail: each later firing alone, the last
/// first. A stochastic fault scheduled as its last two injections (scheduled()) often needs only
/// the second, with another fault after it; kept as a pair, the first firing pins the fault to
/// t=0 while the second sits wherever this seed's draws put it (a netsplit at 0 s and 1,240 s
/// before a crash at 1,300 s), and the time passes cannot move the pair as one.
void Shrinker::one_firing(std::size_t i) {
  constexpr std::int64_t kMostFirings = 16;  // as split_firings: each is a run
  const std::optional<std::int64_t> n = firings(cur_.s.faults[i], cur_.s.duration);
  if (!n || *n < 2 || *n > kMostFirings) return;
  const std::string was = timing(cur_.s.faults[i]);
  // One firing fewer is simpler even where the run gets a little longer (the pool's peers ping
  // on through the first 54 s the first netsplit took away): up to a quarter longer than now,
  // and never more than a quarter longer than the original run, as the first move to seed 1
  // may be; the time pass then moves the firing left toward 0.
  const std::uint64_t longest = longest_;
  const std::uint64_t cap = before_.events + before_.events / 4;
  longest_ = std::max(longest, std::min(cur_out_.events + cur_out_.events / 4, cap));
  for (std::int64_t k = *n - 1; k >= 1 && !spent(); --k) {
    State c = cur_;
    Fault& f = c.s.faults[i];
    f.at = *f.at + *f.every * k;
    f.every.reset();
    f.until.reset();
    const Edit e{"fault " + f.name, "timing", was, timing(f)};
    if (attempt(std::move(c), {e})) break;
  }
  longest_ = longest;
}

/// A message between processes on two nodes: who sent it to whom (by process label and node),
/// with which tag, when it left and when it landed (a lost one: never).
struct Flight {
  Atom from, to, tag;
  Atom from_node, to_node;
  Time sent;
  std::optional<Time> landed;
  bool across = false;  ///< it crossed the cut's sides as they resolved when it was sent
  /// The same tag, from the same process or to the same one: a cut aimed by role
  /// (`node_of(leader)`) catches the leader's answer whichever node leads then.
  bool same_kind(const Flight& o) const {
    return tag == o.tag && ((from == o.from && from_node == o.from_node) || (to == o.to && to_node == o.to_node));
  }
};

constexpr Duration kCatchRadius = kSecond * 2;

/// Whether a message from node `x` to node `y` crosses cut `f`, its sides resolved with `names`
/// (registered name -> its process's node: `node_of(leader)`).
bool crosses(const Fault& f, const std::map<Atom, Atom>& names, Atom x, Atom y) {
  const auto side = [&names](const std::vector<Atom>& written) {
    std::vector<Atom> out;
    for (const Atom a : written) {
      const std::optional<std::string> name = faults::node_of_name(a.text());
      const auto it = name ? names.find(Atom(*name)) : names.end();
      if (!name) out.push_back(a);
      else if (it != names.end()) out.push_back(it->second);
    }
    return out;
  };
  const std::vector<Atom> a = side(f.side_a);
  const std::vector<Atom> b = side(f.side_b);
  const auto in = [](const std::vector<Atom>& v, Atom n) { return std::find(v.begin(), v.end(), n) != v.end(); };
  const auto other = [&](Atom n) { return f.side_b.empty() ? !in(a, n) : in(b, n); };
  return (in(a, x) && other(y)) || (!f.one_way && in(a, y) && other(x));
}

/// The messages between nodes of a run up to kCatchRadius after a cut `f` began at `at`.
struct CutFlights {
  std::set<std::pair<Atom, Atom>> cut;  ///< (from node, to node): the paths blocked at `at`
  std::vector<Flight> flights;          ///< sent before `at`, in send order
  std::vector<std::pair<Flight, Duration>> dropped;  ///< dropped by the cut, with how long after `at`
};

CutFlights cut_flights(const EventLog& log, const Fault& f, Time at) {
  const Atom partitioned("partitioned");
  CutFlights out;
  std::map<Pid, std::pair<Atom, Atom>> who;   // pid -> its node and label
  std::map<Atom, Atom> names;                 // registered name -> its process's node
  std::map<std::uint64_t, std::size_t> open;  // msg -> its flight, sent and not yet landed
  // A message's receiver, known by the time it is sent (it was spawned before), else none.
  const auto receiver = [&who](Flight& fl, Pid to) {
    const auto r = who.find(to);
    if (r == who.end()) return false;
    fl.to_node = r->second.first;
    fl.to = r->second.second;
    return fl.from_node != fl.to_node;
  };
  for (const TraceEvent& e : log) {
    if (e.time > at + kCatchRadius) break;
    if ((e.kind == EventKind::send || e.kind == EventKind::deliver || e.kind == EventKind::spawn) && !who.contains(e.pid))
      who[e.pid] = {e.node, e.label.name};
    if (e.kind == EventKind::register_name) names[e.tag] = e.node;
    else if (e.kind == EventKind::unregister_name && names.contains(e.tag) && names[e.tag] == e.node) names.erase(e.tag);
    else if (e.kind == EventKind::partition && e.time == at) out.cut.emplace(e.node, e.tag);
    else if (e.kind == EventKind::send && e.pid != e.other && e.time < at) {
      Flight fl{e.label.name, {}, e.tag, e.node, {}, e.time, std::nullopt};
      if (!receiver(fl, e.other)) continue;
      fl.across = crosses(f, names, fl.from_node, fl.to_node);
      open[e.msg] = out.flights.size();
      out.flights.push_back(fl);
    } else if (e.kind == EventKind::deliver) {
      const auto it = open.find(e.msg);
      if (it == open.end()) continue;
      out.flights[it->second].landed = e.time;
      open.erase(it);
    } else if (e.kind == EventKind::drop && e.time > at && e.reason == Reason::other(partitioned)) {
      // A drop is noted with the sender's label and node, and the receiver as its pid.
      Flight fl{e.label.name, {}, e.tag, e.node, {}, e.time, std::nullopt};
      if (receiver(fl, e.pid)) out.dropped.emplace_back(fl, e.time - at);
    }
  }
  return out;
}

/// The times a cut `f` that began at `at` in the run of `log` could begin instead, to catch an
/// earlier message of a kind it caught (the same tag, from the same sender or to the same
/// receiver), earliest first. It caught a message that was on the wire at `at` and never landed
/// (lost with the path), or one the cut dropped within kCatchRadius after `at` (an
/// acknowledgement sent a little later, which leaves the other end retransmitting). For each
/// earlier message of the kind that landed before `at`, and that crossed the cut's sides as they
/// stood when it was sent (`node_of(leader)`: the node the name was registered on then), the
/// roundest time inside its flight, or within as long before its send as the cut began before
/// the drop.
std::vector<Time> earlier_catches(const EventLog& log, const Fault& f, Time at) {
  const CutFlights run = cut_flights(log, f, at);
  // What the cut caught, each with the window before an earlier message's send in which a cut
  // catches that one alike (none: inside its flight).
  std::vector<std::pair<Flight, std::optional<Duration>>> caught;
  for (const Flight& fl : run.flights)
    if (!fl.landed && fl.sent + kCatchRadius >= at && run.cut.contains({fl.from_node, fl.to_node})) caught.emplace_back(fl, std::nullopt);
  for (const auto& [fl, after] : run.dropped)
    if (run.cut.contains({fl.from_node, fl.to_node})) caught.emplace_back(fl, after);
  std::set<Time> out;
  for (const auto& [c, before] : caught) {
    for (const Flight& fl : run.flights) {
      if (!fl.across || !fl.landed || *fl.landed >= at || !fl.same_kind(c) || (!before && fl.sent >= c.sent)) continue;
      const Duration lo = before ? fl.sent - *before - Time{} - Duration{1} : fl.sent - Time{};
      const Duration hi = before ? fl.sent - Time{} : *fl.landed - Time{};
      if (lo < Duration::zero()) continue;
      if (const std::optional<Duration> d = roundest_between(lo, hi, 1)) out.insert(Time{} + *d);
    }
  }
  return {out.begin(), out.end()};
}

/// A cut that fails only where its start catches a message on the wire, moved alone onto an
/// earlier message of the same kind. Issue 32's failover file: a server's answer, or the
/// client's acknowledgement of it, lost to a cut leaves the server retransmitting, and its
/// keepalive never starts. The time search cannot move such a cut: its round times miss the few
/// milliseconds an answer is unacknowledged. Up to the cut's time, the run with the cut earlier is
/// this run, so each earlier message is there to catch.
/// - The cut is the last fault to act. Those before it set the stage at this seed (a first cut
///   that moved the leadership to the node the second one caught), and trying each costs runs.
/// - Alone: the faults before it would end or overlap it where it lands.
/// - The earliest kFirstCatches catches, one by one, each at the roundest time inside its window;
///   the first that fails alike (and that the fix saves) is kept. The earliest is the state the
///   bug needs reached first (a leader's first answers), and the one shrinks from every seed find.
/// - A repeating cut becomes one firing; it is tried once at each time it is found at, and not in
///   the first second (as early as a person needs).
/// Returns the cut's place in the faults left.
std::size_t Shrinker::catch_earlier(std::size_t i) {
  constexpr std::size_t kFirstCatches = 6;
  constexpr std::int64_t kMostFirings = 16;  // as split_firings
  const Fault f = cur_.s.faults[i];          // a copy: a kept candidate replaces cur_
  const std::optional<std::int64_t> n = firings(f, cur_.s.duration);
  if (f.kind != faults::Kind::partition || !n || *n < 1 || *n > kMostFirings || *f.at < Time{} + kSecond || spent()) return i;
  const auto later = [&f](const Fault& g) { return g.at && *g.at > *f.at; };
  if (std::any_of(cur_.s.faults.begin(), cur_.s.faults.end(), later)) return i;
  if (!catch_tried_.emplace(f.name, f.at->ns).second || runs_ >= o_.max_runs) return i;
  const std::string_view pass = pass_;
  pass_ = "cut onto an earlier message";
  std::vector<Time> times;
  try {
    const RunResult r = run_one(cur_.s, cur_.s.seed);  // the current run again, for its trace
    // Any firing of a repeating cut may be the one that caught a message.
    std::set<Time> all;
    for (std::int64_t k = 0; k < *n; ++k)
      for (const Time t : earlier_catches(r.sim->trace().events(), f, *f.at + f.every.value_or(Duration::zero()) * k)) all.insert(t);
    times.assign(all.begin(), all.end());
  } catch (const std::exception&) {
    // As judge(): a run the runner refuses has nothing to catch (it ran when it was kept).
  }
  ++runs_;
  const Scoped<bool> hop(hopping_, false);  // a message's times are this seed's
  const Guarded g(guarded_, Guard::saved);
  for (std::size_t k = 0; k < std::min(kFirstCatches, times.size()) && !spent(); ++k) {
    State c = cur_;
    Fault moved = c.s.faults[i];
    const std::string was = timing(moved);
    moved.at = times[k];
    moved.every.reset();
    moved.until.reset();
    std::vector<Edit> edits{{"fault " + moved.name, "timing", was, timing(moved)}};
    for (std::size_t j = 0; j < cur_.s.faults.size(); ++j)
      if (j != i) edits.push_back(removal("fault " + cur_.s.faults[j].name, describe(cur_.s.faults[j])));
    c.s.faults = {moved};
    if (attempt(std::move(c), edits)) {
      i = 0;
      break;
    }
  }
  pass_ = pass;
  return i;
}

/// One fault: a narrower cut, `every` and `until` dropped (or one later firing kept alone), each
/// duration knob, its ratio.
void Shrinker::simplify_fault(std::size_t i) {
  narrow_sides(i);
  const std::string subject = "fault " + cur_.s.faults[i].name;
  auto change = [&](const char* field, auto&& mutate, std::string from, auto&& to_text) {
    State c = cur_;
    mutate(c.s.faults[i]);
    const Edit e{subject, field, std::move(from), to_text(c.s.faults[i])};
    return attempt(std::move(c), {e});
  };
  const std::string when = timing(cur_.s.faults[i]);
  if (cur_.s.faults[i].every && !change("timing", [](Fault& f) { f.every.reset(); }, when, timing)) one_firing(i);
  if (cur_.s.faults[i].until) change("timing", [](Fault& f) { f.until.reset(); }, timing(cur_.s.faults[i]), timing);
  shorten_period(i);
  for (const Knob& k : kKnobs) {
    const std::optional<Duration> v = k.get(cur_.s.faults[i]);
    if (!v) continue;
    const bool is_timing = std::string_view(k.field) == "timing";
    const std::string from = is_timing ? timing(cur_.s.faults[i]) : format_duration(*v);
    // One of a split fault's firings keeps its place among the others: alone, earlier, it would
    // crowd them into a storm (another failure of the same kind; the faults move together).
    const bool shorter = k.shorter && !(is_timing && has_sibling(i));
    const std::optional<Time> at = cur_.s.faults[i].at;
    simplify(*v, shorter, [&](Duration d) {
      return change(k.field, [&](Fault& f) { k.set(f, d); }, from,
                    [&](const Fault& f) { return is_timing ? timing(f) : format_duration(d); });
    }, fmt::format("{} knob {}", subject, &k - kKnobs.data()));
    // A cut the time search could not move much earlier may need to begin while a message is on
    // the wire (it moved at most to a rounder time nearby): the same catch, earlier.
    if (&k == &kKnobs.front() && at && cur_.s.faults[i].at && (*at - *cur_.s.faults[i].at) * 10 < *at - Time{})
      i = catch_earlier(i);
  }
  const Ratio was = cur_.s.faults[i].ratio;
  if (was == Ratio::never()) return;
  // A loss window that loses everything is a one-way cut: no draw decides which message goes, so
  // the failure no longer waits for an unlucky one (sooner, and at any seed). Tried first.
  if (cur_.s.faults[i].kind == faults::Kind::loss && reduce(was) != Ratio::always() &&
      change("ratio", [](Fault& f) { f.ratio = Ratio::always(); }, format_ratio(was), [](const Fault&) { return format_ratio(Ratio::always()); }))
    return;
  for (Ratio r : rounder(was)) {
    if (spent()) return;
    if (change("ratio", [&](Fault& f) { f.ratio = r; }, format_ratio(was), [&](const Fault&) { return format_ratio(r); })) return;
  }
}

/// A repeating cut or loss window (a stochastic one split into its firings too), once and for good
/// (`duration: 0`, until healed): one fault event where it fired two or more times. The two
/// stalls' loss windows 10.5 s apart each caught an upload; lost for good from the first, both
/// uploads time out, as in the hand-made minimal. Held to the fix, as a process taken out is
/// (Guard::saved): a cut for good can fail alike for a reason of its own (nothing ever
/// repaired), which the fix does not save. Returns the fault's index after the others went.
std::size_t Shrinker::never_heal(std::size_t i) {
  const Fault& f = cur_.s.faults[i];
  const bool cut = f.kind == faults::Kind::partition || f.kind == faults::Kind::cut_connection || f.kind == faults::Kind::loss;
  const std::optional<std::int64_t> n = firings(f, cur_.s.duration);
  if (!cut || f.duration <= Duration::zero() || !f.at || !n || spent()) return i;
  // A stochastic fault split into its firings (split_) is one fault too: its earliest firing
  // goes for good and the others go.
  const auto group = split_.find(f.name);
  std::vector<std::size_t> others;
  for (std::size_t k = 0; group != split_.end() && k < cur_.s.faults.size(); ++k) {
    const auto o = split_.find(cur_.s.faults[k].name);
    if (k == i || o == split_.end() || o->second != group->second) continue;
    if (cur_.s.faults[k].at && *cur_.s.faults[k].at < *f.at) return i;  // not the earliest
    others.push_back(k);
  }
  if (*n < 2 && others.empty()) return i;
  State c = cur_;
  Fault& g = c.s.faults[i];
  g.duration = Duration{};
  g.every.reset();
  g.until.reset();
  const std::string subject = "fault " + f.name;
  std::vector<Edit> edits{{subject, "timing", timing(f), timing(g)}, {subject, "duration", format_duration(f.duration), "until healed"}};
  if (g.kind == faults::Kind::loss && reduce(g.ratio) != Ratio::always()) {  // a loss for good loses everything
    edits.push_back({subject, "ratio", format_ratio(g.ratio), format_ratio(Ratio::always())});
    g.ratio = Ratio::always();
  }
  for (std::size_t k = others.size(); k-- > 0;) {
    edits.push_back(removal("fault " + c.s.faults[others[k]].name, describe(c.s.faults[others[k]])));
    c.s.faults.erase(c.s.faults.begin() + static_cast<std::ptrdiff_t>(others[k]));
  }
  const Guarded guard(guarded_, Guard::saved);
  if (!attempt(std::move(c), edits)) return i;
  // Its place once the others have gone: the loop over the faults goes on after it.
  return i - static_cast<std::size_t>(std::count_if(others.begin(), others.end(), [i](std::size_t k) { return k < i; }));
}

/// Each step earlier and at a rounder time; a stop_task's grace rounder (never much shorter: it is
/// the time the task is given to drain, and a task given none loses work whatever its bug).
void Shrinker::simplify_steps() {
  pass_ = "step times";
  const Scoped<bool> hop(hopping_, true);
  for (std::size_t i = 0; i < cur_.s.script.size() && !spent(); ++i) {
    const std::string at = offset(cur_.s.script[i].at);
    if (cur_.s.script[i].at > Time{}) {
      simplify(cur_.s.script[i].at - Time{}, true, [&](Duration d) {
        State c = cur_;
        c.s.script[i].at = Time{} + d;
        const Edit e{c.step_keys[i], "at", at, offset(Time{} + d)};
        return attempt(std::move(c), {e});
      }, cur_.step_keys[i] + " at");
    }
    if (cur_.s.script[i].op != Step::Op::stop_task || cur_.s.script[i].grace <= Duration::zero()) continue;
    const std::string grace = format_duration(cur_.s.script[i].grace);
    simplify(cur_.s.script[i].grace, false, [&](Duration d) {
      State c = cur_;
      c.s.script[i].grace = d;
      const Edit e{c.step_keys[i], "grace", grace, format_duration(d)};
      return attempt(std::move(c), {e});
    });
  }
}

/// Once, at the fixed point: each fault time and window and each step time onto the roundest value
/// near it, in either direction (nearby()), where the file fails alike, the fix saves it and its
/// trace is at most a sixteenth longer. The binary searches end where each seed's draws let them
/// (the pool's netsplit at 5.3 s for 1 min at ten seeds, at 5.5 s for 58 s at four, its crash at
/// 64 s or 65 s), and only ever round a value down; the shrinks of one bug meet where the round
/// value near both fails alike.
void Shrinker::round_nearby() {
  pass_ = "round values";
  const Guarded g(guarded_, Guard::saved);
  const Scoped<std::uint64_t> bound(longest_, std::min(longest_, cur_out_.events + cur_out_.events / 16));
  for (std::size_t i = 0; i < cur_.s.faults.size() && !spent(); ++i) {
    for (const Knob& k : kKnobs) {
      const std::optional<Duration> v = k.get(cur_.s.faults[i]);
      if (!k.shorter || !v) continue;
      const bool is_timing = std::string_view(k.field) == "timing";
      const std::string from = is_timing ? timing(cur_.s.faults[i]) : format_duration(*v);
      for (const Duration d : nearby(*v)) {
        State c = cur_;
        k.set(c.s.faults[i], d);
        const Edit e{"fault " + c.s.faults[i].name, k.field, from, is_timing ? timing(c.s.faults[i]) : format_duration(d)};
        if (spent() || attempt(std::move(c), {e})) break;
      }
    }
  }
  for (std::size_t i = 0; i < cur_.s.script.size() && !spent(); ++i) {
    const std::string at = offset(cur_.s.script[i].at);
    for (const Duration d : nearby(cur_.s.script[i].at - Time{})) {
      State c = cur_;
      c.s.script[i].at = Time{} + d;
      const Edit e{c.step_keys[i], "at", at, offset(Time{} + d)};
      if (spent() || attempt(std::move(c), {e})) break;
    }
  }
}

// ---- What the system is: its arguments and its quiet phase ------------------------------------

/// Whether the file's declared fix makes `s` pass the kept check: one more run. A candidate the
/// fix does not save fails for another reason than the file's bug. (Stricter than the bug tests'
/// "no slip", which also lets a fixed file fail otherwise.)
std::optional<bool> Shrinker::fix_saves(const Scenario& s, bool reserved) {
  const ParseResult fixed = apply_fix(s, reg_);
  if (!fixed.ok()) return std::nullopt;
  // The budget counts this run too, as attempt() counts its own; a deferred search's last fix
  // run (`reserved`) may take the run it kept for it.
  if (runs_ >= o_.max_runs) exhausted_ = true;
  else if (o_.stop && o_.stop()) stopped_ = true;
  if (stopped_ || runs_ >= o_.max_runs || (exhausted_ && !reserved)) return std::nullopt;
  ++runs_;
  try {
    const RunResult r = run_one(fixed.scenario, fixed.scenario.seed);
    const std::vector<CheckDecl> checks = effective_checks(fixed.scenario);
    for (std::size_t i = 0; i < checks.size() && i < r.checks.size(); ++i)
      if (checks[i] == target_) return r.checks[i].passed;
  } catch (const std::exception&) {
  }
  return false;
}

/// From here to settle(), a guarded candidate that fails alike is kept without the fix's run.
void Shrinker::defer() {
  deferring_ = true;
  unverified_.clear();
  verified_ = Kept{cur_, cur_out_, edits_};
}

/// Ends a deferred search: the fix is run on what it kept last, and where it does not save that,
/// on what it kept before, by bisection (the fix saves a prefix of the values a search keeps:
/// each is shorter than the one before), and the search goes back to the last one saved. Returns
/// how many of the values kept stand.
std::size_t Shrinker::settle() {
  deferring_ = false;
  std::vector<Kept> kept = std::move(unverified_);
  unverified_.clear();
  if (kept.empty()) return 0;
  const std::optional<bool> last = fix_saves(kept.back().state.s, true);
  if (last.value_or(false)) return kept.size();
  unsaved_ += last == false ? 1 : 0;  // counted only after a run with the fix
  std::size_t good = 0, bad = kept.size() - 1;  // kept[0, good) saved; kept[bad] not
  while (good < bad) {
    const std::size_t mid = good + (bad - good) / 2;
    if (fix_saves(kept[mid].state.s).value_or(false)) good = mid + 1;
    else bad = mid;
  }
  kept_ -= kept.size() - good;  // undone
  Kept& back = good == 0 ? *verified_ : kept[good - 1];
  cur_ = std::move(back.state);
  cur_out_ = std::move(back.out);
  edits_ = std::move(back.edits);
  return good;
}

/// Each number a behaviour is given -- as written, or a count at its default: a count, a rate or
/// a capacity smaller (1 first, then a binary search), a duration shorter and rounder, a share 0
/// or rounder. Words (a variant, an order) are another system and stay. Guarded: the trace may
/// not grow, and a declared fix must still save the candidate (a timeout moved far enough is a
/// bug of the same kind that the fix does not remove).
void Shrinker::simplify_arguments() {
  pass_ = "behaviour arguments";
  const Scoped<bool> hop(hopping_, true);
  const Guarded g(guarded_, Guard::no_longer);
  for (const std::string& path : tree_paths(cur_.s.trees)) {
    const BehaviourRef* b = behaviour_at(cur_.s.trees, "", path);
    const BehaviourInfo* info = b != nullptr ? reg_.behaviour(b->name) : nullptr;
    if (info == nullptr) continue;
    for (std::size_t k = 0; k < info->args.size() && !spent(); ++k) simplify_argument(path, info->args[k]);
  }
}

void Shrinker::simplify_argument(const std::string& path, const ArgInfo& a) {
  std::string what;
  const BehaviourRef* b = behaviour_at(cur_.s.trees, "", path, &what);
  if (b == nullptr) return;
  const ArgValue* given = given_arg(*b, a.name);
  if (a.names || (given != nullptr && given->is_list)) return;
  const std::string was = given != nullptr ? given->scalar : a.type == "int" ? a.fallback : "";
  if (was.empty()) return;
  const auto keep = [&](const std::string& text) {
    State c = cur_;
    set_arg(*behaviour_at(c.s.trees, "", path), a.name, text);
    return attempt(std::move(c), {{what + " " + path, "arg " + a.name, was, text}});
  };
  if (a.type == "int") {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(was.data(), was.data() + was.size(), v);
    if (ec != std::errc() || end != was.data() + was.size() || v <= 1) return;
    search_int(v, path + " arg " + a.name, [&](std::int64_t x) { return keep(std::to_string(x)); });
  } else if (a.type == "duration") {
    const DurationParse d = parse_duration(was);
    const Guarded g(guarded_, Guard::shorter);
    if (!d.ok || d.value <= Duration::zero()) return;
    bool kept = false;
    simplify(d.value, true, [&](Duration x) { return kept = keep(format_duration(x)); }, path + " arg " + a.name, true);
    // Nothing shorter fails so: the pace of steady work (a reader's line every 50 ms, ArgInfo::
    // paces) makes fewer events when longer. Tried 1000, 100 and 10 times longer, within the
    // run: the first that fails the same way in a shorter trace (the guard) and that the fix
    // saves is kept (issue 32: the remote sink's one lost line, one line at 50 s where 1,100
    // were made). A timeout made longer is another system (its failure a neighbour's).
    for (const std::int64_t times : {1000, 100, 10}) {
      const Duration x{d.value.ns * times};
      if (!a.paces || kept || spent() || x >= cur_out_.end) continue;
      kept = keep(format_duration(x));
    }
  } else if (a.type == "ratio") {
    Ratio r;
    std::string error;
    if (!parse_ratio(was, r, error) || r.num == 0 || keep("0")) return;
    for (Ratio x : rounder(r))
      if (spent() || keep(format_ratio(x))) return;
  }
}

/// An int argument's search, from `v` down: the value one below where its last search (by
/// `key`) ended first, from kWarmFrom, then 1, then a binary search between.
void Shrinker::search_int(std::int64_t v, const std::string& key, const std::function<bool(std::int64_t)>& keep) {
  // As simplify(): the value one below, where the last search of it ended, first. Failing
  // alike there, the search goes on below as from the start.
  const auto last = int_floor_.find(key);
  // The fix runs once, at the search's end, as in simplify().
  const std::int64_t start = v;
  std::vector<std::int64_t> kept_at;
  if (guarded_ != Guard::none && !cur_.s.fix.empty()) defer();
  const auto test = [&](std::int64_t x) {
    const std::size_t was_kept = unverified_.size();
    const bool k = keep(x);
    if (k && unverified_.size() > was_kept) kept_at.push_back(x);
    return k;
  };
  std::int64_t lo = 0;  // the largest value known not to keep the failure (0: none yet)
  if (round_ >= kWarmFrom && last != int_floor_.end() && last->second == v - 1 && v > 2) {
    const std::int64_t below = v - 1;
    (test(below) ? v : lo) = below;
  }
  if (lo == 0 && !spent()) (test(1) ? v : lo) = 1;
  for (bool again = true; again;) {
    while (v - lo > 1 && !spent()) {
      const std::int64_t mid = lo + (v - lo) / 2;
      (test(mid) ? v : lo) = mid;
    }
    again = false;
    if (!deferring_) continue;
    const std::size_t saved = settle();
    if (saved == kept_at.size()) continue;
    lo = std::max(lo, kept_at[saved]);  // the first the fix did not save
    v = saved == 0 ? start : kept_at[saved - 1];
    again = true;
  }
  if (lo > 0) int_floor_[key] = lo;
}

/// The quiet phase, gone or shorter -- only when the file declares its fix. It is the time the
/// system is given to recover: a check that judges the end (converges, alive, leader_at_end)
/// fails without it for want of time, not because of the bug, and only the fix tells the two
/// apart (guarded, as the arguments are).
void Shrinker::shorten_quiet() {
  if (!cur_.s.quiet || cur_.s.fix.empty() || spent()) return;
  pass_ = "quiet phase";
  const Scoped<bool> hop(hopping_, true);
  const Guarded g(guarded_, Guard::no_longer);
  const std::string was = format_duration(*cur_.s.quiet);
  State none = cur_;
  none.s.quiet.reset();
  if (!attempt(std::move(none), {{"quiet phase", "", was, "none"}})) {
    simplify(*cur_.s.quiet, true, [&](Duration d) {
      State c = cur_;
      c.s.quiet = d;
      return attempt(std::move(c), {{"quiet phase", "", was, format_duration(d)}});
    }, "quiet phase");
  }
}

}  // namespace

std::size_t count_processes(const Scenario& s) { return count_nodes(s.trees); }

ShrinkResult shrink(const Scenario& s, const ShrinkOptions& o) {
  return Shrinker(o, o.registry != nullptr ? *o.registry : Registry::builtin()).shrink(s);
}

}  // namespace lic::scenarios
