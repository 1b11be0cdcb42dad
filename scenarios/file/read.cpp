#include "scenarios/file/read.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>

#include "scenarios/args.hpp"
#include "scenarios/faults/table.hpp"
#include "scenarios/file/fix.hpp"
#include "scenarios/file/validate.hpp"
#include "supervision/lifecycle.hpp"

namespace lic::scenarios {

namespace {

using supervision::ChildType;
using supervision::Shutdown;

Mark mark_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return Mark{};
  return Mark{m.line + 1, m.column + 1};
}

std::string kind_of(const YAML::Node& n) {
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "empty";
  return "a scalar";
}

using Keys = std::vector<std::string_view>;

std::string joined(const Keys& words) {
  std::string s;
  for (std::string_view w : words) {
    if (!s.empty()) s += ", ";
    s += w;
  }
  return s;
}

std::string did_you_mean(std::string_view word, const Keys& options) {
  const std::string best = closest_name(word, std::vector<std::string>(options.begin(), options.end()));
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

// yaml-cpp's Node::operator= writes through to the node it refers to (it changes the document);
// rebinding a Node variable is reset(). Every Node variable here is bound once or reset().

/// The first control character in `text` (UTF-8): C0 but tab and line feed, DEL, and C1
/// (U+0080..U+009F, which terminals also obey).
std::optional<char32_t> control_character(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F) return c;
    if (c == 0xC2 && i + 1 < text.size()) {
      const auto d = static_cast<unsigned char>(text[i + 1]);
      if (d >= 0x80 && d <= 0x9F) return d;
    }
  }
  return std::nullopt;
}

/// A key of a map with its value.
struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

/// Reads YAML nodes into values, collecting every mistake instead of stopping at the first.
class Reader {
 public:
  std::vector<Diagnostic> errors;

  void error(const YAML::Node& n, std::string msg) { errors.push_back({mark_of(n), std::move(msg)}); }
  void error(Mark m, std::string msg) { errors.push_back({m, std::move(msg)}); }

  /// The entries of map `n` (`what` names it in messages); unknown and repeated keys are errors.
  std::vector<Entry> entries(const YAML::Node& n, std::string_view what, const Keys& allowed) {
    std::vector<Entry> out;
    if (!n.IsMap()) {
      error(n, std::string(what) + " must be a map, not " + kind_of(n));
      return out;
    }
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const YAML::Node k = it->first;
      if (!k.IsScalar()) {
        error(k, std::string("a key in ") + std::string(what) + " must be a scalar");
        continue;
      }
      const std::string key = k.Scalar();
      if (key == "<<") {
        error(k, "merge keys (`<<: *anchor`) are not supported in scenario files: write the keys out (anchors and "
                 "aliases of whole values are)");
        continue;
      }
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        error(k, "unknown key '" + key + "' in " + std::string(what) + did_you_mean(key, allowed) +
                     "; expected one of: " + joined(allowed));
        continue;
      }
      if (!seen.insert(key).second) {
        error(k, "duplicate key '" + key + "' in " + std::string(what));
        continue;
      }
      out.push_back({key, k, it->second});
    }
    return out;
  }

  /// A scalar's text. An escape in a quoted scalar ("\e", "\x07", "\0") can make a control
  /// character the file's bytes do not hold; it would reach terminals and JSON, so it is refused.
  bool scalar(const YAML::Node& n, std::string_view what, std::string& out) {
    if (!n.IsScalar()) {
      error(n, std::string(what) + " must be a scalar, not " + kind_of(n));
      return false;
    }
    // "?" is a plain scalar's tag, "!" a quoted one's; any other (`!foo bar`, `!!str x`) is a
    // YAML tag, which scenario files do not use: `behaviour: !pipeline.validator` reads as an
    // empty value tagged `!pipeline.validator`, not as the name.
    if (n.Tag() != "?" && n.Tag() != "!") {
      error(n, fmt::format("{} has a YAML tag ({}), which scenario files do not use: write the value without it", what,
                           printable(n.Tag())));
      return false;
    }
    if (const std::optional<char32_t> c = control_character(n.Scalar())) {
      error(n, fmt::format("{} holds a control character (U+{:04X}, from an escape): names and values are printable text",
                           what, static_cast<std::uint32_t>(*c)));
      return false;
    }
    out = n.Scalar();
    return true;
  }

  /// A name: a scalar that is not empty (an empty name cannot be aimed at or told apart).
  bool name(const YAML::Node& n, std::string_view what, std::string& out) {
    if (!scalar(n, what, out)) return false;
    if (out.empty() || out.find_first_not_of(" \t") == std::string::npos) {
      error(n, std::string(what) + " must not be empty");
      return false;
    }
    return true;
  }

  bool duration(const YAML::Node& n, std::string_view what, Duration& out) {
    std::string text;
    if (!scalar(n, what, text)) return false;
    const DurationParse p = parse_duration(text);
    if (!p.ok) {
      Mark m = mark_of(n);
      if (m.line != 0 && n.Tag() != "!") m.col += static_cast<int>(p.error_column);  // plain scalars only
      error(m, "bad duration for " + std::string(what) + ": " + p.error);
      return false;
    }
    out = p.value;
    return true;
  }

  /// A duration that may be negative: `-2s`, `+500ms`, `3s`.
  bool signed_duration(const YAML::Node& n, std::string_view what, Duration& out) {
    std::string text;
    if (!scalar(n, what, text)) return false;
    const bool minus = !text.empty() && text.front() == '-';
    const DurationParse p = parse_duration(!text.empty() && (text.front() == '-' || text.front() == '+') ? text.substr(1) : text);
    if (!p.ok) {
      error(n, "bad duration for " + std::string(what) + ": " + p.error);
      return false;
    }
    out = minus ? Duration::zero() - p.value : p.value;
    return true;
  }

  /// A clock drift in parts per million: `500ppm`, `-200ppm` (at most 10%, 100000ppm, either way).
  bool ppm(const YAML::Node& n, std::string_view what, std::int64_t& out) {
    std::string text;
    if (!scalar(n, what, text)) return false;
    std::int64_t v = 0;
    const std::size_t digits = text.size() >= 3 ? text.size() - 3 : 0;
    const char* first = text.data() + (!text.empty() && text.front() == '+' ? 1 : 0);
    const auto r = std::from_chars(first, text.data() + digits, v);
    if (text.size() < 4 || text.compare(digits, 3, "ppm") != 0 || r.ec != std::errc() || r.ptr != text.data() + digits ||
        v < -100'000 || v > 100'000) {
      error(n, std::string(what) + " must be parts per million from -100000ppm to 100000ppm, e.g. 500ppm or -200ppm, not '" +
                   text + "'");
      return false;
    }
    out = v;
    return true;
  }

  bool time(const YAML::Node& n, std::string_view what, Time& out) {
    Duration d;
    if (!duration(n, what, d)) return false;
    out = Time{} + d;
    return true;
  }

  /// `{uniform: [low, high]}`, a value drawn afresh at each use: true when `n` is a map with the
  /// key `uniform`, with its two ends in `ends` (left empty when it is malformed, which is
  /// reported); false for any other value, read as usual.
  bool uniform(const YAML::Node& n, std::string_view what, std::vector<YAML::Node>& ends) {
    if (!n.IsMap() || std::none_of(n.begin(), n.end(), [](const auto& kv) { return kv.first.IsScalar() && kv.first.Scalar() == "uniform"; }))
      return false;
    const std::size_t before = errors.size();
    const auto keys = entries(n, what, {"uniform"});
    const YAML::Node v = keys.empty() ? n : keys.front().value;
    if (!v.IsSequence() || v.size() != 2) {
      if (errors.size() == before) error(v, std::string(what) + ": write `{uniform: [low, high]}`, the range's two ends");
      return true;
    }
    ends = {v[0], v[1]};
    return true;
  }

  bool ratio(const YAML::Node& n, std::string_view what, Ratio& out) {
    std::string text;
    if (!scalar(n, what, text)) return false;
    std::string why;
    if (!parse_ratio(text, out, why)) {
      error(n, "bad ratio for " + std::string(what) + ": " + why);
      return false;
    }
    return true;
  }

  template <class Int>
  bool integer(const YAML::Node& n, std::string_view what, Int& out, Int lo, Int hi) {
    std::string text;
    if (!scalar(n, what, text)) return false;
    Int v{};
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || v < lo || v > hi) {
      error(n, std::string(what) + " must be a whole number from " + std::to_string(lo) + " to " +
                   std::to_string(hi) + ", not '" + text + "'");
      return false;
    }
    out = v;
    return true;
  }

  bool boolean(const YAML::Node& n, std::string_view what, bool& out) {
    std::string text;
    if (!scalar(n, what, text)) return false;
    if (text == "true") out = true;
    else if (text == "false") out = false;
    else {
      error(n, std::string(what) + " must be true or false, not '" + text + "'");
      return false;
    }
    return true;
  }

  /// An exit reason: `normal`, `shutdown`, `kill`, `"{error,boom}"`, or a one-key map
  /// `{error: boom}` / `{shutdown: why}`.
  bool reason(const YAML::Node& n, std::string_view what, Reason& out) {
    std::string text;
    if (n.IsMap() && n.size() == 1) {
      const auto it = n.begin();
      std::string head;
      std::string inner;
      if (!scalar(it->first, what, head) || !scalar(it->second, what, inner)) return false;
      if ((head != "error" && head != "shutdown") || inner.empty() ||
          inner.find_first_of("{},") != std::string::npos) {
        error(n, "bad exit reason for " + std::string(what) +
                     ": a map reason is {error: Term} or {shutdown: Term}");
        return false;
      }
      text = "{" + head + "," + inner + "}";
    } else if (!scalar(n, what, text)) {
      return false;
    }
    if (!parse_reason(text, out)) {
      error(n, "bad exit reason '" + text + "' for " + std::string(what) +
                   " (normal, shutdown, kill, an atom, \"{error,Term}\" or \"{shutdown,Term}\")");
      return false;
    }
    return true;
  }

  /// A scalar or a list of scalars.
  bool words(const YAML::Node& n, std::string_view what, std::vector<std::string>& out) {
    out.clear();
    if (n.IsScalar()) {
      out.push_back(n.Scalar());
      return true;
    }
    if (!n.IsSequence()) {
      error(n, std::string(what) + " must be a name or a list of names, not " + kind_of(n));
      return false;
    }
    bool ok = true;
    for (const YAML::Node& x : n) {
      std::string w;
      if (scalar(x, what, w)) out.push_back(w);
      else ok = false;
    }
    return ok;
  }

  template <class T, class Parse>
  bool choice(const YAML::Node& n, std::string_view what, T& out, Parse parse, const char* options) {
    std::string text;
    if (!scalar(n, what, text)) return false;
    if (!parse(text, out)) {
      error(n, "unknown " + std::string(what) + " '" + text + "' (" + options + ")");
      return false;
    }
    return true;
  }
};

