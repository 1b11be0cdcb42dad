// The scenario reader's faults (reader.hpp): a fault's kind and target, its timing (at, mtbf, every,
// after, until), its knobs, ranges for swarm runs and knobs drawn at each injection.
#include "scenarios/file/reader.hpp"

#include "scenarios/faults/table.hpp"

namespace lic::scenarios::reading {

using supervision::ChildType;
using supervision::Shutdown;

Keys fault_keys() {
  Keys keys{"name", "at", "every", "until", "mtbf", "after"};
  for (const faults::KindInfo& k : faults::kinds()) keys.push_back(k.name);
  for (std::size_t o = 0; o <= static_cast<std::size_t>(faults::Option::drift); ++o)
    keys.push_back(faults::to_string(static_cast<faults::Option>(o)));
  return keys;
}

std::string kind_names() {
  std::string s;
  const auto& all = faults::kinds();
  for (std::size_t i = 0; i < all.size(); ++i) s += std::string(i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + std::string(all[i].name);
  return s;
}

/// A positive duration (`every`, `mtbf`).
void read_period(Reader& rd, const Entry& e, std::optional<Duration>& out) {
  Duration d;
  if (!rd.duration(e.value, e.key, d)) return;
  if (d <= Duration::zero()) rd.error(e.value, e.key + " must be more than 0");
  out = d;
}

/// `at`, `every`, `until`, `mtbf` or `after`: false for any other key.
bool read_timing(Reader& rd, const Entry& e, faults::Fault& f) {
  Time t;
  if (e.key == "at") {
    if (rd.time(e.value, "at", t)) f.at = t;
  } else if (e.key == "until") {
    if (rd.time(e.value, "until", t)) f.until = t;
  } else if (e.key == "every") {
    read_period(rd, e, f.every);
  } else if (e.key == "mtbf") {
    read_period(rd, e, f.mtbf);
  } else if (e.key == "after") {
    if (rd.time(e.value, "after", t)) f.after = t;
  } else {
    return false;
  }
  return true;
}

std::string trimmed(const std::string& t) {
  const auto a = t.find_first_not_of(' ');
  const auto b = t.find_last_not_of(' ');
  return a == std::string::npos ? std::string() : t.substr(a, b - a + 1);
}

/// A ratio range's ends, read and ordered: false (reported) when they are not.
bool read_ratio_range(Reader& rd, const Entry& e, const std::string& lo, const std::string& hi, faults::Fault& f) {
  Ratio a;
  Ratio b;
  std::string why;
  if (!parse_ratio(lo, a, why) || !parse_ratio(hi, b, why)) {
    rd.error(e.value, "bad range for ratio: " + why);
    return false;
  }
  if (!fraction_at_most(a.num, a.den, b)) {
    rd.error(e.value, "the range's low end " + lo + " is above its high end " + hi);
    return false;
  }
  faults::set_knob(f, a);
  return true;
}

/// A duration range's ends, read and ordered: false (reported) when they are not.
bool read_duration_range(Reader& rd, const Entry& e, const std::string& lo, const std::string& hi, faults::Fault& f) {
  const DurationParse a = parse_duration(lo);
  const DurationParse b = parse_duration(hi);
  if (!a.ok || !b.ok) {
    rd.error(e.value, "bad range for " + e.key + ": " + (a.ok ? b.error : a.error));
    return false;
  }
  if (a.value > b.value) {
    rd.error(e.value, "the range's low end " + lo + " is above its high end " + hi);
    return false;
  }
  if ((e.key == "mtbf" || e.key == "every" || e.key == "grace") && a.value <= Duration::zero()) {
    rd.error(e.value, e.key + " must be more than 0: its range's low end is " + lo);
    return false;
  }
  faults::set_knob(f, e.key, a.value);
  return true;
}

/// A knob written as a range `lo..hi` (docs/swarm.md): its field takes the low end, and a swarm
/// run draws it. False when the value is not a range (it is read as usual); true when it was
/// one, read or reported.
bool read_range(Reader& rd, const Entry& e, faults::Fault& f) {
  std::string lo;
  std::string hi;
  // Names and reasons are text: "a..b" in one is not a range (an atom may hold "..").
  if (e.key == "name" || e.key == "reason" || !e.value.IsScalar() ||
      !faults::split_range(e.value.Scalar(), lo, hi))
    return false;
  if (!faults::rangeable(e.key)) {
    rd.error(e.value, "`" + e.key + "` takes no range (ranges are for at, mtbf, every, duration, delay, grace, restart_after and ratio)");
    return true;
  }
  lo = trimmed(lo);
  hi = trimmed(hi);
  const bool ok = e.key == "ratio" ? read_ratio_range(rd, e, lo, hi, f) : read_duration_range(rd, e, lo, hi, f);
  if (ok) f.ranges.push_back({e.key, lo, hi});
  else if (e.key != "ratio") faults::set_knob(f, e.key, kSecond);  // it was given: no "needs `mtbf`" on top (the file is refused)
  return true;
}

/// A knob drawn afresh at each injection, `duration: {uniform: [500ms, 3s]}` (docs/faults.md):
/// its field takes the low end. False when the value is not written so (it is read as usual);
/// true when it was, read or reported.
bool read_each(Reader& rd, const Entry& e, faults::Fault& f) {
  std::vector<YAML::Node> ends;
  if (!rd.uniform(e.value, e.key, ends)) return false;
  if (!faults::drawn_per_injection(e.key)) {
    rd.error(e.value, "`" + e.key + "` is not drawn per injection (`{uniform: [low, high]}` is for duration, delay, grace, "
                      "restart_after and ratio" +
                      (faults::rangeable(e.key) ? "; a swarm run draws `" + e.key + ": low..high` once per seed)" : ")"));
    return true;
  }
  if (ends.empty()) return true;
  if (e.key == "ratio") {
    Ratio a;
    Ratio b;
    if (!rd.ratio(ends[0], "ratio", a) || !rd.ratio(ends[1], "ratio", b)) return true;
    if (!fraction_at_most(a.num, a.den, b)) {
      rd.error(ends[0], "ratio: the range's low end " + ends[0].Scalar() + " is above its high end " + ends[1].Scalar());
      return true;
    }
    faults::set_knob(f, a);
  } else {
    Duration a;
    Duration b;
    if (!uniform_durations(rd, ends, e.key, a, b)) return true;
    if (e.key == "grace" && a <= Duration::zero()) {
      rd.error(ends[0], "grace must be more than 0: its range's low end is " + ends[0].Scalar());
      return true;
    }
    faults::set_knob(f, e.key, a);
  }
  f.each.push_back({e.key, ends[0].Scalar(), ends[1].Scalar()});
  return true;
}

/// The kind's own key and what it is aimed at: `crash: /root/db`, `partition: [a, b]`.
void read_aim(Reader& rd, const Entry& e, const faults::KindInfo& k, faults::Fault& f) {
  f.kind = k.kind;
  switch (k.aim) {
    case faults::Aim::process: {
      std::string target;
      if (rd.scalar(e.value, e.key + " (a tree path or a registered name)", target))
        f.target = !target.empty() && target.front() == '/' ? faults::Target::path(target) : faults::Target::name(target);
      break;
    }
    case faults::Aim::node: {
      std::string node;
      if (rd.scalar(e.value, e.key + " (a node)", node)) f.target = faults::Target::node(node);
      break;
    }
    case faults::Aim::sides: {
      std::vector<std::string> side;
      if (rd.words(e.value, e.key + " (the nodes on one side)", side))
        for (const std::string& s : side) f.side_a.push_back(Atom(s));
      break;
    }
    case faults::Aim::all: {
      std::string what;
      if (rd.scalar(e.value, e.key, what) && what != "all") rd.error(e.value, "write `" + e.key + ": all`");
      break;
    }
  }
}

void read_option(Reader& rd, const Entry& e, faults::Option o, faults::Fault& f) {
  using faults::Option;
  std::vector<std::string> side;
  Duration d;
  switch (o) {
    case Option::reason: rd.reason(e.value, "reason", f.reason); break;
    case Option::to:
      if (rd.words(e.value, "to", side))
        for (const std::string& s : side) f.side_b.push_back(Atom(s));
      break;
    case Option::one_way: rd.boolean(e.value, "one_way", f.one_way); break;
    case Option::duration: rd.duration(e.value, "duration", f.duration); break;
    case Option::delay: rd.duration(e.value, "delay", f.delay); break;
    case Option::ratio: rd.ratio(e.value, "ratio", f.ratio); break;
    case Option::restart_after:
      if (rd.duration(e.value, "restart_after", d)) f.restart_after = d;
      break;
    case Option::grace:
      if (rd.duration(e.value, "grace", f.grace) && f.grace <= Duration::zero()) rd.error(e.value, "grace must be more than 0");
      break;
    case Option::mode:
      if (rd.scalar(e.value, "mode", f.mode) && f.mode.empty()) rd.error(e.value, "mode must be a word, not empty");
      break;
    case Option::skew:
      if (Duration x; rd.signed_duration(e.value, "skew", x)) f.skew = x;
      break;
    case Option::drift:
      if (std::int64_t x = 0; rd.ppm(e.value, "drift", x)) f.drift_ppm = x;
      break;
  }
}

faults::Fault read_fault(Reader& rd, const YAML::Node& n, Mark& mark) {
  faults::Fault f;
  mark = mark_of(n);
  const faults::KindInfo* kind = nullptr;
  std::vector<const Entry*> options;
  const auto keys = rd.entries(n, "a fault", fault_keys());
  for (const Entry& e : keys) {
    if (e.key == "name") rd.name(e.value, "a fault's name", f.name);
    else if ((e.key == "at" || e.key == "every" || e.key == "until" || e.key == "mtbf" || e.key == "after") &&
             (read_range(rd, e, f) || read_each(rd, e, f)))
      continue;
    else if (read_timing(rd, e, f)) continue;
    else if (const faults::KindInfo* k = faults::find_kind(e.key)) {
      if (kind != nullptr) rd.error(e.key_node, "a fault is one kind: '" + e.key + "' after '" + std::string(kind->name) + "'");
      else read_aim(rd, e, *k, f), kind = k;
    } else {
      options.push_back(&e);
    }
  }
  if (!n.IsMap()) return f;
  if (kind == nullptr) rd.error(n, "a fault needs a kind: " + kind_names());
  std::vector<faults::Option> given;
  for (const Entry* e : options) {
    faults::Option o{};
    faults::parse_option(e->key, o);  // entries() let only known keys through
    if (kind != nullptr && !faults::takes(kind->kind, o)) {
      rd.error(e->key_node, "'" + e->key + "' does not apply to a " + std::string(kind->name) + " fault");
      continue;
    }
    given.push_back(o);
    if (!read_range(rd, *e, f) && !read_each(rd, *e, f)) read_option(rd, *e, o, f);
  }
  if (f.at && f.mtbf)
    rd.error(n, "a fault is scheduled (`at`) or stochastic (`mtbf`), not both (one whose random clock starts later: `mtbf` with `after`)");
  if (f.after && !f.mtbf) rd.error(n, "`after` starts a stochastic fault's clock: give `mtbf` too (a scheduled fault starts at `at`)");
  const bool timed = std::any_of(keys.begin(), keys.end(), [](const Entry& e) { return e.key == "at" || e.key == "mtbf" || e.key == "after"; });
  if (!timed) rd.error(n, "a fault needs `at` (a time) or `mtbf` (a mean time between failures)");  // a bad one was reported
  if (f.every && !f.at) rd.error(n, "`every` repeats a scheduled fault: give `at` too");
  // A missing option is reported only when it was not written at all (a bad value was reported).
  for (faults::Option o : kind != nullptr ? kind->needs : std::vector<faults::Option>{}) {
    if (std::find(given.begin(), given.end(), o) == given.end())
      rd.error(n, "a " + std::string(kind->name) + " fault needs a `" + std::string(faults::to_string(o)) + "`");
  }
  return f;
}

/// `converges`, `{alive: /root/db}` (the first argument alone) or `{restarts: {of: /root/a,
/// max: 3}}`. Whether the name and the arguments fit a check is the validator's to say.

}  // namespace lic::scenarios::reading
