#pragma once
// `letitcrash bench`: runs the workloads and prints one figure per line, `name value unit`,
// the SimGrid peer's figures (when the peer program was built) among them; or, with --json, one
// JSON object of every figure and nothing else on stdout.

#include <string>

#include "sim/fiber.hpp"

namespace lic::bench {

struct BenchOptions {
  bool quick = false;              ///< small sizes: a smoke run of every workload in seconds
  bool json = false;               ///< one JSON object of every figure on stdout, nothing else
  bool w1 = true, w2 = true, w3 = true;
  bool pipeline = true;            ///< the pipeline run with every report (a whole command)
  bool sweep = true;               ///< sweep --jobs 2 against --jobs 1 (whole commands)
  bool tree = true;                ///< reports of a wide tree (a whole command)
  bool supervised = true;          ///< resident memory of a supervised worker
  bool merge = true;               ///< merge of 16 shards of 10M seeds; a sweep's cost per seed at 1k and 1M
  bool seed = true;                ///< a sweep seed's time outside its event loop; guided search's feedback on a run
  std::string catalog = "scenarios/catalog";  ///< the catalogue files `seed` measures
  bool both_backends = true;       ///< also run the fiber workloads on Boost.Fiber
  bool peer = true;                ///< run the SimGrid peer if it was built
  std::size_t w2_fiber_max = 100'000;
  int repeat = 3;                  ///< throughput figures: best of this many runs
  std::string self_path;           ///< argv[0]-ish path, to find the peer next to it
};

/// Prints the figures to stdout (one per line, or one JSON object); returns a process exit code.
int run(const BenchOptions& o);

}  // namespace lic::bench
