#pragma once
// The simulated network between nodes (DESIGN.md §2, docs/network.md): what a directed path
// between two nodes does to the messages that cross it.

#include <cstdint>

#include "sim/atom.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace lic {

/// How a directed path (from one node to another) treats what crosses it. A message takes
/// `latency_min` plus an exponential delay with mean `latency_mean - latency_min` (so the mean
/// latency is `latency_mean`), or, when `latency_max` is set, a latency drawn uniformly from
/// [latency_min, latency_max] (to the nanosecond; `latency_mean` then holds the midpoint), plus
/// `clog`. Messages keep their order on the path (FIFO per
/// ordered pair) unless `reorder` picks them out: such a message takes its own latency and may
/// overtake or fall behind others. `loss` drops a message (recorded with reason `lost`),
/// `duplicate` delivers it twice (each copy with its own latency). Exit signals and monitor
/// DOWNs are never lost, duplicated or reordered: distributed Erlang guarantees them or reports
/// `noconnection`.
struct LinkParams {
  Duration latency_min = kMillisecond;
  Duration latency_mean = kMillisecond;
  /// Set: the uniform model (`latency: {uniform: [2ms, 20ms]}`), its high end; zero: exponential.
  Duration latency_max{};
  Ratio loss = Ratio::never();
  Ratio duplicate = Ratio::never();
  Ratio reorder = Ratio::never();
  Duration clog{};  ///< extra delay on every message (the `clog` fault)

  bool operator==(const LinkParams&) const = default;
};

/// A temporary change to paths (a fault window): the effective parameters of a path are its
/// own with each active effect applied — the larger of each Ratio, the larger latency, the sum
/// of clogs. `from` / `to` empty: any node.
struct LinkEffect {
  Atom from;
  Atom to;
  Ratio loss = Ratio::never();
  Ratio duplicate = Ratio::never();
  Ratio reorder = Ratio::never();
  Duration clog{};
};

/// How nodes notice that they lost contact (docs/network.md). `ticktime` zero: at the instant of
/// a block (the simulator's first model). Otherwise distributed Erlang's net ticks: each node's
/// net_kernel ticks every ticktime / 4, and a side declares its peer down when it has read
/// nothing from it for four ticks (0.75 to 1.25 ticktime after a cut), each side on its own.
/// Until then a cut loses nothing: what is sent waits and arrives after the heal, at the first
/// TCP retransmission after it. `setuptime` is net_setuptime: how long a link, monitor or call
/// to a node that cannot be reached waits before it fails.
struct NetTicks {
  Duration ticktime{};
  Duration setuptime = Duration{7'000'000'000};
  /// OTP 25's `global` default (kernel's prevent_overlapping_partitions): a node that hears
  /// from a peer that it lost a third node disconnects from that third node, so partitions do
  /// not overlap (docs/network.md, "global"). Only under net ticks.
  bool prevent_overlapping_partitions = true;
  bool operator==(const NetTicks&) const = default;
};

}  // namespace lic