// ---- the sections of a file ---------------------------------------------------------------

/// The two ends of a `{uniform: [low, high]}` duration, read and in order: false (reported) when
/// they are not.
bool uniform_durations(Reader& rd, const std::vector<YAML::Node>& ends, const std::string& what, Duration& lo, Duration& hi) {
  if (ends.size() != 2 || !rd.duration(ends[0], what, lo) || !rd.duration(ends[1], what, hi)) return false;
  if (lo <= hi) return true;
  rd.error(ends[0], what + ": the range's low end " + ends[0].Scalar() + " is above its high end " + ends[1].Scalar() +
                        " (write {uniform: [low, high]})");
  return false;
}

void read_link(Reader& rd, const YAML::Node& n, std::string_view what, LinkParams& p,
               std::string* from, std::string* to) {
  const auto keys = from != nullptr
                        ? rd.entries(n, what, {"from", "to", "latency", "latency_min", "loss", "duplicate", "reorder", "clog"})
                        : rd.entries(n, what, {"latency", "latency_min", "loss", "duplicate", "reorder", "clog"});
  bool have_min = false;
  bool have_mean = false;
  bool have_uniform = false;
  YAML::Node at = n;
  for (const Entry& e : keys) {
    std::vector<YAML::Node> ends;
    if (e.key == "from") rd.scalar(e.value, "from", *from);
    else if (e.key == "to") rd.scalar(e.value, "to", *to);
    else if (e.key == "latency" && (have_uniform = rd.uniform(e.value, "latency", ends)))
      uniform_durations(rd, ends, "latency", p.latency_min, p.latency_max), at.reset(e.value);
    else if (e.key == "latency") have_mean = rd.duration(e.value, "latency", p.latency_mean), at.reset(e.value);
    else if (e.key == "latency_min") have_min = rd.duration(e.value, "latency_min", p.latency_min);
    else if (e.key == "loss") rd.ratio(e.value, "loss", p.loss);
    else if (e.key == "duplicate") rd.ratio(e.value, "duplicate", p.duplicate);
    else if (e.key == "reorder") rd.ratio(e.value, "reorder", p.reorder);
    else if (e.key == "clog") rd.duration(e.value, "clog", p.clog);
  }
  if (have_uniform) {  // latency_min is the range's low end
    if (have_min) rd.error(at, "latency_min does not go with a uniform latency: the range's low end is the least it takes");
    p.latency_mean = p.latency_min + (p.latency_max - p.latency_min) / 2;
    return;
  }
  if (have_mean || have_min) p.latency_max = Duration::zero();  // a plain latency replaces a uniform default's
  if (have_mean && !have_min) p.latency_min = p.latency_mean;  // `latency: 5ms` alone is fixed
  if (have_min && !have_mean) p.latency_mean = std::max(p.latency_mean, p.latency_min);
  if (p.latency_min > p.latency_mean) rd.error(at, "latency_min is more than latency (the mean)");
}

