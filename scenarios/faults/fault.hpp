#pragma once
// Faults (DESIGN.md §4, docs/faults.md): named units with typed options, scheduled at a time or
// drawn as a Poisson process (mean time between failures `mtbf`, counted while the target is
// up) from the fault's own random stream. Every injection is traced as `fault_injected`; a fault
// whose target does not exist at that moment is traced as `fault_skipped` with the reason.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/atom.hpp"
#include "sim/exit_reason.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace lic::faults {

enum class Kind : std::uint8_t {
  crash,         ///< the process raises (ends with error(injected_crash)) — trappable by links
  kill,          ///< exit(Pid, kill): untrappable
  exit,          ///< an exit signal with `reason`
  node_crash,    ///< every process on the node dies (killed); optional restart_after
  node_restart,  ///< a crashed node comes back and boots its root tree
  partition,     ///< blocks `side_a` -> `side_b` (and back unless one_way) for `duration`
  heal,          ///< unblocks every path
  clog,          ///< adds `delay` to every message on the paths from `side_a` to `side_b`
  loss,          ///< a window of message loss at `ratio` on those paths
  duplicate,     ///< a window of duplication
  reorder,       ///< a window of reordering
  pause,         ///< the node runs nothing for `duration`
  slow_start,    ///< the target's next start takes `delay` longer (its init starts late)
  stop_task,     ///< SIGTERM to the node's processes, then SIGKILL after `grace` if it still runs
  degrade,       ///< the target (a behaviour that knows `mode`) degrades for `duration`
  clock,         ///< the node's clock jumps to `skew` and/or drifts `drift_ppm` from now on
  suspend,         ///< SIGSTOP of the target's OS process for `duration` (its sockets answer on)
  cut_connection,  ///< drops one connection's segments (a raw-network process) for `duration`
};

std::string_view to_string(Kind k);
/// The inverse of to_string; false for an unknown name.
bool parse_kind(std::string_view text, Kind& out);

/// What a fault is aimed at. A process by tree path (`/root/input/parser`) or by registered
/// name; a node by name. Network faults use the node groups in Fault instead.
struct Target {
  enum class By : std::uint8_t { none, path, name, node };
  By by = By::none;
  std::string text;

  static Target path(std::string p) { return {By::path, std::move(p)}; }
  static Target name(std::string n) { return {By::name, std::move(n)}; }
  static Target node(std::string n) { return {By::node, std::move(n)}; }
  bool operator==(const Target&) const = default;
};

std::string to_string(const Target& t);

/// A node written `node_of(NAME)` stands for the node of the process registered as NAME when the
/// fault fires (the leader's node, say: Jepsen's nemeses aim at the primary the same way). Its
/// NAME, or nothing for a plain node name.
std::optional<std::string> node_of_name(std::string_view node);

/// A knob written as a range, `mtbf: 5s..2m` or `ratio: 0%..20%` (docs/swarm.md): a swarm run
/// draws it per seed, any other run takes its low end (which the knob's own field holds).
struct KnobRange {
  std::string key;  ///< at, mtbf, every, duration, delay, ratio, grace or restart_after
  std::string lo;   ///< the low end, as written
  std::string hi;   ///< the high end, as written
  bool operator==(const KnobRange&) const = default;
};

struct Fault {
  Kind kind = Kind::crash;
  Target target{};
  /// Its name in the trace and its random stream's name; empty: `<kind>#<index>`.
  std::string name{};

  // When: at a time, or a Poisson process with this mean time between failures. `every`
  // repeats a scheduled fault at that period (from `at`). Nothing fires at or after `until`.
  std::optional<Time> at{};
  std::optional<Duration> mtbf{};
  std::optional<Duration> every{};
  std::optional<Time> until{};
  /// A stochastic fault's start: its Poisson clock runs from here on (`after: 10s` with `mtbf`:
  /// random stops, but only once traffic has begun). None: from the run's start.
  std::optional<Time> after{};

  // Options, by kind.
  Reason reason = Reason::error(Atom("injected_crash"));  ///< exit (crash uses this too)
  std::vector<Atom> side_a{};  ///< partition / clog / loss / duplicate / reorder: from
  std::vector<Atom> side_b{};  ///< ... to; empty: every other node
  bool one_way = false;        ///< partition: only side_a -> side_b
  Duration duration{};         ///< partition, pause, suspend, cut_connection and network windows; zero: until healed
  Duration delay{};            ///< clog: extra latency; slow_start: extra start time
  Ratio ratio = Ratio::never();  ///< loss / duplicate / reorder
  std::optional<Duration> restart_after{};  ///< node_crash: restart the node this much later
  Duration grace{};            ///< stop_task: SIGKILL this long after SIGTERM
  std::string mode{};          ///< degrade: what degrades (the target's own word: errors, full, ...)
  std::optional<Duration> skew{};          ///< clock: the wall clock's offset from now on (signed)
  std::optional<std::int64_t> drift_ppm{};  ///< clock: the drift from now on, parts per million (signed)
  std::vector<KnobRange> ranges{};  ///< knobs written as ranges (their fields hold the low ends)
  /// Knobs drawn afresh at each injection, uniformly between the ends as written
  /// (`duration: {uniform: [500ms, 3s]}`: every pause its own length), from the fault's own
  /// stream; their fields hold the low ends. Unlike `ranges`, in every run, not only under swarm.
  std::vector<KnobRange> each{};
  /// The per-injection range written for `key`, or null.
  const KnobRange* drawn(std::string_view key) const {
    for (const KnobRange& r : each)
      if (r.key == key) return &r;
    return nullptr;
  }
  /// The range written for `key`, or null.
  const KnobRange* range(std::string_view key) const {
    for (const KnobRange& r : ranges)
      if (r.key == key) return &r;
    return nullptr;
  }
  bool operator==(const Fault&) const = default;
};

/// The message a `degrade` fault sends its target, tag kDegrade: `mode` starts (on) or ends.
/// A behaviour that can degrade handles it in handle_info; others ignore it.
struct Degrade {
  Atom mode;
  bool on = true;
};
extern const Atom kDegrade;  ///< "$degrade"

/// What a fault set and a run's phases look like as a whole (DESIGN.md §4).
struct Phases {
  Duration chaos{};                    ///< faults are on in [0, chaos)
  std::optional<Duration> quiet{};     ///< then faults stop, the network heals, nodes come back
  bool expect_escalation = false;      ///< the run is expected to take the root down
  bool operator==(const Phases&) const = default;
};

}  // namespace lic::faults
