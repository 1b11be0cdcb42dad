#include "scenarios/file/read.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>

#include "scenarios/behaviours/table.hpp"
#include "scenarios/checks/table.hpp"
#include "scenarios/checks/model.hpp"
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

std::string joined(std::initializer_list<std::string_view> words) {
  std::string s;
  for (std::string_view w : words) {
    if (!s.empty()) s += ", ";
    s += w;
  }
  return s;
}

std::string did_you_mean(std::string_view word, std::initializer_list<std::string_view> options) {
  const std::string best = closest_name(word, std::vector<std::string>(options.begin(), options.end()));
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

// yaml-cpp's Node::operator= writes through to the node it refers to (it changes the document);
// rebinding a Node variable is reset(). Every Node variable here is bound once or reset().

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
  std::vector<Entry> entries(const YAML::Node& n, std::string_view what,
                             std::initializer_list<std::string_view> allowed) {
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

  bool scalar(const YAML::Node& n, std::string_view what, std::string& out) {
    if (!n.IsScalar()) {
      error(n, std::string(what) + " must be a scalar, not " + kind_of(n));
      return false;
    }
    out = n.Scalar();
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

  bool time(const YAML::Node& n, std::string_view what, Time& out) {
    Duration d;
    if (!duration(n, what, d)) return false;
    out = Time{} + d;
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

bool parse_factor(const std::string& text, Ratio& out) {
  // A positive multiplier: 2, 1.5, 3/2 (parse_ratio reads fractions up to 1; scale by 1000).
  std::uint64_t num = 0;
  std::uint64_t den = 1;
  if (const auto slash = text.find('/'); slash != std::string::npos) {
    const auto a = std::from_chars(text.data(), text.data() + slash, num);
    const auto b = std::from_chars(text.data() + slash + 1, text.data() + text.size(), den);
    if (a.ec != std::errc() || a.ptr != text.data() + slash || b.ec != std::errc() ||
        b.ptr != text.data() + text.size() || den == 0 || num == 0)
      return false;
  } else {
    bool point = false;
    bool digits = false;
    for (char c : text) {
      if (c == '.' && !point) {
        point = true;
        continue;
      }
      if (c < '0' || c > '9' || num > 1'000'000'000'000ULL) return false;
      digits = true;
      num = num * 10 + static_cast<std::uint64_t>(c - '0');
      if (point) den *= 10;
    }
    if (!digits || num == 0) return false;
  }
  out = reduce(Ratio{num, den});
  return true;
}

std::string format_factor(Ratio r) {
  r = reduce(r);
  return r.den == 1 ? std::to_string(r.num) : std::to_string(r.num) + "/" + std::to_string(r.den);
}

void read_link(Reader& rd, const YAML::Node& n, std::string_view what, LinkParams& p,
               std::string* from, std::string* to) {
  const auto keys = from != nullptr
                        ? rd.entries(n, what, {"from", "to", "latency", "latency_min", "loss", "duplicate", "reorder", "clog"})
                        : rd.entries(n, what, {"latency", "latency_min", "loss", "duplicate", "reorder", "clog"});
  bool have_min = false;
  bool have_mean = false;
  YAML::Node at = n;
  for (const Entry& e : keys) {
    if (e.key == "from") rd.scalar(e.value, "from", *from);
    else if (e.key == "to") rd.scalar(e.value, "to", *to);
    else if (e.key == "latency") have_mean = rd.duration(e.value, "latency", p.latency_mean), at.reset(e.value);
    else if (e.key == "latency_min") have_min = rd.duration(e.value, "latency_min", p.latency_min);
    else if (e.key == "loss") rd.ratio(e.value, "loss", p.loss);
    else if (e.key == "duplicate") rd.ratio(e.value, "duplicate", p.duplicate);
    else if (e.key == "reorder") rd.ratio(e.value, "reorder", p.reorder);
    else if (e.key == "clog") rd.duration(e.value, "clog", p.clog);
  }
  if (have_mean && !have_min) p.latency_min = p.latency_mean;  // `latency: 5ms` alone is fixed
  if (have_min && !have_mean) p.latency_mean = std::max(p.latency_mean, p.latency_min);
  if (p.latency_min > p.latency_mean) rd.error(at, "latency_min is more than latency (the mean)");
}

void read_flags(Reader& rd, const YAML::Node& n, supervision::SupFlags& f) {
  if (n.IsNull()) return;  // `supervisor:` with OTP's defaults
  for (const Entry& e :
       rd.entries(n, "supervisor flags", {"strategy", "intensity", "period", "auto_shutdown", "window", "max_children"})) {
    if (e.key == "strategy") {
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

void read_args(Reader& rd, const YAML::Node& n, BehaviourRef& b) {
  if (n.IsNull()) return;
  if (!n.IsMap()) {
    rd.error(n, "args must be a map, not " + kind_of(n));
    return;
  }
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    // Copies: `it->` yields a temporary proxy; a range-for over its member would outlive it.
    const YAML::Node key_node = it->first;
    const YAML::Node value = it->second;
    std::string key;
    if (!rd.scalar(key_node, "an argument name", key)) continue;
    if (!seen.insert(key).second) {
      rd.error(key_node, "duplicate argument '" + key + "'");
      continue;
    }
    ArgValue v;
    v.mark = mark_of(value);
    if (value.IsSequence()) {
      v.is_list = true;
      for (const YAML::Node& x : value) {
        std::string w;
        if (rd.scalar(x, "an item of argument '" + key + "'", w)) v.list.push_back(w);
      }
    } else if (!rd.scalar(value, "argument '" + key + "'", v.scalar)) {
      continue;
    }
    b.args.emplace_back(key, std::move(v));
  }
}

void read_backoff(Reader& rd, const YAML::Node& n, supervision::BackoffPolicy& p) {
  for (const Entry& e : rd.entries(n, "restart (backoff)", {"initial_delay", "max_delay", "factor", "jitter", "max_attempts"})) {
    if (e.key == "initial_delay") rd.duration(e.value, "initial_delay", p.initial_delay);
    else if (e.key == "max_delay") rd.duration(e.value, "max_delay", p.max_delay);
    else if (e.key == "jitter") rd.ratio(e.value, "jitter", p.jitter);
    else if (e.key == "max_attempts") rd.integer<std::uint32_t>(e.value, "max_attempts", p.max_attempts, 0, 1'000'000);
    else if (e.key == "factor") {
      std::string t;
      if (rd.scalar(e.value, "factor", t) && !parse_factor(t, p.factor)) {
        rd.error(e.value, "factor must be a positive number such as 2, 1.5 or 3/2, not '" + t + "'");
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
    if (e.key == "name") named = rd.scalar(e.value, "name", s.name);
    else if (e.key == "behaviour") {
      rd.scalar(e.value, "behaviour", s.behaviour.name);
      s.behaviour.mark = mark_of(e.value);
    } else if (e.key == "args") read_args(rd, e.value, s.behaviour);
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

TreeNode read_child(Reader& rd, const YAML::Node& n, bool root) {
  TreeNode t;
  t.mark = mark_of(n);
  const auto keys = root ? rd.entries(n, "a tree", {"id", "root", "supervisor", "lifecycle", "children", "node"})
                         : rd.entries(n, "a child", {"id", "behaviour", "args", "supervisor", "lifecycle", "children",
                                                     "restart", "type", "shutdown", "significant", "node"});
  bool is_sup = false;
  bool is_life = false;
  bool is_worker = false;
  bool have_id = false;
  bool have_type = false;
  std::optional<Shutdown> shutdown;
  std::optional<YAML::Node> children;
  for (const Entry& e : keys) {
    if (e.key == "id") {
      if (rd.scalar(e.value, "id", t.spec.id)) {
        have_id = true;
        if (t.spec.id.empty() || t.spec.id.find_first_of("/ \t") != std::string::npos)
          rd.error(e.value, "id '" + t.spec.id + "' must be a non-empty name without '/' or spaces");
      }
    } else if (e.key == "supervisor" || e.key == "root") {
      if (is_sup) rd.error(e.key_node, "give the supervisor flags once (`root` or `supervisor`)");
      is_sup = true;
      read_flags(rd, e.value, t.flags);
    } else if (e.key == "lifecycle") {
      is_life = true;
      for (const Entry& l : rd.entries(e.value, "lifecycle", {"services"})) {
        if (!l.value.IsSequence()) {
          rd.error(l.value, "services must be a list, not " + kind_of(l.value));
          continue;
        }
        for (const YAML::Node& s : l.value) t.services.push_back(read_service(rd, s));
      }
    } else if (e.key == "behaviour") {
      is_worker = true;
      rd.scalar(e.value, "behaviour", t.behaviour.name);
      t.behaviour.mark = mark_of(e.value);
    } else if (e.key == "args") {
      read_args(rd, e.value, t.behaviour);
    } else if (e.key == "children") {
      children.emplace(e.value);
    } else if (e.key == "restart") {
      rd.choice(e.value, "restart type", t.spec.restart, supervision::parse_restart_type,
                "permanent, transient or temporary");
    } else if (e.key == "type") {
      have_type = rd.choice(e.value, "child type", t.spec.type, supervision::parse_child_type, "worker or supervisor");
    } else if (e.key == "shutdown") {
      std::string text;
      if (rd.scalar(e.value, "shutdown", text)) {
        if (text == "brutal_kill") shutdown = Shutdown::brutal_kill();
        else if (text == "infinity") shutdown = Shutdown::infinity();
        else {
          Duration d;
          if (rd.duration(e.value, "shutdown (brutal_kill, infinity or a timeout)", d)) shutdown = Shutdown::after(d);
        }
      }
    } else if (e.key == "significant") {
      rd.boolean(e.value, "significant", t.spec.significant);
    } else if (e.key == "node") {
      std::string node;
      if (rd.scalar(e.value, "node", node)) t.spec.node = Atom(node);
    }
  }
  if (children) {
    if (is_worker || is_life) rd.error(*children, "only a supervisor has children");
    is_sup = true;
    read_children(rd, *children, t);
  }
  if (!n.IsMap()) return t;
  const int kinds = int{is_sup} + int{is_life} + int{is_worker};
  if (kinds == 0) {
    rd.error(n, root ? "a tree needs `supervisor` (or `root`) flags and children, or `lifecycle`"
                     : "a child needs `behaviour`, `supervisor` (with children) or `lifecycle`");
  } else if (kinds > 1) {
    rd.error(n, "a child is one of a worker (`behaviour`), a supervisor or a lifecycle supervisor");
  }
  t.kind = is_life ? TreeNode::Kind::lifecycle : is_sup ? TreeNode::Kind::supervisor : TreeNode::Kind::worker;
  if (!have_type) t.spec.type = t.kind == TreeNode::Kind::worker ? ChildType::worker : ChildType::supervisor;
  t.spec.shutdown = shutdown.value_or(supervision::default_shutdown(t.spec.type));
  if (!have_id) {
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
                                "delete_child", "which_children", "reason", "id", "child", "arg"});
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
      rd.scalar(e.value, e.key + " (a tree path)", s.target);
    } else {
      options.push_back(&e);
    }
  }
  if (!n.IsMap()) return s;
  if (!have_op) rd.error(n, "a step needs an action: crash, kill, exit, stop, start_child, terminate_child, restart_child, delete_child or which_children");
  if (!have_at) rd.error(n, "a step needs `at` (when it happens)");
  if (s.op == Step::Op::stop) s.reason = Reason::normal();
  if (s.op == Step::Op::exit) s.reason = Reason::shutdown();
  for (const Entry* e : options) {
    const bool fits = (e->key == "reason" && (s.op == Step::Op::crash || s.op == Step::Op::exit || s.op == Step::Op::stop)) ||
                      (e->key == "id" && (s.op == Step::Op::terminate_child || s.op == Step::Op::restart_child ||
                                          s.op == Step::Op::delete_child)) ||
                      ((e->key == "child" || e->key == "arg") && s.op == Step::Op::start_child);
    if (!fits && have_op) {
      rd.error(e->key_node, "'" + e->key + "' does not apply to a " + std::string(to_string(s.op)) + " step");
      continue;
    }
    if (e->key == "reason") rd.reason(e->value, "reason", s.reason);
    else if (e->key == "id") rd.scalar(e->value, "id", s.id);
    else if (e->key == "arg") rd.scalar(e->value, "arg", s.arg);
    else if (e->key == "child") s.child = read_child(rd, e->value, false);
  }
  if (have_op && s.id.empty() &&
      (s.op == Step::Op::terminate_child || s.op == Step::Op::restart_child || s.op == Step::Op::delete_child))
    rd.error(n, std::string(to_string(s.op)) + " needs the child's `id`");
  return s;
}

bool process_kind(faults::Kind k) {
  return k == faults::Kind::crash || k == faults::Kind::kill || k == faults::Kind::exit || k == faults::Kind::slow_start;
}
bool node_kind(faults::Kind k) {
  return k == faults::Kind::node_crash || k == faults::Kind::node_restart || k == faults::Kind::pause;
}
bool network_kind(faults::Kind k) {
  return k == faults::Kind::partition || k == faults::Kind::clog || k == faults::Kind::loss ||
         k == faults::Kind::duplicate || k == faults::Kind::reorder;
}

/// Which options each kind of fault takes (besides name, at, every, until, mtbf).
bool option_fits(faults::Kind k, const std::string& key) {
  using faults::Kind;
  if (key == "reason") return k == Kind::crash || k == Kind::exit;
  if (key == "to") return network_kind(k);
  if (key == "one_way") return k == Kind::partition;
  if (key == "duration") return network_kind(k) || k == Kind::pause;
  if (key == "delay") return k == Kind::clog || k == Kind::slow_start;
  if (key == "ratio") return k == Kind::loss || k == Kind::duplicate || k == Kind::reorder;
  if (key == "restart_after") return k == Kind::node_crash;
  return false;
}

faults::Fault read_fault(Reader& rd, const YAML::Node& n, Mark& mark) {
  faults::Fault f;
  mark = mark_of(n);
  bool have_kind = false;
  std::vector<const Entry*> options;
  const auto keys = rd.entries(n, "a fault",
                               {"name", "at", "every", "until", "mtbf", "crash", "kill", "exit", "node_crash", "node_restart",
                                "partition", "heal", "clog", "loss", "duplicate", "reorder", "pause", "slow_start",
                                "reason", "to", "one_way", "duration", "delay", "ratio", "restart_after"});
  for (const Entry& e : keys) {
    faults::Kind kind{};
    if (e.key == "name") rd.scalar(e.value, "name", f.name);
    else if (e.key == "at") {
      Time t;
      if (rd.time(e.value, "at", t)) f.at = t;
    } else if (e.key == "every") {
      Duration d;
      if (rd.duration(e.value, "every", d)) {
        if (d <= Duration::zero()) rd.error(e.value, "every must be more than 0");
        f.every = d;
      }
    } else if (e.key == "until") {
      Time t;
      if (rd.time(e.value, "until", t)) f.until = t;
    } else if (e.key == "mtbf") {
      Duration d;
      if (rd.duration(e.value, "mtbf", d)) {
        if (d <= Duration::zero()) rd.error(e.value, "mtbf must be more than 0");
        f.mtbf = d;
      }
    } else if (faults::parse_kind(e.key, kind)) {
      if (have_kind) {
        rd.error(e.key_node, "a fault is one kind: '" + e.key + "' after '" + std::string(faults::to_string(f.kind)) + "'");
        continue;
      }
      have_kind = true;
      f.kind = kind;
      if (process_kind(kind)) {
        std::string target;
        if (rd.scalar(e.value, e.key + " (a tree path or a registered name)", target)) {
          f.target = !target.empty() && target.front() == '/' ? faults::Target::path(target) : faults::Target::name(target);
        }
      } else if (node_kind(kind)) {
        std::string node;
        if (rd.scalar(e.value, e.key + " (a node)", node)) f.target = faults::Target::node(node);
      } else if (network_kind(kind)) {
        std::vector<std::string> side;
        if (rd.words(e.value, e.key + " (the nodes on one side)", side)) {
          for (const std::string& s : side) f.side_a.push_back(Atom(s));
        }
      } else {  // heal
        std::string what;
        if (rd.scalar(e.value, "heal", what) && what != "all") rd.error(e.value, "write `heal: all`");
      }
    } else {
      options.push_back(&e);
    }
  }
  if (!n.IsMap()) return f;
  if (!have_kind) rd.error(n, "a fault needs a kind: crash, kill, exit, node_crash, node_restart, partition, heal, clog, loss, duplicate, reorder, pause or slow_start");
  for (const Entry* e : options) {
    if (have_kind && !option_fits(f.kind, e->key)) {
      rd.error(e->key_node, "'" + e->key + "' does not apply to a " + std::string(faults::to_string(f.kind)) + " fault");
      continue;
    }
    if (e->key == "reason") rd.reason(e->value, "reason", f.reason);
    else if (e->key == "to") {
      std::vector<std::string> side;
      if (rd.words(e->value, "to", side)) {
        for (const std::string& s : side) f.side_b.push_back(Atom(s));
      }
    } else if (e->key == "one_way") rd.boolean(e->value, "one_way", f.one_way);
    else if (e->key == "duration") rd.duration(e->value, "duration", f.duration);
    else if (e->key == "delay") rd.duration(e->value, "delay", f.delay);
    else if (e->key == "ratio") rd.ratio(e->value, "ratio", f.ratio);
    else if (e->key == "restart_after") {
      Duration d;
      if (rd.duration(e->value, "restart_after", d)) f.restart_after = d;
    }
  }
  if (f.at && f.mtbf) rd.error(n, "a fault is scheduled (`at`) or stochastic (`mtbf`), not both");
  if (!f.at && !f.mtbf) rd.error(n, "a fault needs `at` (a time) or `mtbf` (a mean time between failures)");
  if (f.every && !f.at) rd.error(n, "`every` repeats a scheduled fault: give `at` too");
  // A missing option is reported only when it was not written at all (a bad value was reported).
  auto given = [&](const char* key) {
    return std::any_of(options.begin(), options.end(), [&](const Entry* e) { return e->key == key; });
  };
  if (have_kind && (f.kind == faults::Kind::loss || f.kind == faults::Kind::duplicate || f.kind == faults::Kind::reorder) &&
      !given("ratio"))
    rd.error(n, "a " + std::string(faults::to_string(f.kind)) + " fault needs a `ratio`");
  if (have_kind && (f.kind == faults::Kind::clog || f.kind == faults::Kind::slow_start) && !given("delay"))
    rd.error(n, "a " + std::string(faults::to_string(f.kind)) + " fault needs a `delay`");
  if (have_kind && f.kind == faults::Kind::pause && !given("duration"))
    rd.error(n, "a pause fault needs a `duration`");
  return f;
}

CheckDecl read_check(Reader& rd, const YAML::Node& n) {
  CheckDecl c;
  c.mark = mark_of(n);
  std::optional<YAML::Node> value;
  YAML::Node name_node = n;
  if (n.IsScalar()) {
    c.name = n.Scalar();
  } else if (n.IsMap() && n.size() == 1) {
    const auto it = n.begin();
    name_node.reset(it->first);
    if (!rd.scalar(it->first, "a check name", c.name)) return c;
    value.emplace(it->second);
  } else {
    rd.error(n, "a check is a name (`converges`) or a one-key map (`availability: {of: /root, min: 99%}`)");
    return c;
  }
  const CheckInfo* info = find_check(c.name);
  if (info == nullptr) {
    std::string names;
    for (const CheckInfo& k : check_catalogue()) names += (names.empty() ? "" : ", ") + k.name;
    rd.error(name_node, "unknown check '" + c.name + "'; the checks are: " + names);
    return c;
  }
  if (!value || value->IsNull()) {
    if (info->needs_of) rd.error(n, "check '" + c.name + "' needs `of` (a tree path)");
    if (info->needs_min) rd.error(n, "check '" + c.name + "' needs `min`");
    if (info->needs_max) rd.error(n, "check '" + c.name + "' needs `max` (at most) or `count` (exactly)");
    return c;
  }
  const YAML::Node v = *value;
  if (v.IsScalar()) {
    c.of = v.Scalar();  // `alive: /root/db`
  } else {
    for (const Entry& e : rd.entries(v, "check '" + c.name + "'", {"of", "min", "max", "count"})) {
      if (e.key == "of") rd.scalar(e.value, "of", c.of);
      else if (e.key == "min") {
        Ratio r;
        if (rd.ratio(e.value, "min", r)) c.min = r;
      } else if (e.key == "max") {
        std::int64_t m = 0;
        if (rd.integer<std::int64_t>(e.value, "max", m, 0, 1'000'000'000)) c.max = m;
      } else if (e.key == "count") {
        std::int64_t m = 0;
        if (rd.integer<std::int64_t>(e.value, "count", m, 0, 1'000'000'000)) c.count = m;
      }
    }
  }
  if (info->needs_of && c.of.empty()) rd.error(v, "check '" + c.name + "' needs `of` (a tree path)");
  if (!info->needs_of && !c.of.empty()) rd.error(v, "check '" + c.name + "' takes no `of`");
  if (info->needs_min && !c.min) rd.error(v, "check '" + c.name + "' needs `min`");
  if (info->needs_max && !c.max && !c.count) rd.error(v, "check '" + c.name + "' needs `max` (at most) or `count` (exactly)");
  if (!info->needs_min && c.min) rd.error(v, "check '" + c.name + "' takes no `min`");
  if (!info->needs_max && (c.max || c.count)) rd.error(v, "check '" + c.name + "' takes no `max` or `count`");
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

void read_scenario(Reader& rd, const YAML::Node& doc, Scenario& s) {
  bool named = false;
  bool have_duration = false;
  bool have_tree = false;
  for (const Entry& e : rd.entries(doc, "the scenario",
                                   {"scenario", "description", "seed", "tie_break", "duration", "phases", "nodes",
                                    "network", "tree", "trees", "script", "faults", "checks", "reports"})) {
    if (e.key == "scenario") named = rd.scalar(e.value, "scenario (its name)", s.name);
    else if (e.key == "description") rd.scalar(e.value, "description", s.description);
    else if (e.key == "seed") rd.integer<std::uint64_t>(e.value, "seed", s.seed, 0, UINT64_MAX);
    else if (e.key == "tie_break") rd.choice(e.value, "tie_break", s.tie_break, [](const std::string& t, TieBreak& b) { return parse_tie_break(t, b); }, "fifo or random");
    else if (e.key == "duration") {
      if (have_duration) rd.error(e.key_node, "the chaos phase's length is given twice (`duration` and `phases: chaos`)");
      have_duration = rd.duration(e.value, "duration", s.duration);
    } else if (e.key == "phases") {
      for (const Entry& p : rd.entries(e.value, "phases", {"chaos", "quiet", "expect_escalation"})) {
        if (p.key == "chaos") {
          if (have_duration) rd.error(p.key_node, "the chaos phase's length is given twice (`duration` and `phases: chaos`)");
          have_duration = rd.duration(p.value, "chaos", s.duration);
        } else if (p.key == "quiet") {
          Duration d;
          if (rd.duration(p.value, "quiet", d)) s.quiet = d;
        } else if (p.key == "expect_escalation") {
          rd.boolean(p.value, "expect_escalation", s.expect_escalation);
        }
      }
    } else if (e.key == "nodes") {
      if (!e.value.IsSequence()) {
        rd.error(e.value, "nodes must be a list, not " + kind_of(e.value));
        continue;
      }
      for (const YAML::Node& x : e.value) {
        NodeDecl d;
        d.mark = mark_of(x);
        if (x.IsScalar()) d.name = x.Scalar();
        else {
          for (const Entry& k : rd.entries(x, "a node", {"name", "clock_skew"})) {
            if (k.key == "name") rd.scalar(k.value, "name", d.name);
            else rd.duration(k.value, "clock_skew", d.clock_skew);
          }
          if (x.IsMap() && d.name.empty()) rd.error(x, "a node needs a name");
        }
        s.nodes.push_back(d);
      }
    } else if (e.key == "network") {
      for (const Entry& k : rd.entries(e.value, "network", {"default", "links"})) {
        if (k.key == "default") read_link(rd, k.value, "the default link", s.default_link, nullptr, nullptr);
        else if (!k.value.IsSequence()) rd.error(k.value, "links must be a list, not " + kind_of(k.value));
        else {
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
    } else if (e.key == "tree") {
      if (have_tree) rd.error(e.key_node, "give `tree` (one root) or `trees` (a list), not both");
      have_tree = true;
      s.trees.push_back(read_child(rd, e.value, true));
    } else if (e.key == "trees") {
      if (have_tree) rd.error(e.key_node, "give `tree` (one root) or `trees` (a list), not both");
      have_tree = true;
      if (!e.value.IsSequence()) rd.error(e.value, "trees must be a list, not " + kind_of(e.value));
      else
        for (const YAML::Node& t : e.value) s.trees.push_back(read_child(rd, t, true));
    } else if (e.key == "script") {
      if (!e.value.IsSequence()) rd.error(e.value, "script must be a list of steps, not " + kind_of(e.value));
      else
        for (const YAML::Node& x : e.value) s.script.push_back(read_step(rd, x));
    } else if (e.key == "faults") {
      if (!e.value.IsSequence()) rd.error(e.value, "faults must be a list, not " + kind_of(e.value));
      else
        for (const YAML::Node& x : e.value) {
          Mark m;
          s.faults.push_back(read_fault(rd, x, m));
          s.fault_marks.push_back(m);
        }
    } else if (e.key == "checks") {
      if (!e.value.IsSequence()) rd.error(e.value, "checks must be a list, not " + kind_of(e.value));
      else
        for (const YAML::Node& x : e.value) s.checks.push_back(read_check(rd, x));
    } else if (e.key == "reports") {
      read_reports(rd, e.value, s.reports);
    }
  }
  if (!doc.IsMap()) return;
  if (!named) rd.error(doc, "the scenario needs a name (`scenario: my_name`)");
  if (!have_tree) rd.error(doc, "the scenario needs a `tree` (or `trees`)");
  if (have_duration && s.duration <= Duration::zero()) rd.error(doc, "the chaos phase (`duration`) must be more than 0");
}

// ---- checks that need the whole scenario -----------------------------------------------------

struct PathInfo {
  const TreeNode* node = nullptr;
  bool dynamic_child = false;  ///< a child of a simple_one_for_one supervisor ("<id>.<n>")
};

class Validator {
 public:
  explicit Validator(const Scenario& s) : s_(s) {}

  std::vector<Diagnostic> run() {
    std::set<std::string> nodes;
    for (const NodeDecl& n : s_.nodes) {
      if (n.name.empty()) continue;
      if (!nodes.insert(n.name).second) error(n.mark, "node '" + n.name + "' is declared twice");
    }
    known_nodes_ = nodes;
    if (known_nodes_.empty()) known_nodes_.insert(s_.default_node());
    for (const LinkDecl& l : s_.links) {
      node(l.from, l.mark);
      node(l.to, l.mark);
    }
    std::set<std::string> roots;
    for (const TreeNode& t : s_.trees) {
      if (!roots.insert(t.spec.id).second) error(t.mark, "a tree named '" + t.spec.id + "' is declared twice");
      if (t.kind == TreeNode::Kind::worker) error(t.mark, "a root is a supervisor or a lifecycle supervisor");
      tree(t, "/" + t.spec.id);
    }
    for (const Step& st : s_.script) step(st);
    for (std::size_t i = 0; i < s_.faults.size(); ++i) fault(s_.faults[i], i < s_.fault_marks.size() ? s_.fault_marks[i] : Mark{});
    for (const CheckDecl& c : s_.checks) {
      if (!c.of.empty()) path(c.of, c.mark, false);
    }
    return std::move(errors_);
  }

 private:
  void error(Mark m, std::string msg) { errors_.push_back({m, std::move(msg)}); }

  void node(const std::string& name, Mark m) {
    if (!known_nodes_.contains(name)) {
      std::string names;
      for (const std::string& n : known_nodes_) names += (names.empty() ? "" : ", ") + n;
      error(m, "unknown node '" + name + "' (the nodes are: " + names + ")");
    }
  }

  void behaviour(const BehaviourRef& b) {
    if (b.name.empty()) return;  // reported where it was missing
    make_behaviour(b, errors_);
  }

  void tree(const TreeNode& t, const std::string& path) {
    paths_[path] = PathInfo{&t, false};
    if (!t.spec.node.empty()) node(std::string(t.spec.node.text()), t.mark);
    switch (t.kind) {
      case TreeNode::Kind::worker:
        behaviour(t.behaviour);
        break;
      case TreeNode::Kind::supervisor: {
        const bool dynamic = t.flags.strategy == supervision::Strategy::simple_one_for_one;
        if (dynamic && t.children.size() > 1)
          error(t.mark, "a simple_one_for_one supervisor has one child, the template (OTP), or none "
                        "(a DynamicSupervisor: start_child gives the whole child); it has " +
                            std::to_string(t.children.size()));
        if (!dynamic && t.flags.max_children)
          error(t.mark, "max_children applies to simple_one_for_one supervisors only");
        std::set<std::string> ids;
        for (const TreeNode& c : t.children) {
          if (!c.spec.id.empty() && !ids.insert(c.spec.id).second)
            error(c.mark, "duplicate child id '" + c.spec.id + "' under " + path);
          tree(c, path + "/" + c.spec.id);
          if (dynamic) dynamic_parents_[path] = c.spec.id;
        }
        if (dynamic && t.children.empty()) dynamic_parents_[path] = "";
        break;
      }
      case TreeNode::Kind::lifecycle: {
        supervision::LifecycleSpec spec;
        std::set<std::string> names;
        for (const ServiceDecl& sv : t.services) {
          if (!sv.name.empty() && !names.insert(sv.name).second) error(sv.mark, "duplicate service '" + sv.name + "'");
          behaviour(sv.behaviour);
          supervision::ServiceSpec ss;
          ss.name = sv.name;
          ss.depends_on = sv.depends_on;
          ss.start.body = [](Context&) {};  // the plan only looks at names and dependencies
          spec.services.push_back(std::move(ss));
          paths_[path + "/" + sv.name] = PathInfo{&t, false};
        }
        for (const ServiceDecl& sv : t.services) {
          for (const std::string& d : sv.depends_on) {
            if (!names.contains(d)) error(sv.mark, "service '" + sv.name + "' depends on '" + d + "', which is not a service here");
          }
        }
        const supervision::LifecyclePlan plan = supervision::plan_lifecycle(spec);
        if (!plan.ok() && plan.message.rfind("dependency cycle", 0) == 0) {
          // Report it at the first service on the cycle.
          Mark at = t.mark;
          for (const ServiceDecl& sv : t.services) {
            if (plan.message.find(" " + sv.name + " ") != std::string::npos ||
                plan.message.find(": " + sv.name + " ") != std::string::npos) {
              at = sv.mark;
              break;
            }
          }
          error(at, plan.message);
        }
        break;
      }
    }
  }

  /// `p` must name something in a tree: a declared child, a service, or a dynamic child.
  const PathInfo* path(const std::string& p, Mark m, bool want_supervisor) {
    if (const auto it = paths_.find(p); it != paths_.end()) {
      if (want_supervisor && it->second.node->kind == TreeNode::Kind::worker) {
        error(m, "'" + p + "' is a worker, not a supervisor");
        return nullptr;
      }
      return &it->second;
    }
    // A dynamic child: <dynamic supervisor>/<template id>.<n>
    const auto slash = p.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      const auto d = dynamic_parents_.find(p.substr(0, slash));
      if (d != dynamic_parents_.end()) {
        const std::string leaf = p.substr(slash + 1);
        // <template id>.<n>, or (no template) <any id>.<n>
        const auto dot = leaf.rfind('.');
        const bool numbered = dot != std::string::npos && dot + 1 < leaf.size() &&
                              leaf.find_first_not_of("0123456789", dot + 1) == std::string::npos;
        if (numbered && (d->second.empty() || leaf.substr(0, dot) == d->second)) return nullptr;
      }
    }
    std::vector<std::string> known;
    for (const auto& entry : paths_) known.push_back(entry.first);
    const std::string near = closest_name(p, known);
    const std::string hint = near.empty() ? std::string() : " (did you mean '" + near + "'?)";
    error(m, "'" + p + "' names nothing in the tree" + hint);
    return nullptr;
  }

  void step(const Step& st) {
    const bool management = st.op == Step::Op::start_child || st.op == Step::Op::terminate_child ||
                            st.op == Step::Op::restart_child || st.op == Step::Op::delete_child ||
                            st.op == Step::Op::which_children;
    if (st.target.empty()) return;  // reported by the reader
    const PathInfo* info = path(st.target, st.mark, management);
    if (info == nullptr || !management) return;
    const bool dynamic = info->node->kind == TreeNode::Kind::supervisor &&
                         info->node->flags.strategy == supervision::Strategy::simple_one_for_one;
    if (info->node->kind == TreeNode::Kind::lifecycle) {
      error(st.mark, "'" + st.target + "' is a lifecycle supervisor: it has services, not child specs");
      return;
    }
    if (st.op == Step::Op::start_child) {
      const bool templated = dynamic && !info->node->children.empty();
      if (templated && st.child)
        error(st.mark, "start_child on a simple_one_for_one supervisor with a template takes `arg`, not `child`");
      if (!templated && !st.child) error(st.mark, "start_child needs the `child` to start");
      if (!templated && !st.arg.empty()) error(st.mark, "`arg` is for simple_one_for_one supervisors with a template; give a `child`");
      if (st.child) {
        const std::string p = st.target + "/" + st.child->spec.id;
        Validator sub(s_);
        sub.known_nodes_ = known_nodes_;
        sub.tree(*st.child, p);
        for (Diagnostic& d : sub.errors_) errors_.push_back(std::move(d));
      }
    }
  }

  void fault(const faults::Fault& f, Mark m) {
    switch (f.target.by) {
      case faults::Target::By::path:
        path(f.target.text, m, false);
        break;
      case faults::Target::By::node:
        node(f.target.text, m);
        break;
      default:
        break;
    }
    for (Atom a : f.side_a) node(std::string(a.text()), m);
    for (Atom b : f.side_b) node(std::string(b.text()), m);
  }

  const Scenario& s_;
  std::set<std::string> known_nodes_;
  std::map<std::string, PathInfo> paths_;
  std::map<std::string, std::string> dynamic_parents_;  // path -> template id
  std::vector<Diagnostic> errors_;
};

}  // namespace

/// The `model` check judges only what the reference model covers: what lies outside, once the
/// file is otherwise right (a half-read step or tree would be reported twice over).
void model_scope(const Scenario& s, std::vector<Diagnostic>& errors) {
  if (!errors.empty() || std::none_of(s.checks.begin(), s.checks.end(), [](const CheckDecl& c) { return c.name == "model"; })) return;
  to_model_case(s, errors);
}

std::vector<Diagnostic> validate(const Scenario& s) {
  std::vector<Diagnostic> errors = Validator(s).run();
  model_scope(s, errors);
  return errors;
}

ParseResult parse_scenario(std::string_view text, const std::string& file) {
  ParseResult out;
  out.scenario.file = file;
  YAML::Node doc;
  try {
    doc = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    out.errors.push_back({e.mark.is_null() ? Mark{} : Mark{e.mark.line + 1, e.mark.column + 1}, "YAML: " + e.msg});
    return out;
  }
  if (!doc || doc.IsNull()) {
    out.errors.push_back({Mark{1, 1}, "the file is empty: a scenario needs at least `scenario` and `tree`"});
    return out;
  }
  Reader rd;
  read_scenario(rd, doc, out.scenario);
  out.errors = std::move(rd.errors);
  // The whole-scenario checks can trust only what was read without mistakes; run them when the
  // reading went well, or when the mistakes were elsewhere (they are still worth reporting).
  for (Diagnostic& d : Validator(out.scenario).run()) out.errors.push_back(std::move(d));
  model_scope(out.scenario, out.errors);
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

ParseResult load_scenario(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult r;
    r.scenario.file = path.string();
    r.errors.push_back({Mark{}, "cannot read the file"});
    return r;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_scenario(buf.str(), path.string());
}

std::string format_diagnostic(const std::string& file, const Diagnostic& d) {
  return file + ":" + std::to_string(d.mark.line) + ":" + std::to_string(d.mark.col) + ": " + d.message;
}

// ---- writing ----------------------------------------------------------------------------------

namespace {

std::string format_at(Time t) { return format_duration(t - Time{}); }

std::string format_shutdown(const Shutdown& s) {
  switch (s.kind) {
    case Shutdown::Kind::brutal_kill: return "brutal_kill";
    case Shutdown::Kind::infinity: return "infinity";
    case Shutdown::Kind::timeout: break;
  }
  return format_duration(s.timeout);
}

void write_args(YAML::Emitter& y, const BehaviourRef& b) {
  if (b.args.empty()) return;
  y << YAML::Key << "args" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : b.args) {
    y << YAML::Key << k << YAML::Value;
    if (v.is_list) {
      y << YAML::Flow << YAML::BeginSeq;
      for (const std::string& x : v.list) y << x;
      y << YAML::EndSeq;
    } else {
      y << v.scalar;
    }
  }
  y << YAML::EndMap;
}

/// A link's parameters where they differ from `base` (what the reader starts from: a link
/// starts from the default link, and `latency` alone means a fixed latency).
void write_link(YAML::Emitter& y, const LinkParams& p, const LinkParams& base) {
  y << YAML::Key << "latency" << YAML::Value << format_duration(p.latency_mean);
  if (p.latency_min != p.latency_mean) y << YAML::Key << "latency_min" << YAML::Value << format_duration(p.latency_min);
  if (p.loss != base.loss) y << YAML::Key << "loss" << YAML::Value << format_ratio(p.loss);
  if (p.duplicate != base.duplicate) y << YAML::Key << "duplicate" << YAML::Value << format_ratio(p.duplicate);
  if (p.reorder != base.reorder) y << YAML::Key << "reorder" << YAML::Value << format_ratio(p.reorder);
  if (p.clog != base.clog) y << YAML::Key << "clog" << YAML::Value << format_duration(p.clog);
}

void write_flags(YAML::Emitter& y, const supervision::SupFlags& f) {
  y << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "strategy" << YAML::Value << std::string(supervision::to_string(f.strategy));
  y << YAML::Key << "intensity" << YAML::Value << f.intensity;
  y << YAML::Key << "period" << YAML::Value << format_duration(f.period);
  if (f.auto_shutdown != supervision::AutoShutdown::never)
    y << YAML::Key << "auto_shutdown" << YAML::Value << std::string(supervision::to_string(f.auto_shutdown));
  if (f.window != supervision::IntensityWindow::otp_seconds) y << YAML::Key << "window" << YAML::Value << "precise";
  if (f.max_children) y << YAML::Key << "max_children" << YAML::Value << *f.max_children;
  y << YAML::EndMap;
}

void write_service(YAML::Emitter& y, const ServiceDecl& s) {
  const ServiceDecl d;
  y << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << s.name;
  y << YAML::Key << "behaviour" << YAML::Value << s.behaviour.name;
  write_args(y, s.behaviour);
  if (s.auto_start) y << YAML::Key << "auto_start" << YAML::Value << "true";
  if (s.start_timeout != d.start_timeout) y << YAML::Key << "start_timeout" << YAML::Value << format_duration(s.start_timeout);
  if (s.stop_timeout != d.stop_timeout) y << YAML::Key << "stop_timeout" << YAML::Value << format_duration(s.stop_timeout);
  if (s.stable_threshold != d.stable_threshold)
    y << YAML::Key << "stable_threshold" << YAML::Value << format_duration(s.stable_threshold);
  if (!s.depends_on.empty()) {
    y << YAML::Key << "depends_on" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& x : s.depends_on) y << x;
    y << YAML::EndSeq;
  }
  if (s.restart != d.restart) {
    y << YAML::Key << "restart" << YAML::Value << YAML::Flow << YAML::BeginMap;
    y << YAML::Key << "initial_delay" << YAML::Value << format_duration(s.restart.initial_delay);
    y << YAML::Key << "max_delay" << YAML::Value << format_duration(s.restart.max_delay);
    y << YAML::Key << "factor" << YAML::Value << format_factor(s.restart.factor);
    y << YAML::Key << "jitter" << YAML::Value << format_ratio(s.restart.jitter);
    y << YAML::Key << "max_attempts" << YAML::Value << s.restart.max_attempts;
    y << YAML::EndMap;
  }
  if (!s.terminal_clean_exits || !s.terminal_reasons.empty()) {
    y << YAML::Key << "terminal" << YAML::Value << YAML::Flow << YAML::BeginMap;
    y << YAML::Key << "clean_exits" << YAML::Value << (s.terminal_clean_exits ? "true" : "false");
    y << YAML::Key << "reasons" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const Reason& r : s.terminal_reasons) y << to_string(r);
    y << YAML::EndSeq << YAML::EndMap;
  }
  y << YAML::EndMap;
}

void write_child(YAML::Emitter& y, const TreeNode& t, bool root) {
  y << YAML::BeginMap;
  y << YAML::Key << "id" << YAML::Value << t.spec.id;
  if (!t.spec.node.empty()) y << YAML::Key << "node" << YAML::Value << std::string(t.spec.node.text());
  const ChildType natural = t.kind == TreeNode::Kind::worker ? ChildType::worker : ChildType::supervisor;
  if (!root) {
    if (t.spec.restart != supervision::RestartType::permanent)
      y << YAML::Key << "restart" << YAML::Value << std::string(supervision::to_string(t.spec.restart));
    if (t.spec.type != natural) y << YAML::Key << "type" << YAML::Value << std::string(supervision::to_string(t.spec.type));
    if (t.spec.shutdown != supervision::default_shutdown(t.spec.type))
      y << YAML::Key << "shutdown" << YAML::Value << format_shutdown(t.spec.shutdown);
    if (t.spec.significant) y << YAML::Key << "significant" << YAML::Value << "true";
  }
  switch (t.kind) {
    case TreeNode::Kind::worker:
      y << YAML::Key << "behaviour" << YAML::Value << t.behaviour.name;
      write_args(y, t.behaviour);
      break;
    case TreeNode::Kind::supervisor:
      y << YAML::Key << "supervisor" << YAML::Value;
      write_flags(y, t.flags);
      y << YAML::Key << "children" << YAML::Value << YAML::BeginSeq;
      for (const TreeNode& c : t.children) write_child(y, c, false);
      y << YAML::EndSeq;
      break;
    case TreeNode::Kind::lifecycle:
      y << YAML::Key << "lifecycle" << YAML::Value << YAML::BeginMap << YAML::Key << "services" << YAML::Value
        << YAML::BeginSeq;
      for (const ServiceDecl& s : t.services) write_service(y, s);
      y << YAML::EndSeq << YAML::EndMap;
      break;
  }
  y << YAML::EndMap;
}

void write_sides(YAML::Emitter& y, const std::vector<Atom>& side) {
  y << YAML::Flow << YAML::BeginSeq;
  for (Atom a : side) y << std::string(a.text());
  y << YAML::EndSeq;
}

void write_fault(YAML::Emitter& y, const faults::Fault& f) {
  using faults::Kind;
  y << YAML::Flow << YAML::BeginMap;
  if (!f.name.empty()) y << YAML::Key << "name" << YAML::Value << f.name;
  if (f.at) y << YAML::Key << "at" << YAML::Value << format_at(*f.at);
  if (f.every) y << YAML::Key << "every" << YAML::Value << format_duration(*f.every);
  if (f.until) y << YAML::Key << "until" << YAML::Value << format_at(*f.until);
  if (f.mtbf) y << YAML::Key << "mtbf" << YAML::Value << format_duration(*f.mtbf);
  y << YAML::Key << std::string(faults::to_string(f.kind)) << YAML::Value;
  if (process_kind(f.kind) || node_kind(f.kind)) y << f.target.text;
  else if (network_kind(f.kind)) write_sides(y, f.side_a);
  else y << "all";
  const faults::Fault d;
  if ((f.kind == Kind::crash || f.kind == Kind::exit) && f.reason != d.reason)
    y << YAML::Key << "reason" << YAML::Value << to_string(f.reason);
  if (network_kind(f.kind) && !f.side_b.empty()) {
    y << YAML::Key << "to" << YAML::Value;
    write_sides(y, f.side_b);
  }
  if (f.kind == Kind::partition && f.one_way) y << YAML::Key << "one_way" << YAML::Value << "true";
  if ((network_kind(f.kind) || f.kind == Kind::pause) && f.duration != Duration::zero())
    y << YAML::Key << "duration" << YAML::Value << format_duration(f.duration);
  if ((f.kind == Kind::clog || f.kind == Kind::slow_start) && f.delay != Duration::zero())
    y << YAML::Key << "delay" << YAML::Value << format_duration(f.delay);
  if ((f.kind == Kind::loss || f.kind == Kind::duplicate || f.kind == Kind::reorder) && f.ratio != Ratio::never())
    y << YAML::Key << "ratio" << YAML::Value << format_ratio(f.ratio);
  if (f.kind == Kind::node_crash && f.restart_after)
    y << YAML::Key << "restart_after" << YAML::Value << format_duration(*f.restart_after);
  y << YAML::EndMap;
}

void write_step(YAML::Emitter& y, const Step& s) {
  y << YAML::BeginMap;
  y << YAML::Key << "at" << YAML::Value << format_at(s.at);
  y << YAML::Key << std::string(to_string(s.op)) << YAML::Value << s.target;
  const Reason natural = s.op == Step::Op::stop ? Reason::normal() : s.op == Step::Op::exit ? Reason::shutdown() : Step{}.reason;
  if ((s.op == Step::Op::crash || s.op == Step::Op::exit || s.op == Step::Op::stop) && s.reason != natural)
    y << YAML::Key << "reason" << YAML::Value << to_string(s.reason);
  if (!s.id.empty()) y << YAML::Key << "id" << YAML::Value << s.id;
  if (!s.arg.empty()) y << YAML::Key << "arg" << YAML::Value << s.arg;
  if (s.child) {
    y << YAML::Key << "child" << YAML::Value;
    write_child(y, *s.child, false);
  }
  y << YAML::EndMap;
}

void write_check(YAML::Emitter& y, const CheckDecl& c) {
  if (c.of.empty() && !c.min && !c.max && !c.count) {
    y << c.name;
    return;
  }
  y << YAML::Flow << YAML::BeginMap << YAML::Key << c.name << YAML::Value << YAML::Flow << YAML::BeginMap;
  if (!c.of.empty()) y << YAML::Key << "of" << YAML::Value << c.of;
  if (c.min) y << YAML::Key << "min" << YAML::Value << format_ratio(*c.min);
  if (c.max) y << YAML::Key << "max" << YAML::Value << *c.max;
  if (c.count) y << YAML::Key << "count" << YAML::Value << *c.count;
  y << YAML::EndMap << YAML::EndMap;
}

}  // namespace

std::string to_yaml(const Scenario& s) {
  YAML::Emitter y;
  y.SetIndent(2);
  y << YAML::BeginMap;
  y << YAML::Key << "scenario" << YAML::Value << s.name;
  if (!s.description.empty()) y << YAML::Key << "description" << YAML::Value << s.description;
  y << YAML::Key << "seed" << YAML::Value << s.seed;
  if (s.tie_break != TieBreak::fifo) y << YAML::Key << "tie_break" << YAML::Value << std::string(to_string(s.tie_break));
  y << YAML::Key << "phases" << YAML::Value << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "chaos" << YAML::Value << format_duration(s.duration);
  if (s.quiet) y << YAML::Key << "quiet" << YAML::Value << format_duration(*s.quiet);
  if (s.expect_escalation) y << YAML::Key << "expect_escalation" << YAML::Value << "true";
  y << YAML::EndMap;
  if (!s.nodes.empty()) {
    y << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
    for (const NodeDecl& n : s.nodes) {
      if (n.clock_skew == Duration::zero()) y << n.name;
      else
        y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n.name << YAML::Key << "clock_skew"
          << YAML::Value << format_duration(n.clock_skew) << YAML::EndMap;
    }
    y << YAML::EndSeq;
  }
  if (s.default_link != LinkParams{} || !s.links.empty()) {
    y << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "default" << YAML::Value << YAML::Flow << YAML::BeginMap;
    write_link(y, s.default_link, LinkParams{});
    y << YAML::EndMap;
    if (!s.links.empty()) {
      y << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
      for (const LinkDecl& l : s.links) {
        y << YAML::Flow << YAML::BeginMap << YAML::Key << "from" << YAML::Value << l.from << YAML::Key << "to"
          << YAML::Value << l.to;
        write_link(y, l.params, s.default_link);
        y << YAML::EndMap;
      }
      y << YAML::EndSeq;
    }
    y << YAML::EndMap;
  }
  y << YAML::Key << "trees" << YAML::Value << YAML::BeginSeq;
  for (const TreeNode& t : s.trees) write_child(y, t, true);
  y << YAML::EndSeq;
  if (!s.script.empty()) {
    y << YAML::Key << "script" << YAML::Value << YAML::BeginSeq;
    for (const Step& st : s.script) write_step(y, st);
    y << YAML::EndSeq;
  }
  if (!s.faults.empty()) {
    y << YAML::Key << "faults" << YAML::Value << YAML::BeginSeq;
    for (const faults::Fault& f : s.faults) write_fault(y, f);
    y << YAML::EndSeq;
  }
  if (!s.checks.empty()) {
    y << YAML::Key << "checks" << YAML::Value << YAML::BeginSeq;
    for (const CheckDecl& c : s.checks) write_check(y, c);
    y << YAML::EndSeq;
  }
  if (s.reports != ReportSet{}) {
    y << YAML::Key << "reports" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    const std::pair<bool, const char*> all[] = {{s.reports.trace, "trace"},       {s.reports.tree, "tree"},
                                                {s.reports.timeline, "timeline"}, {s.reports.perfetto, "perfetto"},
                                                {s.reports.junit, "junit"},       {s.reports.summary, "summary"},
                                                {s.reports.html, "html"}};
    bool any = false;
    for (const auto& [on, name] : all) {
      if (on) y << name, any = true;
    }
    if (!any) y << "none";
    y << YAML::EndSeq;
  }
  y << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

}  // namespace lic::scenarios
