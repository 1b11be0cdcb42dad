// The scenario reader's trees (reader.hpp): supervisor flags, children and their specs, lifecycle
// services and their backoff, and behaviours' arguments.
#include "scenarios/file/reader.hpp"

#include "supervision/lifecycle.hpp"

namespace lic::scenarios::reading {

using supervision::ChildType;
using supervision::Shutdown;

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


}  // namespace lic::scenarios::reading