/// A supervisor's own `init`: one result or a list of them, one per start attempt.
void read_sup_init(Reader& rd, const YAML::Node& n, std::vector<std::string>& out) {
  std::vector<YAML::Node> items;
  if (n.IsSequence()) {
    for (const YAML::Node& x : n) items.push_back(x);
    if (items.empty()) rd.error(n, "init: an empty list (give at least one result, e.g. [ok])");
  } else {
    items.push_back(n);
  }
  for (const YAML::Node& x : items) {
    std::string text;
    if (!rd.scalar(x, "init", text)) continue;
    InitResult r;
    std::string why;
    if (parse_init_result(text, r, why)) out.push_back(text);
    else rd.error(x, "init: " + why);
  }
}

void read_flags(Reader& rd, const YAML::Node& n, supervision::SupFlags& f, std::vector<std::string>& init) {
  if (n.IsNull()) return;  // `supervisor:` with OTP's defaults
  for (const Entry& e :
       rd.entries(n, "supervisor flags", {"strategy", "intensity", "period", "auto_shutdown", "window", "max_children", "init"})) {
    if (e.key == "init") {
      read_sup_init(rd, e.value, init);
    } else if (e.key == "strategy") {
      rd.choice(e.value, "strategy", f.strategy, supervision::parse_strategy,
                "one_for_one, one_for_all, rest_for_one or simple_one_for_one");
    } else if (e.key == "intensity") {
      rd.integer<std::uint32_t>(e.value, "intensity", f.intensity, 0, 1'000'000);
    } else if (e.key == "period") {
      if (rd.duration(e.value, "period", f.period) && f.period <= Duration::zero()) rd.error(e.value, "period must be more than 0");
    } else if (e.key == "auto_shutdown") {
      rd.choice(e.value, "auto_shutdown", f.auto_shutdown, supervision::parse_auto_shutdown,
                "never, any_significant or all_significant");
    } else if (e.key == "window") {
      rd.choice(e.value, "window", f.window,
                [](const std::string& t, supervision::IntensityWindow& w) {
                  if (t == "otp_seconds") w = supervision::IntensityWindow::otp_seconds;
                  else if (t == "precise") w = supervision::IntensityWindow::precise;
                  else return false;
                  return true;
                },
                "otp_seconds or precise");
    } else if (e.key == "max_children") {
      std::uint32_t m = 0;
      if (rd.integer<std::uint32_t>(e.value, "max_children", m, 0, 100'000'000)) f.max_children = m;
    }
  }
}

/// One argument's value: a scalar, or a list of scalars.
/// A scalar, or an exit reason written as a map ({error: x}, as a fault's `reason` takes it),
/// read as its text ({error,x}).
bool read_arg_scalar(Reader& rd, const std::string& what, const YAML::Node& value, std::string& out) {
  if (!value.IsMap()) return rd.scalar(value, what, out);
  Reason r;
  if (!rd.reason(value, what, r)) return false;
  out = to_string(r);
  return true;
}

bool read_arg_value(Reader& rd, const std::string& what, const YAML::Node& value, ArgValue& v) {
  v.mark = mark_of(value);
  if (!value.IsSequence()) return read_arg_scalar(rd, what, value, v.scalar);
  v.is_list = true;
  for (const YAML::Node& x : value) {
    std::string w;
    if (read_arg_scalar(rd, "an item of " + what, x, w)) v.list.push_back(w);
  }
  return true;
}

void read_args(Reader& rd, const YAML::Node& n, std::vector<std::pair<std::string, ArgValue>>& args) {
  if (n.IsNull()) return;
  if (!n.IsMap()) {
    rd.error(n, "args must be a map, not " + kind_of(n));
    return;
  }
  for (auto it = n.begin(); it != n.end(); ++it) {
    // Copies: `it->` yields a temporary proxy; a range-for over its member would outlive it.
    const YAML::Node key_node = it->first;
    const YAML::Node value = it->second;
    std::string key;
    if (!rd.scalar(key_node, "an argument name", key)) continue;
    // A repeated argument is kept: Args reports it, naming the behaviour or check it is of.
    ArgValue v;
    if (read_arg_value(rd, "argument '" + key + "'", value, v)) args.emplace_back(key, std::move(v));
  }
}

/// A backoff that can reach a delay of 0 retries at once, for ever, at one virtual instant (the
/// run would never end): the delays must be more than 0 and must not shrink.
/// `restart:` of a lifecycle service. `backoff_factor` is seed 003's name for `factor` (either
/// spelling, not both).
void read_backoff(Reader& rd, const YAML::Node& n, supervision::BackoffPolicy& p) {
  const std::vector<Entry> entries =
      rd.entries(n, "restart (backoff)", {"initial_delay", "max_delay", "factor", "backoff_factor", "jitter", "max_attempts"});
  const auto named = [&](const char* k) { return std::any_of(entries.begin(), entries.end(), [k](const Entry& e) { return e.key == k; }); };
  if (named("factor") && named("backoff_factor"))
    rd.error(n, "restart gives both `factor` and `backoff_factor` (the same setting, seed 003's name): give one");
  for (Entry e : entries) {
    if (e.key == "backoff_factor") e.key = "factor";
    if (e.key == "initial_delay" || e.key == "max_delay") {
      Duration& d = e.key == "initial_delay" ? p.initial_delay : p.max_delay;
      if (rd.duration(e.value, e.key, d) && d <= Duration::zero())
        rd.error(e.value, e.key + " must be more than 0: a retry after 0 s, for ever, would never let virtual time pass");
    }
    else if (e.key == "jitter") rd.ratio(e.value, "jitter", p.jitter);
    else if (e.key == "max_attempts") rd.integer<std::uint32_t>(e.value, "max_attempts", p.max_attempts, 0, 1'000'000);
    else if (e.key == "factor") {
      std::string t;
      if (rd.scalar(e.value, "factor", t) && !parse_factor(t, p.factor)) {
        rd.error(e.value, "factor must be a positive number such as 2, 1.5 or 3/2, not '" + t + "'");
      } else if (!t.empty() && p.factor.num < p.factor.den) {
        rd.error(e.value, "factor must be 1 or more: " + t + " shrinks each delay until the retries come at once, for ever");
      }
    }
  }
}

