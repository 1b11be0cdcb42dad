// The `letitcrash` command line. It wires the stages together and does nothing else.
// Exit codes: 0 success (every check holds), 1 a check failed, 2 bad input or usage.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "bench/bench.hpp"
#include "tools/letitcrash/demo.hpp"

#ifndef LETITCRASH_VERSION
#define LETITCRASH_VERSION "0.0.0"
#endif

namespace {

/// CLI11 check for enumerated choices that reports the valid ones.
template <class T, class Parse>
CLI::Validator choice(const char* name, Parse parse) {
  return CLI::Validator(
      [parse, name](std::string& s) -> std::string {
        T v{};
        return parse(s, v) ? std::string() : "'" + s + "' is not one of " + name;
      },
      name);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"letitcrash: a deterministic simulator and chaos harness for OTP-style supervision trees"};
  app.set_version_flag("--version", std::string("letitcrash ") + LETITCRASH_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  lic::bench::BenchOptions bench;
  bench.self_path = argv[0];
  std::string only = "w1,w2,w3";
  std::string backend = "both";
  auto* b = app.add_subcommand("bench", "Run the benchmark workloads (DESIGN.md §9) and print `name value unit` lines");
  b->add_flag("--quick", bench.quick, "Small sizes: a smoke run of every workload in a few seconds");
  b->add_option("--only", only, "Comma-separated workloads to run: w1, w2, w3")->check(
      CLI::Validator([](std::string& s) -> std::string {
        for (std::size_t i = 0; i < s.size();) {
          const std::size_t j = s.find(',', i);
          const std::string w = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
          if (w != "w1" && w != "w2" && w != "w3") return "unknown workload '" + w + "' (w1, w2, w3)";
          if (j == std::string::npos) break;
          i = j + 1;
        }
        return {};
      }, "w1,w2,w3"));
  b->add_option("--backend", backend, "Fiber backends for the fiber workloads: context, or both")
      ->check(CLI::IsMember({"context", "both"}));
  b->add_flag("!--no-peer", bench.peer, "Do not run the SimGrid peer");
  b->add_option("--w2-fiber-max", bench.w2_fiber_max, "Largest W2 size for fiber processes")
      ->check(CLI::PositiveNumber);
  b->add_option("--repeat", bench.repeat, "Throughput figures are the best of this many runs")
      ->check(CLI::Range(1, 100));

  lic::tools::DemoOptions demo;
  std::string tie = "fifo";
  std::string demo_backend = "context";
  std::string duration = "2s";
  auto* d = app.add_subcommand("demo", "Run the kernel demo (a crashing parser restarted by a watchdog) and print its trace");
  d->add_option("--seed", demo.seed, "Root seed");
  d->add_option("--tie-break", tie, "Order of same-time events: fifo or random")
      ->check(choice<lic::TieBreak>("fifo|random", [](const std::string& s, lic::TieBreak& t) {
        return lic::parse_tie_break(s, t);
      }));
  d->add_option("--backend", demo_backend, "Fiber backend: context or boost_fiber")
      ->check(choice<lic::FiberBackend>("context|boost_fiber",
                                        [](const std::string& s, lic::FiberBackend& f) {
                                          return lic::parse_fiber_backend(s, f);
                                        }));
  d->add_option("--for", duration, "Virtual time to run, e.g. 2s or 500ms")
      ->check(CLI::Validator([](std::string& s) -> std::string {
        const lic::DurationParse p = lic::parse_duration(s);
        return p.ok ? std::string() : p.error;
      }, "DURATION"));
  d->add_option("--out", demo.out_dir, "Write trace.txt, trace.jsonl and summary.txt into this folder");
  d->add_flag("--quiet", demo.quiet, "Print only the summary line");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the usage hint
    return 2;
  }

  if (b->parsed()) {
    bench.w1 = only.find("w1") != std::string::npos;
    bench.w2 = only.find("w2") != std::string::npos;
    bench.w3 = only.find("w3") != std::string::npos;
    bench.both_backends = backend == "both";
    return lic::bench::run(bench);
  }
  if (d->parsed()) {
    lic::parse_tie_break(tie, demo.tie_break);
    lic::parse_fiber_backend(demo_backend, demo.backend);
    demo.duration = lic::parse_duration(duration).value;
    return lic::tools::run_demo(demo);
  }
  return 2;
}
