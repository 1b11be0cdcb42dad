// Seed 004's three shutdown orders: the real Go runtime (conformance/go/shutdown, its output
// committed in shutdown.expected) against the simulator (the scenario files of each order, run
// here on seeds 1..kSeeds). Fractions vary from run to run on the real side, so what is compared
// is what the issue asks to come out the same, within the bounds stated in
// docs/conformance-go.md ("The shutdown orders"):
//   - the correct order never loses an event and never panics, on either side;
//   - each wrong order loses events on most runs on both sides, the two fractions within kNear;
//   - close_upload_first panics on every run, always in CollectLoop, with the same two texts in
//     the same order of frequency (shares within kNear); cancel_first panics rarely on real
//     goroutines (at most kRare: a documented difference) and never on the simulator;
//   - the place most runs lose events at is the same on both sides.
// The go-live label runs the same cases on a fresh recording: LIC_GO_SHUTDOWN_RECORDING names it
// (conformance/go/go-live.sh --shutdown). No Go is needed here.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "properties/ingest_conservation.hpp"
#include "scenarios/file/read.hpp"
#include "scenarios/run/runner.hpp"

using namespace lic;
using namespace lic::scenarios;

namespace {

constexpr std::uint64_t kSeeds = 200;  // simulated runs per order
constexpr double kNear = 0.15;         // the widest gap allowed between a real and a simulated fraction
constexpr double kMost = 0.80;         // "loses on most runs"
constexpr double kRare = 0.10;         // "rarely": cancel_first's panics on real goroutines (0.4-5 % measured)

/// One side's outcomes for one order: runs (trials or seeds), runs that lost events, runs that
/// panicked, by `LOOP "TEXT"` and by the places they lost events at (`PLACE: WHY`).
struct Outcomes {
  int runs = 0;
  int lost = 0;
  int panicked = 0;
  std::map<std::string, int> panics;
  std::map<std::string, int> where;
  double frac(int n) const { return runs == 0 ? 0.0 : static_cast<double>(n) / runs; }
  int panics_of(const std::string& key) const { return panics.count(key) != 0U ? panics.at(key) : 0; }
  int where_of(const std::string& key) const { return where.count(key) != 0U ? where.at(key) : 0; }
};

std::string recording_path() {
  const char* live = std::getenv("LIC_GO_SHUTDOWN_RECORDING");
  return live != nullptr && *live != '\0' ? std::string(live) : std::string(LIC_GO_SHUTDOWN_EXPECTED);
}

/// The Go program's records for `order` (lines: order / panic / where; # lines are notes), in
/// `path`; with a prefix (`load 160 `), only the lines that start with it, read without it.
Outcomes real(const std::string& order, const std::string& path = recording_path(), const std::string& prefix = "") {
  std::ifstream in(path);
  INFO("the recording: " << path);
  REQUIRE(in.good());
  Outcomes out;
  bool seen = false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    line.erase(0, prefix.size());
    std::istringstream s(line);
    std::string kind, name;
    s >> kind >> name;
    if (name != order) continue;
    if (kind == "order") {
      std::string k1, k2, k3, k4;
      s >> k1 >> out.runs >> k2 >> out.lost >> k3 >> out.panicked;
      INFO(line);
      REQUIRE((k1 == "trials" && k2 == "lost" && k3 == "panicked" && !s.fail()));
      seen = true;
    } else if (kind == "panic" || kind == "where") {
      std::string loop, text;
      int n = 0;
      if (kind == "panic") s >> loop;
      s >> std::quoted(text) >> n;
      INFO(line);
      REQUIRE(!s.fail());
      (kind == "panic" ? out.panics[loop + " \"" + text + "\""] : out.where[text]) += n;
    }
  }
  INFO("no `order " << order << "` line");
  REQUIRE(seen);
  REQUIRE(out.runs > 0);
  return out;
}

/// The goroutine a process label names: /task/server/collect is CollectLoop.
std::string loop_of(const std::string& label) {
  static const std::map<std::string, std::string> loops = {
      {"/task/server/collect", "CollectLoop"}, {"/task/server/upload", "UploadLoop"},
      {"/task/server/ingress", "ingress"},     {"/task/server", "main"},
      {"/task/server/handler", "handler"}};
  const auto it = loops.find(label);
  return it != loops.end() ? it->second : label;
}