ServiceDecl read_service(Reader& rd, const YAML::Node& n) {
  ServiceDecl s;
  s.mark = mark_of(n);
  bool named = false;
  for (const Entry& e : rd.entries(n, "a service", {"name", "behaviour", "args", "auto_start", "start_timeout",
                                                    "stop_timeout", "stable_threshold", "depends_on", "restart", "terminal"})) {
    if (e.key == "name") named = rd.name(e.value, "a service's name", s.name);
    else if (e.key == "behaviour") {
      rd.name(e.value, "behaviour", s.behaviour.name);
      s.behaviour.mark = mark_of(e.value);
    } else if (e.key == "args") read_args(rd, e.value, s.behaviour.args);
    else if (e.key == "auto_start") rd.boolean(e.value, "auto_start", s.auto_start);
    else if (e.key == "start_timeout") rd.duration(e.value, "start_timeout", s.start_timeout);
    else if (e.key == "stop_timeout") rd.duration(e.value, "stop_timeout", s.stop_timeout);
    else if (e.key == "stable_threshold") rd.duration(e.value, "stable_threshold", s.stable_threshold);
    else if (e.key == "depends_on") rd.words(e.value, "depends_on", s.depends_on);
    else if (e.key == "restart") read_backoff(rd, e.value, s.restart);
    else if (e.key == "terminal") {
      for (const Entry& t : rd.entries(e.value, "terminal", {"clean_exits", "reasons"})) {
        if (t.key == "clean_exits") rd.boolean(t.value, "clean_exits", s.terminal_clean_exits);
        else if (!t.value.IsSequence()) rd.error(t.value, "reasons must be a list of exit reasons");
        else {
          for (const YAML::Node& r : t.value) {
            Reason why;
            if (rd.reason(r, "a terminal reason", why)) s.terminal_reasons.push_back(why);
          }
        }
      }
    }
  }
  if (!named && n.IsMap()) rd.error(n, "a service needs a name");
  if (s.behaviour.name.empty() && n.IsMap()) rd.error(n, "service '" + s.name + "' needs a behaviour");
  return s;
}

TreeNode read_child(Reader& rd, const YAML::Node& n, bool root);

void read_children(Reader& rd, const YAML::Node& n, TreeNode& t) {
  if (n.IsNull()) return;
  if (!n.IsSequence()) {
    rd.error(n, "children must be a list, not " + kind_of(n));
    return;
  }
  for (const YAML::Node& c : n) t.children.push_back(read_child(rd, c, false));
}

/// What a child's keys said about its kind, before the kind is settled.
struct ChildKeys {
  bool is_sup = false;
  bool is_life = false;
  bool is_worker = false;
  bool have_id = false;
  bool have_type = false;
  std::optional<Shutdown> shutdown;
  std::optional<YAML::Node> children;
};

void read_lifecycle(Reader& rd, const YAML::Node& n, TreeNode& t) {
  for (const Entry& l : rd.entries(n, "lifecycle", {"services"})) {
    if (!l.value.IsSequence()) {
      rd.error(l.value, "services must be a list, not " + kind_of(l.value));
      continue;
    }
    for (const YAML::Node& s : l.value) t.services.push_back(read_service(rd, s));
  }
}

std::optional<Shutdown> read_shutdown(Reader& rd, const YAML::Node& n) {
  std::string text;
  if (!rd.scalar(n, "shutdown", text)) return std::nullopt;
  if (text == "brutal_kill") return Shutdown::brutal_kill();
  if (text == "infinity") return Shutdown::infinity();
  Duration d;
  if (rd.duration(n, "shutdown (brutal_kill, infinity or a timeout)", d)) return Shutdown::after(d);
  return std::nullopt;
}

/// `mailbox: {max: 100, when_full: drop | block}`: a bounded mailbox (seed 002's backpressure).
void read_mailbox(Reader& rd, const YAML::Node& n, supervision::ChildSpec& spec) {
  bool have_max = false;
  for (const Entry& e : rd.entries(n, "mailbox", {"max", "when_full"})) {
    if (e.key == "max") {
      have_max = rd.integer<std::uint32_t>(e.value, "mailbox max", spec.mailbox_max, 1, 100'000'000);
    } else {
      std::string w;
      if (rd.scalar(e.value, "when_full", w)) {
        if (w == "drop" || w == "block") spec.mailbox_block = w == "block";
        else rd.error(e.value, "unknown when_full '" + w + "' (drop or block)");
      }
    }
  }
  if (n.IsMap() && !have_max) rd.error(n, "a mailbox needs `max` (how many messages it holds, 1 or more)");
}

void read_child_key(Reader& rd, const Entry& e, TreeNode& t, ChildKeys& k) {
  if (e.key == "id") {
    if (rd.scalar(e.value, "id", t.spec.id)) {
      k.have_id = true;
      if (t.spec.id.empty() || t.spec.id.find_first_of("/ \t") != std::string::npos)
        rd.error(e.value, "id '" + t.spec.id + "' must be a non-empty name without '/' or spaces");
    }
  } else if (e.key == "supervisor" || e.key == "root") {
    if (k.is_sup) rd.error(e.key_node, "give the supervisor flags once (`root` or `supervisor`)");
    k.is_sup = true;
    read_flags(rd, e.value, t.flags, t.init);
  } else if (e.key == "lifecycle") {
    k.is_life = true;
    read_lifecycle(rd, e.value, t);
  } else if (e.key == "behaviour") {
    k.is_worker = true;
    rd.name(e.value, "behaviour", t.behaviour.name);
    t.behaviour.mark = mark_of(e.value);
  } else if (e.key == "args") {
    read_args(rd, e.value, t.behaviour.args);
  } else if (e.key == "children") {
    k.children.emplace(e.value);
  } else if (e.key == "restart") {
    rd.choice(e.value, "restart type", t.spec.restart, supervision::parse_restart_type, "permanent, transient or temporary");
  } else if (e.key == "type") {
    k.have_type = rd.choice(e.value, "child type", t.spec.type, supervision::parse_child_type, "worker or supervisor");
  } else if (e.key == "shutdown") {
    k.shutdown = read_shutdown(rd, e.value);
  } else if (e.key == "significant") {
    rd.boolean(e.value, "significant", t.spec.significant);
  } else if (e.key == "mailbox") {
    read_mailbox(rd, e.value, t.spec);
  } else if (e.key == "node") {
    std::string node;
    if (rd.scalar(e.value, "node", node)) t.spec.node = Atom(node);
  }
}

