// The kernel demo: a reader ticks every 50 ms and sends `k,v` lines to a parser (a behaviour
// process); about one line in ten is malformed and the parser crashes on it. A watchdog that
// traps exits is linked to the parser and starts a new one each time (a hand-made one_for_one,
// until supervision/ exists). A sink counts what got through. Everything random comes from the
// seed, so the same seed prints the same trace and hash.

#include "scenarios/file/read.hpp"
#include "tools/letitcrash/demo.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <sstream>
#include <string>

#include "reports/atomic_file.hpp"
#include "reports/trace_format.hpp"
#include "sim/simulation.hpp"
#include "sim/trace_keys.hpp"

namespace lic::tools {
namespace {

const Atom kLine("line");
const Atom kParsed("parsed");
const Atom kParserName("parser");
const Atom kSinkName("sink");

struct Line {
  int key;
  int value;
  bool malformed;
};

class Parser final : public Behaviour {
 public:
  InitResult init(Context& ctx) override {
    ctx.register_name(kParserName);
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message& m) override {
    const Line* l = m.get<Line>();
    if (l == nullptr) return;
    if (l->malformed) throw std::runtime_error("unparsable_line");
    ctx.send(kSinkName, kParsed, l->value);
  }
};

class Sink final : public Behaviour {
 public:
  InitResult init(Context& ctx) override {
    ctx.register_name(kSinkName);
    return InitResult::ok();
  }
  void handle_info(Context& ctx, const Message&) override {
    ++count_;
    if (count_ % 10 == 0) ctx.emit(Atom("sink_progress"), {{keys::kReceived, count_}});
  }

 private:
  std::int64_t count_ = 0;
};

void reader(Context& ctx) {
  for (int k = 0;; ++k) {
    ctx.sleep(kMillisecond * 50);
    const bool bad = ctx.rng().chance(Ratio::percent(10));
    ctx.send(kParserName, kLine, Line{k, static_cast<int>(ctx.rng().uniform(100)), bad});
  }
}

Pid start_parser(Context& ctx, std::uint32_t instance) {
  SpawnOptions o;
  o.link = true;
  o.label = Label{Atom("/demo/parser"), instance};
  return ctx.spawn(std::make_unique<Parser>(), o);  // it registers itself as `parser`
}

void watchdog(Context& ctx) {
  ctx.trap_exit(true);
  std::uint32_t starts = 1;
  Pid parser = start_parser(ctx, starts);
  for (;;) {
    MessagePtr m = ctx.receive([](const Message& x) { return x.kind == MsgKind::exit; });
    if (m->from != parser) continue;
    ctx.emit(Atom("parser_restarted"), {{keys::kReason, to_string(m->reason)},
                                        {keys::kStart, static_cast<std::int64_t>(starts + 1)}});
    parser = start_parser(ctx, ++starts);
  }
}

}  // namespace

int run_demo(const DemoOptions& o) {
  SimOptions so;
  so.seed = o.seed;
  so.tie_break = o.tie_break;
  so.backend = o.backend;
  Simulation sim(so);
  SpawnOptions sink_opts;
  sink_opts.label = Label{Atom("/demo/sink"), 1};
  sim.spawn(std::make_unique<Sink>(), sink_opts);
  SpawnOptions w;
  w.label = Label{Atom("/demo/watchdog"), 1};
  sim.spawn(&watchdog, w);
  SpawnOptions r;
  r.label = Label{Atom("/demo/reader"), 1};
  sim.spawn(&reader, r);
  sim.run_until(Time{0} + o.duration);

  std::ostringstream text;
  std::ostringstream jsonl;
  for (const TraceEvent& e : sim.trace().events()) {
    text << reports::format_event_text(e) << '\n';
    jsonl << reports::format_event_json(e) << '\n';
  }
  int restarts = 0;
  for (const TraceEvent& e : sim.trace().events()) {
    if (e.kind == EventKind::system && e.name == Atom("parser_restarted")) ++restarts;
  }
  const std::string summary = fmt::format(
      "demo: seed={} tie_break={} backend={} virtual_time={} events={} parser_restarts={} "
      "trace_hash={:016x}",
      o.seed, to_string(o.tie_break), to_string(o.backend), format_time(sim.now()),
      sim.trace().count(), restarts, sim.trace().hash());
  if (!o.quiet) std::fputs(text.str().c_str(), stdout);
  std::puts(summary.c_str());
  if (!o.out_dir.empty()) {
    for (auto [name, content] : {std::pair<const char*, std::string>{"trace.txt", text.str()},
                                 {"trace.jsonl", jsonl.str()},
                                 {"summary.txt", summary + "\n"}}) {
      const std::string err = reports::write_file_atomically(o.out_dir + "/" + name, content);
      if (!err.empty()) {
        std::fprintf(stderr, "letitcrash: %s\n", scenarios::printable(err).c_str());
        return 2;
      }
    }
  }
  return 0;
}

}  // namespace lic::tools