/// The panic that ended the program: the first process that exited with Go's panic text (the
/// others linked to it exit after it with the same reason).
std::string first_panic(const EventLog& events) {
  for (const TraceEvent& e : events) {
    if (e.kind != EventKind::exit || e.reason.kind != ReasonKind::error) continue;
    const std::string text(e.reason.detail.text());
    if (text == "send on closed channel" || text == "close of closed channel")
      return loop_of(std::string(e.label.name.text())) + " \"" + text + "\"";
  }
  return "";
}

using Edit = std::pair<std::string, std::string>;

/// The scenario file of `order`, run on seeds 1..kSeeds; each edit replaces a piece of its text
/// first (a fix, a node's preemption, SIGTERM's time).
Outcomes simulated(const std::string& file, const std::vector<Edit>& edits = {}, std::uint64_t seeds = kSeeds) {
  std::ifstream in(std::string(LIC_SOURCE_DIR) + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  for (const auto& [from, to] : edits) {
    const std::size_t at = yaml.find(from);
    INFO(file << ": no `" << from << "` to replace");
    REQUIRE(at != std::string::npos);
    yaml.replace(at, from.size(), to);
  }
  const ParseResult p = parse_scenario(yaml, file);
  INFO(file);
  REQUIRE(p.ok());
  Outcomes out;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    RunOptions opts;
    opts.seed = seed;
    const RunResult r = run(p.scenario, opts);
    const EventLog& events = r.sim->trace().events();
    const properties::IngestConservation c = properties::check_ingest(events);
    ++out.runs;
    if (c.lost_events() > 0) ++out.lost;
    std::set<std::string> places;
    for (const properties::LostEvents& l : c.lost) places.insert(l.where + ": " + l.why);
    for (const std::string& w : places) ++out.where[w];
    if (const std::string panic = first_panic(events); !panic.empty()) {
      ++out.panicked;
      ++out.panics[panic];
    }
  }
  return out;
}

std::string show(const Outcomes& o) {
  std::ostringstream s;
  s << o.runs << " runs: " << o.lost << " lost, " << o.panicked << " panicked";
  for (const auto& [k, n] : o.panics) s << "; panic " << k << " " << n;
  for (const auto& [k, n] : o.where) s << "; lost at " << k << " " << n;
  return s.str();
}

/// The place (`PLACE: WHY`) the most runs lost events at.
std::string top_place(const Outcomes& o) {
  std::string top;
  int most = 0;
  for (const auto& [k, n] : o.where) {
    if (n > most) {
      top = k;
      most = n;
    }
  }
  return top;
}

}  // namespace

TEST_CASE("go shutdown: the correct order never loses and never panics - real and simulated alike", "[shutdown]") {
  const Outcomes go = real("correct");
  const Outcomes sim = simulated("scenarios/catalog/graceful_shutdown.yaml");
  INFO("real: " << show(go));
  INFO("simulated: " << show(sim));
  CHECK(go.lost == 0);
  CHECK(go.panicked == 0);
  CHECK(sim.lost == 0);
  CHECK(sim.panicked == 0);
  CHECK(sim.runs == static_cast<int>(kSeeds));
}

TEST_CASE("go shutdown: cancel_first loses the open batch on most runs - real and simulated alike", "[shutdown]") {
  const Outcomes go = real("cancel_first");
  const Outcomes sim = simulated("scenarios/bugs/shutdown_cancel_first.yaml");
  INFO("real: " << show(go));
  INFO("simulated: " << show(sim));
  CHECK(go.frac(go.lost) >= kMost);
  CHECK(sim.frac(sim.lost) >= kMost);
  CHECK(std::abs(go.frac(go.lost) - sim.frac(sim.lost)) <= kNear);
  // Most runs lose CollectLoop's open batch to the cancel; some a put in flight, on both sides.
  CHECK(top_place(go) == "open batch: cancelled");
  CHECK(top_place(sim) == "open batch: cancelled");
  CHECK(go.where_of("in flight to S3: cancelled") > 0);
  CHECK(sim.where_of("in flight to S3: cancelled") > 0);
  CHECK(std::abs(go.frac(go.where_of("open batch: cancelled")) - sim.frac(sim.where_of("open batch: cancelled"))) <= kNear);
  // An expected difference: on real goroutines CollectLoop is now and then not waiting in its
  // select when main cancels and closes both channels (it took an event or its timer shortly
  // before and has not run yet: the CPU is busy). Its next select then finds both ctx.Done() and
  // the closed EventCh ready, picks one at random, and on EventCh flushes onto the closed UploadCh
  // or closes it again: a panic in CollectLoop. The simulator runs a goroutine to its next wait
  // in no time (CPU is not modelled), so that window is empty there. How often it happens on
  // real goroutines depends on the load: 0.4 % of trials on a quiet run, 5 % on a busy machine.
  // A node's `preempt` opens the window (the [preempt] cases below, at three measured loads).
  CHECK(go.frac(go.panicked) <= kRare);
  for (const auto& [k, n] : go.panics) CHECK(k.rfind("CollectLoop ", 0) == 0);
  CHECK(sim.panicked == 0);
}