TreeNode read_child(Reader& rd, const YAML::Node& n, bool root) {
  TreeNode t;
  t.mark = mark_of(n);
  const auto keys = root ? rd.entries(n, "a tree", {"id", "root", "supervisor", "lifecycle", "children", "node"})
                         : rd.entries(n, "a child", {"id", "behaviour", "args", "supervisor", "lifecycle", "children",
                                                     "restart", "type", "shutdown", "significant", "node", "mailbox"});
  ChildKeys k;
  for (const Entry& e : keys) read_child_key(rd, e, t, k);
  if (k.children) {
    if (k.is_worker || k.is_life) rd.error(*k.children, "only a supervisor has children");
    k.is_sup = true;
    read_children(rd, *k.children, t);
  }
  if (!n.IsMap()) return t;
  const int kinds = int{k.is_sup} + int{k.is_life} + int{k.is_worker};
  if (kinds == 0) {
    rd.error(n, root ? "a tree needs `supervisor` (or `root`) flags and children, or `lifecycle`"
                     : "a child needs `behaviour`, `supervisor` (with children) or `lifecycle`");
  } else if (kinds > 1) {
    rd.error(n, "a child is one of a worker (`behaviour`), a supervisor or a lifecycle supervisor");
  }
  t.kind = k.is_life ? TreeNode::Kind::lifecycle : k.is_sup ? TreeNode::Kind::supervisor : TreeNode::Kind::worker;
  if (!k.have_type) t.spec.type = t.kind == TreeNode::Kind::worker ? ChildType::worker : ChildType::supervisor;
  t.spec.shutdown = k.shutdown.value_or(supervision::default_shutdown(t.spec.type));
  if (!k.have_id) {
    if (root) t.spec.id = "root";
    else rd.error(n, "a child needs an id");
  }
  return t;
}

Step read_step(Reader& rd, const YAML::Node& n) {
  Step s;
  s.mark = mark_of(n);
  bool have_op = false;
  bool have_at = false;
  std::vector<const Entry*> options;
  const auto keys = rd.entries(n, "a script step",
                               {"at", "crash", "kill", "exit", "stop", "start_child", "terminate_child", "restart_child",
                                "delete_child", "which_children", "count_children", "stop_task", "reason", "id", "child", "arg", "grace"});
  for (const Entry& e : keys) {
    Step::Op op{};
    if (e.key == "at") {
      have_at = rd.time(e.value, "at", s.at);
    } else if (parse_step_op(e.key, op)) {
      if (have_op) {
        rd.error(e.key_node, "a step does one thing: '" + e.key + "' after '" + std::string(to_string(s.op)) + "'");
        continue;
      }
      have_op = true;
      s.op = op;
      rd.scalar(e.value, e.key + (op == Step::Op::stop_task ? " (a node)" : " (a tree path)"), s.target);
    } else {
      options.push_back(&e);
    }
  }
  if (!n.IsMap()) return s;
  if (!have_op) rd.error(n, "a step needs an action: crash, kill, exit, stop, start_child, terminate_child, restart_child, delete_child, which_children, count_children or stop_task");
  if (!have_at) rd.error(n, "a step needs `at` (when it happens)");
  if (s.op == Step::Op::stop) s.reason = Reason::normal();
  if (s.op == Step::Op::exit) s.reason = Reason::shutdown();
  for (const Entry* e : options) {
    const bool fits = (e->key == "reason" && (s.op == Step::Op::crash || s.op == Step::Op::exit || s.op == Step::Op::stop)) ||
                      (e->key == "id" && (s.op == Step::Op::terminate_child || s.op == Step::Op::restart_child ||
                                          s.op == Step::Op::delete_child)) ||
                      ((e->key == "child" || e->key == "arg") && s.op == Step::Op::start_child) ||
                      (e->key == "grace" && s.op == Step::Op::stop_task);
    if (!fits && have_op) {
      rd.error(e->key_node, "'" + e->key + "' does not apply to a " + std::string(to_string(s.op)) + " step");
      continue;
    }
    if (e->key == "reason") rd.reason(e->value, "reason", s.reason);
    else if (e->key == "id") rd.scalar(e->value, "id", s.id);
    else if (e->key == "arg") rd.scalar(e->value, "arg", s.arg);
    else if (e->key == "child") s.child = read_child(rd, e->value, false);
    else if (e->key == "grace" && rd.duration(e->value, "grace", s.grace) && s.grace <= Duration::zero())
      rd.error(e->value, "grace must be more than 0");
  }
  if (have_op && s.op == Step::Op::stop_task && s.grace <= Duration::zero() &&
      std::none_of(options.begin(), options.end(), [](const Entry* e) { return e->key == "grace"; }))
    rd.error(n, "stop_task needs `grace` (how long before SIGKILL)");
  if (have_op && s.id.empty() &&
      (s.op == Step::Op::terminate_child || s.op == Step::Op::restart_child || s.op == Step::Op::delete_child))
    rd.error(n, std::string(to_string(s.op)) + " needs the child's `id`");
  return s;
}


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
CheckDecl read_check(Reader& rd, const YAML::Node& n, const Registry& registry) {
  CheckDecl c;
  c.mark = mark_of(n);
  if (n.IsScalar()) {
    c.name = n.Scalar();
    return c;
  }
  if (!n.IsMap() || n.size() != 1) {
    rd.error(n, "a check is a name (`converges`) or a one-key map (`availability: {of: /root, min: 99%}`)");
    return c;
  }
  const auto it = n.begin();
  const YAML::Node key = it->first;
  const YAML::Node value = it->second;
  c.mark = mark_of(key);
  if (!rd.scalar(key, "a check name", c.name) || value.IsNull()) return c;
  if (value.IsMap()) {
    read_args(rd, value, c.args);
    return c;
  }
  const CheckInfo* info = registry.check(c.name);
  if (info != nullptr && info->args.empty()) {
    rd.error(value, "check '" + c.name + "' takes no arguments");
    return c;
  }
  // The first argument alone.
  ArgValue v;
  if (read_arg_value(rd, "argument of check '" + c.name + "'", value, v))
    c.args.emplace_back(info != nullptr ? info->args.front().name : std::string("of"), std::move(v));
  return c;
}

void read_reports(Reader& rd, const YAML::Node& n, ReportSet& r) {
  std::vector<std::string> names;
  if (!rd.words(n, "reports", names)) return;
  if (names.size() == 1 && names[0] == "all") return;
  r = ReportSet{false, false, false, false, false, false, false};
  if (names.size() == 1 && names[0] == "none") return;
  std::size_t i = 0;
  for (const std::string& w : names) {
    const YAML::Node at = n.IsSequence() ? n[i] : n;
    ++i;
    if (w == "trace") r.trace = true;
    else if (w == "tree") r.tree = true;
    else if (w == "timeline") r.timeline = true;
    else if (w == "perfetto") r.perfetto = true;
    else if (w == "junit") r.junit = true;
    else if (w == "summary") r.summary = true;
    else if (w == "html") r.html = true;
    else rd.error(at, "unknown report '" + w + "' (trace, tree, timeline, perfetto, junit, summary, html, all or none)");
  }
}


