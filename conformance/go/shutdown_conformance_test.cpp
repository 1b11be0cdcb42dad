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

/// The Go program's records for `order` (lines: order / panic / where; # lines are notes).
Outcomes real(const std::string& order) {
  const std::string path = recording_path();
  std::ifstream in(path);
  INFO("the recording: " << path);
  REQUIRE(in.good());
  Outcomes out;
  bool seen = false;
  std::string line;
  while (std::getline(in, line)) {
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

/// The scenario file of `order`, run on seeds 1..kSeeds; `edit` changes its text first (a fix).
Outcomes simulated(const std::string& file, const std::pair<std::string, std::string>& edit = {}) {
  std::ifstream in(std::string(LIC_SOURCE_DIR) + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  if (!edit.first.empty()) {
    const std::size_t at = yaml.find(edit.first);
    REQUIRE(at != std::string::npos);
    yaml.replace(at, edit.first.size(), edit.second);
  }
  const ParseResult p = parse_scenario(yaml, file);
  INFO(file);
  REQUIRE(p.ok());
  Outcomes out;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
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
  const Outcomes sim_fixed = simulated(file, {"wait_handlers: false", "wait_handlers: true"});
  INFO("real, fixed: " << show(go_fixed));
  INFO("simulated, fixed: " << show(sim_fixed));
  CHECK(go_fixed.panicked == 0);
  CHECK(go_fixed.lost == 0);
  CHECK(sim_fixed.panicked == 0);
  CHECK(sim_fixed.lost == 0);
}