TEST_CASE("go shutdown: close_upload_first panics in CollectLoop on every run - real and simulated alike", "[shutdown]") {
  const Outcomes go = real("close_upload_first");
  const Outcomes sim = simulated("scenarios/bugs/shutdown_close_upload_first.yaml");
  INFO("real: " << show(go));
  INFO("simulated: " << show(sim));
  const std::string send_panic = "CollectLoop \"send on closed channel\"";
  const std::string close_panic = "CollectLoop \"close of closed channel\"";
  for (const Outcomes* o : {&go, &sim}) {
    CHECK(o->panicked == o->runs);
    CHECK(o->panics_of(send_panic) + o->panics_of(close_panic) == o->runs);  // every panic in CollectLoop
    CHECK(o->panics_of(send_panic) > o->panics_of(close_panic));  // send on closed channel the more often
    CHECK(o->panics_of(close_panic) > 0);  // an empty last batch: CollectLoop's own close(UploadCh)
    CHECK(o->frac(o->lost) >= kMost);
    CHECK(top_place(*o) == "open batch: panic");
  }
  CHECK(std::abs(go.frac(go.panics_of(send_panic)) - sim.frac(sim.panics_of(send_panic))) <= kNear);
  CHECK(std::abs(go.frac(go.lost) - sim.frac(sim.lost)) <= kNear);
}

TEST_CASE("go shutdown: net/http handlers not waited for panic on about a third of runs - recovered, nothing lost - waited for, never - real and simulated alike", "[shutdown]") {
  const std::string file = "scenarios/bugs/shutdown_handlers_not_drained.yaml";
  const Outcomes go = real("handlers_no_wait");
  const Outcomes sim = simulated(file);
  INFO("real: " << show(go));
  INFO("simulated: " << show(sim));
  const std::string panic = "handler \"send on closed channel\"";
  for (const Outcomes* o : {&go, &sim}) {
    CHECK(o->lost == 0);  // a handler's panic takes nothing down: every accepted event is uploaded
    CHECK(o->panicked > 0);
    CHECK(o->panics_of(panic) == o->panicked);  // always a handler, always this text
    CHECK(o->frac(o->panicked) < kMost);  // not every run: SIGTERM must find EventCh full
  }
  CHECK(std::abs(go.frac(go.panicked) - sim.frac(sim.panicked)) <= kNear);
  // The fix: the HTTP server waits for its handlers before main closes EventCh.
  const Outcomes go_fixed = real("handlers_wait");
  const Outcomes sim_fixed = simulated(file, {{"wait_handlers: false", "wait_handlers: true"}});
  INFO("real, fixed: " << show(go_fixed));
  INFO("simulated, fixed: " << show(sim_fixed));
  CHECK(go_fixed.panicked == 0);
  CHECK(go_fixed.lost == 0);
  CHECK(sim_fixed.panicked == 0);
  CHECK(sim_fixed.lost == 0);
}

// ---- Preemption: the orders at three loads (docs/conformance-go.md, "Preemption") -------------
//
// conformance/go/shutdown_loads.expected: the Go program run with -loads 32,160,640 -sigterm 5
// -trials 300, each record prefixed `load N` (N trials at a time), and for each load a `wake` line:
// how long CollectLoop stayed runnable after what woke it (an event sent, its timer due), in
// simulated ms: `over1ms` the share of wakes later than 1 ms, `tail` their mean. The simulator
// is given exactly that as the ingest node's preemption (chance = over1ms, mean = tail), with
// SIGTERM at 5 s as the trials had it, and must then show what the real runtime showed at that
// load: cancel_first's rare panic in CollectLoop, close_upload_first's losses, the handlers' panics.
// The panic counts are small (a few in 300), so cancel_first's share is compared within
// kPanicNear, 10 points: both rare, never on most runs.
// The model's domain: a machine whose timers still fire on time. The recording's `timer` line
// says how late CollectLoop's batch timer woke it; Go's timer granule alone makes that about
// 5-10 simulated ms (0.25-0.5 ms real). A load whose median lateness is past kTimerLateMs
// (1 ms real) has saturated the CPU: the real ingress's sleeps run late and fewer events come,
// which the simulator (exact timers) does not model. Such a load is reported and not compared;
// at least two loads must be in the domain.