void read_phases(Reader& rd, const YAML::Node& n, Scenario& s, bool& have_duration, YAML::Node& duration) {
  for (const Entry& p : rd.entries(n, "phases", {"chaos", "quiet", "expect_escalation"})) {
    if (p.key == "chaos") {
      if (have_duration) rd.error(p.key_node, "the chaos phase's length is given twice (`duration` and `phases: chaos`)");
      have_duration = rd.duration(p.value, "chaos", s.duration);
      duration.reset(p.value);  // refer to it (an assignment would overwrite a node already held)
    } else if (p.key == "quiet") {
      Duration d;
      if (rd.duration(p.value, "quiet", d)) s.quiet = d;
    } else if (p.key == "expect_escalation") {
      rd.boolean(p.value, "expect_escalation", s.expect_escalation);
    }
  }
}

NodeDecl read_node(Reader& rd, const YAML::Node& x) {
  NodeDecl d;
  d.mark = mark_of(x);
  if (x.IsScalar()) {  // `nodes: [a, b]`: a name ('' is refused as in `{name: ''}`)
    rd.name(x, "a node's name", d.name);
    return d;
  }
  for (const Entry& k : rd.entries(x, "a node", {"name", "clock_skew", "drift"})) {
    if (k.key == "name") rd.name(k.value, "a node's name", d.name);
    else if (k.key == "drift") rd.ppm(k.value, "drift", d.drift_ppm);
    else rd.signed_duration(k.value, "clock_skew", d.clock_skew);
  }
  if (x.IsMap() && d.name.empty()) rd.error(x, "a node needs a name");
  return d;
}

void read_network(Reader& rd, const YAML::Node& n, Scenario& s) {
  for (const Entry& k : rd.entries(n, "network", {"default", "links"})) {
    if (k.key == "default") {
      read_link(rd, k.value, "the default link", s.default_link, nullptr, nullptr);
    } else if (!k.value.IsSequence()) {
      rd.error(k.value, "links must be a list, not " + kind_of(k.value));
    } else {
      for (const YAML::Node& l : k.value) {
        LinkDecl d;
        d.mark = mark_of(l);
        d.params = s.default_link;
        read_link(rd, l, "a link", d.params, &d.from, &d.to);
        if (l.IsMap() && (d.from.empty() || d.to.empty())) rd.error(l, "a link needs `from` and `to`");
        s.links.push_back(d);
      }
    }
  }
}

/// Calls `each` for every item of the list `n` (`what` names the section in the message when
/// it is not a list).
template <class Each>
void for_items(Reader& rd, const YAML::Node& n, const char* what, Each each) {
  if (!n.IsSequence()) {
    rd.error(n, std::string(what) + " must be a list, not " + kind_of(n));
    return;
  }
  for (const YAML::Node& x : n) each(x);
}

/// What read_scenario has seen so far.
struct Seen {
  bool named = false;
  bool have_duration = false;
  YAML::Node duration;  ///< the chaos phase's length as written (`duration` or `phases: chaos`)
  bool have_tree = false;
};

void read_trees(Reader& rd, const Entry& e, Scenario& s, Seen& seen) {
  if (seen.have_tree) rd.error(e.key_node, "give `tree` (one root) or `trees` (a list), not both");
  seen.have_tree = true;
  if (e.key == "tree") s.trees.push_back(read_child(rd, e.value, true));
  else for_items(rd, e.value, "trees", [&](const YAML::Node& t) { s.trees.push_back(read_child(rd, t, true)); });
}

/// `expect: {fail: conservation}` or `{fail: [conservation, drained]}`: a known bug's file.
void read_expect(Reader& rd, const YAML::Node& n, Scenario& s) {
  for (const Entry& e : rd.entries(n, "expect", {"fail"})) {
    s.expect_mark = mark_of(e.value);
    if (rd.words(e.value, "fail (the checks that must catch the bug)", s.expect_fail) && s.expect_fail.empty())
      rd.error(e.value, "name the checks that must catch the bug");
  }
}

/// `fix: {tree: {PATH: {KEY: VALUE, ...}, ...}}`: a known bug's fix, kept as written (in flow
/// style) and applied by file/fix.hpp once the file has read; here only its shape is checked.
void read_fix(Reader& rd, const YAML::Node& n, Scenario& s) {
  s.fix_mark = mark_of(n);
  for (const Entry& e : rd.entries(n, "fix", {"tree"})) {
    if (!e.value.IsMap() || e.value.size() == 0) {
      rd.error(e.value, "fix: tree: a map of tree paths to what changes there, e.g. {/root: {intensity: 10}}");
      return;
    }
    for (const auto& kv : e.value) {
      const std::string path = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      if (path.empty() || path.front() != '/') rd.error(kv.first, "fix: tree: a key is a tree path (/root/child), not '" + path + "'");
      else if (!kv.second.IsMap() || kv.second.size() == 0) rd.error(kv.second, "fix: tree: " + path + ": give what changes, e.g. {intensity: 10}");
    }
  }
  if (!n.IsMap()) return;
  YAML::Emitter y;
  y << YAML::Flow << n;
  s.fix = y.c_str();
}

/// `streams: {KEY: SEED, ...}`: random streams pinned to seeds of their own. Here the keys' shape;
/// validate.cpp checks that each names something in the file.
void read_streams(Reader& rd, const YAML::Node& n, Scenario& s) {
  if (!n.IsMap()) {
    rd.error(n, "streams: a map of random streams to seeds, e.g. {process /root/worker: 7, link a b: 7, fault crash#0: 7, tie-break: 7}");
    return;
  }
  for (const auto& kv : n) {
    StreamPin p;
    p.mark = mark_of(kv.first);
    p.key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    const std::size_t words = 1 + static_cast<std::size_t>(std::count(p.key.begin(), p.key.end(), ' '));
    const std::string kind = p.key.substr(0, p.key.find(' '));
    const bool shaped = p.key == "tie-break" || (kind == "process" && words == 2 && p.key.size() > 9 && p.key[8] == '/') ||
                        (kind == "link" && words == 3) || ((kind == "fault" || kind == "buggify") && words == 2);
    if (!shaped || p.key.find("  ") != std::string::npos || p.key.back() == ' ') {
      rd.error(kv.first, "streams: '" + p.key + "' names no stream: give `process PATH`, `link FROM TO`, `fault NAME`, `buggify NAME` or `tie-break`");
      continue;
    }
    if (std::any_of(s.streams.begin(), s.streams.end(), [&](const StreamPin& q) { return q.key == p.key; })) {
      rd.error(kv.first, "streams: '" + p.key + "' is pinned twice");
      continue;
    }
    if (rd.integer<std::uint64_t>(kv.second, "streams: a seed", p.seed, 0, UINT64_MAX)) s.streams.push_back(std::move(p));
  }
  std::sort(s.streams.begin(), s.streams.end(), [](const StreamPin& a, const StreamPin& b) { return a.key < b.key; });
}

