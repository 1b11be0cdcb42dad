#pragma once
// What the net-tick tests share (sim/net_ticks_test.cpp, sim/net_ticks_review_test.cpp): two
// nodes, a trapping process that records what it receives, the settings.

#include <vector>

#include "sim/simulation.hpp"
#include "sim/test_support.hpp"

namespace lic::testing::ticks {

inline const Atom kA("a");
inline const Atom kB("b");
inline const Atom kMsg("msg");

struct Got {
  Time at;
  int value = 0;
  MsgKind kind = MsgKind::plain;
  Reason reason;
  Pid from;
};

inline SimOptions seeded(std::uint64_t seed) {
  SimOptions o;
  o.seed = seed;
  return o;
}

inline NetTicks ticks(Duration t) {
  NetTicks n;
  n.ticktime = t;
  return n;
}

/// A trapping process on `node` that records what it receives; with `link_to`, it links to
/// that process at `link_at` first.
inline Pid recorder(Simulation& sim, Atom node, std::vector<Got>& got, Pid link_to = {}, Time link_at = {}) {
  SpawnOptions o;
  o.node = node;
  o.trap_exit = true;
  return sim.spawn(
      [&got, link_to, link_at](Context& ctx) {
        if (link_to) {
          ctx.sleep(link_at - ctx.now());
          ctx.link(link_to);
        }
        for (;;) {
          MessagePtr m = ctx.receive();
          got.push_back({ctx.now(), as_int(*m), m->kind, m->reason, m->from});
        }
      },
      o);
}

}  // namespace lic::testing::ticks
