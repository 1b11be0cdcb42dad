#pragma once
// `letitcrash bench`: runs the workloads and prints one figure per line, `name value unit`,
// followed by the SimGrid peer's figures when the peer program was built.

#include <string>

#include "sim/fiber.hpp"

namespace lic::bench {

struct BenchOptions {
  bool quick = false;              ///< small sizes: a smoke run of every workload in seconds
  bool w1 = true, w2 = true, w3 = true;
  bool both_backends = true;       ///< also run the fiber workloads on Boost.Fiber
  bool peer = true;                ///< run the SimGrid peer if it was built
  std::size_t w2_fiber_max = 100'000;
  int repeat = 3;                  ///< throughput figures: best of this many runs
  std::string self_path;           ///< argv[0]-ish path, to find the peer next to it
};

/// Prints the figures to stdout; returns a process exit code.
int run(const BenchOptions& o);

}  // namespace lic::bench