void read_section(Reader& rd, const Entry& e, Scenario& s, Seen& seen, const Registry& registry) {
  if (e.key == "scenario") {
    rd.name(e.value, "scenario (its name)", s.name);
    seen.named = true;  // an empty or malformed name was reported where it is
  }
  else if (e.key == "description") rd.scalar(e.value, "description", s.description);
  else if (e.key == "seed") rd.integer<std::uint64_t>(e.value, "seed", s.seed, 0, UINT64_MAX);
  else if (e.key == "tie_break")
    rd.choice(e.value, "tie_break", s.tie_break, [](const std::string& t, TieBreak& b) { return parse_tie_break(t, b); }, "fifo or random");
  else if (e.key == "duration") {
    if (seen.have_duration) rd.error(e.key_node, "the chaos phase's length is given twice (`duration` and `phases: chaos`)");
    seen.have_duration = rd.duration(e.value, "duration", s.duration);
    seen.duration.reset(e.value);
  } else if (e.key == "phases") read_phases(rd, e.value, s, seen.have_duration, seen.duration);
  else if (e.key == "nodes") for_items(rd, e.value, "nodes", [&](const YAML::Node& x) { s.nodes.push_back(read_node(rd, x)); });
  else if (e.key == "network") read_network(rd, e.value, s);
  else if (e.key == "tree" || e.key == "trees") read_trees(rd, e, s, seen);
  else if (e.key == "script") for_items(rd, e.value, "script", [&](const YAML::Node& x) { s.script.push_back(read_step(rd, x)); });
  else if (e.key == "faults") {
    for_items(rd, e.value, "faults", [&](const YAML::Node& x) {
      Mark m;
      s.faults.push_back(read_fault(rd, x, m));
      s.fault_marks.push_back(m);
    });
  } else if (e.key == "checks") {
    for_items(rd, e.value, "checks", [&](const YAML::Node& x) { s.checks.push_back(read_check(rd, x, registry)); });
  } else if (e.key == "reports") read_reports(rd, e.value, s.reports);
  else if (e.key == "expect") read_expect(rd, e.value, s);
  else if (e.key == "fix") read_fix(rd, e.value, s);
  else if (e.key == "streams") read_streams(rd, e.value, s);
  else if (e.key == "buggify") {
    s.buggify_mark = mark_of(e.value);
    rd.words(e.value, "buggify (the points to turn on)", s.buggify);
  }
}

/// A quoted value with no closing quote runs on to the end of the file (YAML folds the lines
/// into it), taking `tree:` in: said at that value, rather than "needs a tree" (issue 34).
bool swallowed_tree(Reader& rd, const YAML::Node& doc) {
  if (!doc.IsMap()) return false;
  for (const auto& kv : doc) {
    if (!kv.second.IsScalar()) continue;
    const std::string& v = kv.second.Scalar();
    if (v.find("tree:") == std::string::npos && v.find("trees:") == std::string::npos) continue;
    rd.error(kv.second, "this value runs on past its line and takes in `tree:` and what follows: is its closing quote missing?");
    return true;
  }
  return false;
}

void read_scenario(Reader& rd, const YAML::Node& doc, Scenario& s, const Registry& registry) {
  Seen seen;
  for (const Entry& e : rd.entries(doc, "the scenario",
                                   {"scenario", "description", "seed", "tie_break", "duration", "phases", "nodes",
                                    "network", "tree", "trees", "script", "faults", "checks", "reports", "expect", "buggify",
                                    "fix", "streams"}))
    read_section(rd, e, s, seen, registry);
  if (!doc.IsMap()) return;
  if (!seen.named) rd.error(doc, "the scenario needs a name (`scenario: my_name`)");
  if (!seen.have_tree && !swallowed_tree(rd, doc)) rd.error(doc, "the scenario needs a `tree` (or `trees`)");
  if (seen.have_duration && s.duration <= Duration::zero())
    rd.error(seen.duration, "the chaos phase (`duration`) must be more than 0");
}

}  // namespace

namespace {

/// The length of the well-formed UTF-8 sequence at text[i] (1 to 4 bytes), or 0 when the bytes
/// there are not one (a stray continuation byte, a cut-off sequence, an overlong 2-byte form).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > text.size() || (len == 2 && c < 0xC2)) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return 0;
  return len;
}

/// Where `text` stops being what YAML reads: a byte that is not UTF-8, or a control character
/// (YAML allows tab, line feed and carriage return only). Names reach JSON and terminals, so this
/// is refused here, at its line and column, not later by a writer.
std::optional<Diagnostic> unreadable_byte(std::string_view text) {
  int line = 1;
  int col = 1;
  for (std::size_t i = 0; i < text.size(); ++col) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length(text, i);
    const bool ok = len != 0;
    if (!ok) return Diagnostic{{line, col}, fmt::format("the file is not UTF-8: byte 0x{:02X} (scenario files are UTF-8 text)", c)};
    if (len == 1 && ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F))
      return Diagnostic{{line, col}, fmt::format("a control character (0x{:02X}) is not allowed in a scenario file", c)};
    if (c == '\n') line += 1, col = 0;
    i += len;
  }
  return std::nullopt;
}

Mark mark_of(const YAML::Mark& m) { return m.is_null() ? Mark{} : Mark{m.line + 1, m.column + 1}; }

/// Where the walk of past_node_limit stopped, and why.
struct Overrun {
  YAML::Node at;
  enum class Why : std::uint8_t { count, depth, cycle } why = Why::count;
};