namespace {

constexpr double kPanicNear = 0.10;
constexpr double kTimerLateMs = 20.0;  // simulated ms: 1 ms real at the trials' scale
constexpr int kPlainly = 5;             // real trials that panic: the runtime shows the path plainly
constexpr std::uint64_t kBusySeeds = 1000;

std::string loads_path() {
  const char* live = std::getenv("LIC_GO_SHUTDOWN_LOADS");
  return live != nullptr && *live != '\0' ? std::string(live) : std::string(LIC_GO_SHUTDOWN_LOADS_EXPECTED);
}

/// One load's wake latencies, as the recording's `load N wake ...` line gives them.
struct Load {
  int at_once = 0;   // trials at a time
  double chance = 0;  // the share of wakes later than 1 simulated ms
  double tail_ms = 0;  // their mean, simulated ms
  double timer_p50_ms = -1;  // how late the batch timer woke CollectLoop, the median
  bool in_domain() const { return timer_p50_ms >= 0 && timer_p50_ms <= kTimerLateMs; }
};

std::vector<Load> recorded_loads() {
  std::ifstream in(loads_path());
  INFO("the recording: " << loads_path());
  REQUIRE(in.good());
  std::vector<Load> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string load, what;
    int at_once = 0;
    s >> load >> at_once >> what;
    if (load != "load" || (what != "wake" && what != "timer")) continue;
    std::map<std::string, double> v;
    std::string key;
    double count = 0;
    s >> count;
    while (s >> key) s >> v[key];
    INFO(line);
    REQUIRE((v.count("over1ms") == 1 && v.count("tail") == 1 && v.count("p50") == 1 && count > 0));
    if (what == "wake") {
      out.push_back(Load{at_once, v["over1ms"], v["tail"]});
    } else {
      REQUIRE((!out.empty() && out.back().at_once == at_once));  // after its load's wake line
      out.back().timer_p50_ms = v["p50"];
    }
  }
  return out;
}

/// The loads in the model's domain (timers on time); the others are reported.
std::vector<Load> compared_loads() {
  std::vector<Load> in;
  for (const Load& l : recorded_loads()) {
    if (l.in_domain()) in.push_back(l);
    else WARN("load " << l.at_once << ": not compared, the CPU was saturated (the batch timer woke CollectLoop a median "
                      << l.timer_p50_ms << " simulated ms late, past " << kTimerLateMs << "); the simulator's timers are exact");
  }
  REQUIRE(in.size() >= 2);
  return in;
}

/// The edits that give a shutdown file the load's preemption on its task node (and SIGTERM at
/// 5 s, as the trials had it, unless the file keeps its own: the handlers' 21 s).
std::vector<Edit> at_load(const Load& l, bool sigterm_at_5s) {
  std::ostringstream preempt;
  preempt << "nodes: [{name: ingest, preempt: {chance: " << std::fixed << std::setprecision(6) << l.chance
          << ", mean: " << static_cast<long long>(std::llround(l.tail_ms * 1000)) << "us}}, s3]";
  std::vector<Edit> e{{"nodes: [ingest, s3]", preempt.str()}};
  if (sigterm_at_5s) e.emplace_back("at: 30s, stop_task", "at: 5s, stop_task");
  return e;
}

}  // namespace

TEST_CASE("go shutdown at three loads: the recording has a wake line and every order at each load", "[shutdown][preempt]") {
  const std::vector<Load> loads = recorded_loads();
  REQUIRE(loads.size() == 3);
  for (std::size_t i = 0; i + 1 < loads.size(); ++i) CHECK(loads[i].at_once < loads[i + 1].at_once);
  for (const Load& l : loads) {
    INFO("load " << l.at_once);
    CHECK(l.chance > 0);
    CHECK(l.chance <= 1);
    CHECK(l.tail_ms > 1);
    CHECK(l.timer_p50_ms >= 0);  // its timer line
    for (const char* order : {"correct", "cancel_first", "close_upload_first", "handlers_no_wait", "handlers_wait"})
      CHECK(real(order, loads_path(), "load " + std::to_string(l.at_once) + " ").runs > 0);
  }
  // The busiest load delays wakes more often than the quietest.
  CHECK(loads.back().chance > loads.front().chance);
}

