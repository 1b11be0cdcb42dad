#include "scenarios/search/swarm.hpp"

#include <fmt/format.h>

#include <set>

#include "scenarios/faults/table.hpp"
#include "sim/rng.hpp"

namespace lic::scenarios {

namespace {

/// Draws every ranged knob of `f` and writes it in as a plain value.
void draw_knobs(Rng& rng, faults::Fault& f, SwarmChoice& c) {
  for (const faults::KnobRange& r : f.ranges) c.knobs.emplace_back(f.name + "." + r.key, faults::draw_knob(rng, r, f));
  f.ranges.clear();
}

}  // namespace

void name_faults(Scenario& s) {
  for (std::size_t i = 0; i < s.faults.size(); ++i)
    if (s.faults[i].name.empty()) s.faults[i].name = std::string(faults::to_string(s.faults[i].kind)) + "#" + std::to_string(i);
}

Swarmed swarm(const Scenario& s, std::uint64_t seed, const Registry& registry) {
  Swarmed out{s, {}};
  Scenario& t = out.scenario;
  SwarmChoice& c = out.choice;
  Rng rng = Rng(seed).derive("swarm");
  name_faults(t);
  std::vector<faults::Fault> kept;
  std::vector<Mark> marks;
  for (std::size_t i = 0; i < t.faults.size(); ++i) {
    faults::Fault f = t.faults[i];
    if (!rng.chance(Ratio{1, 2})) {
      c.off.push_back(f.name);
      continue;
    }
    draw_knobs(rng, f, c);
    c.on.push_back(f.name);
    kept.push_back(std::move(f));
    if (i < t.fault_marks.size()) marks.push_back(t.fault_marks[i]);
  }
  t.faults = std::move(kept);
  t.fault_marks = std::move(marks);
  t.seed = seed;
  t.tie_break = c.tie_break = rng.chance(Ratio{1, 2}) ? TieBreak::random : TieBreak::fifo;
  std::set<std::string> on(t.buggify.begin(), t.buggify.end());  // pinned by the file: always on
  for (const BuggifyPoint& p : registry.buggify_points(behaviours_in(s)))
    if (rng.chance(Ratio{1, 2})) on.insert(p.name);
  c.buggify.assign(on.begin(), on.end());
  t.buggify = c.buggify;
  return out;
}

std::string describe(const SwarmChoice& c) {
  std::string on;
  for (const std::string& f : c.on) {
    std::string knobs;
    for (const auto& [k, v] : c.knobs)
      if (k.size() > f.size() && k.compare(0, f.size() + 1, f + ".") == 0) knobs += (knobs.empty() ? "" : ", ") + k.substr(f.size() + 1) + " " + v;
    on += (on.empty() ? "" : ", ") + f + (knobs.empty() ? "" : " (" + knobs + ")");
  }
  std::string off;
  for (const std::string& f : c.off) off += (off.empty() ? "" : ", ") + f;
  std::string bug;
  for (const std::string& b : c.buggify) bug += (bug.empty() ? "" : ", ") + b;
  return fmt::format("faults on: {}; off: {}; tie-break {}; buggify: {}", on.empty() ? "none" : on, off.empty() ? "none" : off,
                     to_string(c.tie_break), bug.empty() ? "none" : bug);
}

}  // namespace lic::scenarios