/// Counts the nodes the reader will visit, an alias counting its whole value each time it is
/// used, and stops at the limit: a YAML alias bomb is a small file that expands to billions of
/// nodes. It also stops where the values, aliases expanded, nest deeper than a file without
/// aliases can (kYamlNesting): an alias inside its own value (`&d [a, *d]`) nests for ever, and
/// walking it overflowed the stack. Returns where it stopped, if it did.
std::optional<Overrun> past_node_limit(const YAML::Node& n, std::size_t& left, std::vector<YAML::Node>& path) {
  if (left == 0) return Overrun{n, Overrun::Why::count};
  if (path.size() > static_cast<std::size_t>(kYamlNesting) + 1) {
    for (std::size_t i = 0; i < path.size(); ++i)
      for (std::size_t j = i + 1; j < path.size(); ++j)
        if (path[i].is(path[j])) return Overrun{path[j], Overrun::Why::cycle};
    return Overrun{n, Overrun::Why::depth};
  }
  --left;
  if (!n.IsMap() && !n.IsSequence()) return std::nullopt;
  path.push_back(n);
  std::optional<Overrun> out;
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end() && !out; ++it)
      if (!(out = past_node_limit(it->first, left, path))) out = past_node_limit(it->second, left, path);
  } else {
    for (auto it = n.begin(); it != n.end() && !out; ++it) out = past_node_limit(*it, left, path);
  }
  path.pop_back();
  return out;
}

/// Where each document of a YAML stream starts (the parser's events, no nodes built).
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

/// The file's one document; a second one is an error at its start (it would be ignored).
/// yaml-cpp 0.7's LoadAll loops for ever on a token no document can start with (a lone ',':
/// yaml-cpp issue 1040, fixed upstream in 2024 by PR 1319), so the documents are counted here,
/// at most two, and a document that starts where the last one did is that stray token.
std::optional<YAML::Node> one_document(std::string_view text, std::vector<Diagnostic>& errors) {
  YAML::Node doc;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    DocumentStarts docs;
    for (int i = 0; i < 2 && parser.HandleNextDocument(docs); ++i) {
    }
    if (docs.starts.size() == 2 && docs.starts[0].pos == docs.starts[1].pos) {
      const YAML::Mark m = docs.starts[0];
      const std::size_t at = static_cast<std::size_t>(std::max(m.pos, 0));
      errors.push_back({mark_of(m), fmt::format("YAML: no value can start with '{}' here", at < text.size() ? text.substr(at, 1) : "")});
      return std::nullopt;
    }
    if (docs.starts.size() == 2) {
      errors.push_back({mark_of(docs.starts[1]), "a scenario file holds one YAML document; a second one starts here (split it into two files)"});
      return std::nullopt;
    }
    doc = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    errors.push_back({mark_of(e.mark), fmt::format("the file nests maps and lists deeper than the YAML reader allows "
                                                   "(yaml-cpp stops at {} levels of its own recursion: {} levels of maps "
                                                   "and lists, a tree {} supervisors deep below its root)",
                                                   kYamlRecursion, kYamlNesting, kYamlTreeDepth)});
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    errors.push_back({e.mark.is_null() ? Mark{} : Mark{e.mark.line + 1, e.mark.column + 1}, "YAML: " + e.msg});
    return std::nullopt;
  }
  if (!doc) return YAML::Node();
  std::size_t left = kMaxYamlNodes;
  std::vector<YAML::Node> path;
  if (const std::optional<Overrun> o = past_node_limit(doc, left, path)) {
    const Mark at = mark_of(o->at.Mark());
    switch (o->why) {
      case Overrun::Why::count:
        errors.push_back({at, fmt::format("the file expands to more than {} YAML values (an alias counts its whole "
                                          "value each time it is used): this is where the count ran out",
                                          kMaxYamlNodes)});
        break;
      case Overrun::Why::cycle:
        errors.push_back({at, "this value contains an alias of itself (as in `&d [a, *d]`): it would nest for ever"});
        break;
      case Overrun::Why::depth:
        errors.push_back({at, fmt::format("the file, its aliases expanded, nests maps and lists deeper than {} levels "
                                          "(the most a file without aliases can)", kYamlNesting)});
        break;
    }
    return std::nullopt;
  }
  return doc;
}

}  // namespace

ParseResult parse_scenario(std::string_view text, const std::string& file, const Registry& registry) {
  ParseResult out;
  out.scenario.file = file;
  if (text.size() > kMaxScenarioBytes) {
    out.errors.push_back({Mark{1, 1}, fmt::format("the file is larger than a scenario file may be ({} bytes; the limit "
                                                  "is {} MiB)", text.size(), kMaxScenarioBytes >> 20)});
    return out;
  }
  if (std::optional<Diagnostic> bad = unreadable_byte(text)) {
    out.errors.push_back(std::move(*bad));
    return out;
  }
  const std::optional<YAML::Node> parsed = one_document(text, out.errors);
  if (!parsed) return out;
  const YAML::Node doc = *parsed;
  if (!doc || doc.IsNull()) {
    out.errors.push_back({Mark{1, 1}, "the file is empty: a scenario needs at least `scenario` and `tree`"});
    return out;
  }
  Reader rd;
  read_scenario(rd, doc, out.scenario, registry);
  out.errors = std::move(rd.errors);
  // The whole-scenario checks can trust only what was read without mistakes; run them when the
  // reading went well, or when the mistakes were elsewhere (they are still worth reporting).
  validate_into(out.scenario, registry, out.errors);
  // A known bug's fix must apply: every path it names is in the trees, and the fixed file reads.
  if (out.errors.empty() && !out.scenario.fix.empty())
    for (Diagnostic& d : apply_fix(out.scenario, registry).errors) out.errors.push_back(std::move(d));
  std::stable_sort(out.errors.begin(), out.errors.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::pair(a.mark.line, a.mark.col) < std::pair(b.mark.line, b.mark.col);
  });
  // The same mistake found twice (by the reader and the validator) is reported once.
  out.errors.erase(std::unique(out.errors.begin(), out.errors.end(),
                               [](const Diagnostic& a, const Diagnostic& b) {
                                 return a.mark.line == b.mark.line && a.mark.col == b.mark.col && a.message == b.message;
                               }),
                   out.errors.end());
  return out;
}

ParseResult load_scenario(const std::filesystem::path& path, const Registry& registry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult r;
    r.scenario.file = path.string();
    r.errors.push_back({Mark{}, "cannot read the file"});
    return r;
  }
  // Read at most one byte past the limit: an endless input (a character device, a pipe that
  // never closes) is refused at the limit instead of read until memory runs out.
  std::string text(kMaxScenarioBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) {
    ParseResult r;
    r.scenario.file = path.string();
    r.errors.push_back({Mark{}, "cannot read the file"});
    return r;
  }
  return parse_scenario(text, path.string(), registry);
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length(text, i);
    const bool ok = len != 0;
    const bool control = (len == 1 && ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F)) ||
                         (ok && len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F);
    if (!ok || control) {
      const std::size_t n = ok ? len : 1;
      for (std::size_t k = 0; k < n; ++k) out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i + k]));
      i += n;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::string format_diagnostic(const std::string& file, const Diagnostic& d) {
  return printable(file + ":" + std::to_string(d.mark.line) + ":" + std::to_string(d.mark.col) + ": " + d.message);
}

}  // namespace lic::scenarios
