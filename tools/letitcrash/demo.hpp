#pragma once
// `letitcrash demo`: a small system run under virtual time, to see the kernel at work until the
// scenario runner (issue 5) takes over as the main job.

#include <cstdint>
#include <string>

#include "sim/event_queue.hpp"
#include "sim/fiber.hpp"
#include "sim/time.hpp"

namespace lic::tools {

struct DemoOptions {
  std::uint64_t seed = 1;
  TieBreak tie_break = TieBreak::fifo;
  FiberBackend backend = FiberBackend::context;
  Duration duration = kSecond * 2;
  std::string out_dir;  ///< empty: write nothing
  bool quiet = false;   ///< only the summary line
};

int run_demo(const DemoOptions& o);

}  // namespace lic::tools