/// One order at one load: the real recording's trials and the bug file's simulated seeds, the
/// simulator preempted as that load measured (`sigterm_at_5s` as at_load).
struct AtLoad {
  Outcomes go, sim;
};
AtLoad at_one_load(const Load& l, const std::string& order, const std::string& file, bool sigterm_at_5s) {
  return {real(order, loads_path(), "load " + std::to_string(l.at_once) + " "), simulated(file, at_load(l, sigterm_at_5s))};
}

TEST_CASE("go shutdown at three loads: cancel_first's rare panic in CollectLoop - the simulator preempted as the load measured shows it too", "[shutdown][preempt]") {
  const std::vector<Load> loads = compared_loads();
  for (const Load& l : loads) {
    const auto [go, sim] = at_one_load(l, "cancel_first", "scenarios/bugs/shutdown_cancel_first.yaml", true);
    INFO("load " << l.at_once << " (wakes over 1 ms: " << l.chance << ", their mean " << l.tail_ms << " ms)");
    INFO("real: " << show(go));
    INFO("simulated: " << show(sim));
    CHECK(go.frac(go.lost) >= kMost);
    CHECK(sim.frac(sim.lost) >= kMost);
    CHECK(go.frac(go.panicked) <= kRare);
    CHECK(sim.frac(sim.panicked) <= kRare);
    for (const Outcomes* o : {&go, &sim})
      for (const auto& [k, n] : o->panics) CHECK(k.rfind("CollectLoop ", 0) == 0);
    CHECK(std::abs(go.frac(go.panicked) - sim.frac(sim.panicked)) <= kPanicNear);
  }
  // Without preemption the simulator never takes this path (0 of 2000 seeds, the test above).
  // Where the real runtime shows it plainly (kPlainly trials or more at the busiest load compared),
  // the simulator must show it too, over kBusySeeds seeds so that a share of a few percent is not
  // missed by the draw.
  const Load& busiest = loads.back();
  const Outcomes go_busiest = real("cancel_first", loads_path(), "load " + std::to_string(busiest.at_once) + " ");
  if (go_busiest.panicked >= kPlainly) {
    const Outcomes sim = simulated("scenarios/bugs/shutdown_cancel_first.yaml", at_load(busiest, true), kBusySeeds);
    INFO("load " << busiest.at_once << ", real: " << show(go_busiest));
    INFO("load " << busiest.at_once << ", seeds 1.." << kBusySeeds << ": " << show(sim));
    CHECK(sim.panicked > 0);
  } else {
    WARN("at the busiest load compared (" << busiest.at_once << " trials at a time) the real runtime panicked on "
                                          << go_busiest.panicked << " trials, under " << kPlainly
                                          << ": the simulator's panics there are not required");
  }
}

TEST_CASE("go shutdown at three loads: close_upload_first panics on every run and loses as often - preempted as the load measured", "[shutdown][preempt]") {
  for (const Load& l : compared_loads()) {
    const auto [go, sim] = at_one_load(l, "close_upload_first", "scenarios/bugs/shutdown_close_upload_first.yaml", true);
    INFO("load " << l.at_once);
    INFO("real: " << show(go));
    INFO("simulated: " << show(sim));
    CHECK(go.panicked == go.runs);
    CHECK(sim.panicked == sim.runs);
    CHECK(std::abs(go.frac(go.lost) - sim.frac(sim.lost)) <= kNear);
  }
}

TEST_CASE("go shutdown at three loads: net/http handlers not waited for panic as often - nothing lost - preempted as the load measured", "[shutdown][preempt]") {
  for (const Load& l : compared_loads()) {
    const auto [go, sim] = at_one_load(l, "handlers_no_wait", "scenarios/bugs/shutdown_handlers_not_drained.yaml", false);
    INFO("load " << l.at_once);
    INFO("real: " << show(go));
    INFO("simulated: " << show(sim));
    CHECK(go.lost == 0);
    CHECK(sim.lost == 0);
    CHECK(std::abs(go.frac(go.panicked) - sim.frac(sim.panicked)) <= kNear);
  }
}
