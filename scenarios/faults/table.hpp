#pragma once
// Every fault kind once (DESIGN.md §4, docs/faults.md): its name, what it is aimed at, and which
// options it takes and needs. The scenario reader, the validator and the writer all read this
// table, so a new kind is one row here plus what the injector does for it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/faults/fault.hpp"

namespace lic::faults {

/// What a kind's own key names in a file.
enum class Aim : std::uint8_t {
  process,  ///< a tree path (`/root/db`) or a registered name: `crash: /root/db`
  node,     ///< a node: `node_crash: b`
  sides,    ///< the nodes on one side of the cut (`to:` the other side): `partition: [a]`
  all,      ///< everything: `heal: all`
};

/// The options a fault may have besides its kind, `name` and its timing (at, every, until, mtbf).
enum class Option : std::uint8_t { reason, to, one_way, duration, delay, ratio, restart_after, grace, mode, skew, drift };

struct KindInfo {
  Kind kind;
  std::string_view name;
  Aim aim;
  std::vector<Option> takes;  ///< the options it may have
  std::vector<Option> needs;  ///< those it must have
  std::string_view help;
};

/// Every kind, in the order of the Kind enum.
const std::vector<KindInfo>& kinds();
const KindInfo& info(Kind k);
/// The kind called `name`, or null.
const KindInfo* find_kind(std::string_view name);

std::string_view to_string(Option o);
/// The inverse of to_string; false for an unknown name.
bool parse_option(std::string_view text, Option& out);
bool takes(Kind k, Option o);

/// The knobs a file may write as a range `lo..hi` (a swarm run draws them): at, mtbf, every,
/// duration, delay, grace, restart_after (durations) and ratio.
bool rangeable(std::string_view key);
/// Sets a duration knob (`at` and the other rangeable durations) of `f`.
void set_knob(Fault& f, std::string_view key, Duration d);
/// Sets the ratio.
void set_knob(Fault& f, Ratio r);
/// A range's text, `5s..2m`, split at its `..`: false when `text` is not one.
bool split_range(std::string_view text, std::string& lo, std::string& hi);
/// Whether `key` can be drawn afresh at each injection (`duration: {uniform: [500ms, 3s]}`):
/// duration, delay, grace, restart_after and ratio.
bool drawn_per_injection(std::string_view key);
/// Draws the knob `r.key` of `f` between `r`'s ends (as written; the reader checked them) on a
/// round grid (about 1,000 to 10,000 steps: 5s..2m gives multiples of 100ms) and sets it;
/// returns the value drawn, as a file would write it. A swarm seed's ranges and a fault's
/// per-injection ranges both draw with it.
std::string draw_knob(Rng& rng, const KnobRange& r, Fault& f);

}  // namespace lic::faults
