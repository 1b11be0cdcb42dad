// The scenario reader's other sections (reader.hpp): links and the network, nodes, the script,
// checks, reports, phases, expect, fix and streams, and the top level that dispatches them.
#include "scenarios/file/reader.hpp"

#include "supervision/lifecycle.hpp"

namespace lic::scenarios::reading {

using supervision::ChildType;
using supervision::Shutdown;

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

/// `preempt: {chance: 5%, mean: 2ms}`: both required; a chance above zero needs a mean above zero.
void read_preempt(Reader& rd, const Entry& k, NodeDecl& d) {
  d.preempt_mark = mark_of(k.key_node);
  bool chance = false;
  bool mean = false;
  for (const Entry& p : rd.entries(k.value, "preempt", {"chance", "mean"})) {
    if (p.key == "chance") {
      chance = true;
      rd.ratio(p.value, "preempt's chance", d.preempt);
    } else if (mean = true; rd.duration(p.value, "preempt's mean", d.preempt_mean)) {
      if (d.preempt_mean <= Duration::zero()) rd.error(p.value, "preempt's mean must be above zero (a goroutine left runnable for no time is not preempted)");
    }
  }
  if (k.value.IsMap() && (!chance || !mean)) rd.error(k.value, "preempt needs a chance and a mean: `preempt: {chance: 5%, mean: 2ms}`");
}

NodeDecl read_node(Reader& rd, const YAML::Node& x) {
  NodeDecl d;
  d.mark = mark_of(x);
  if (x.IsScalar()) {  // `nodes: [a, b]`: a name ('' is refused as in `{name: ''}`)
    rd.name(x, "a node's name", d.name);
    return d;
  }
  for (const Entry& k : rd.entries(x, "a node", {"name", "clock_skew", "drift", "preempt"})) {
    if (k.key == "name") rd.name(k.value, "a node's name", d.name);
    else if (k.key == "drift") rd.ppm(k.value, "drift", d.drift_ppm);
    else if (k.key == "preempt") read_preempt(rd, k, d);
    else rd.signed_duration(k.value, "clock_skew", d.clock_skew);
  }
  if (x.IsMap() && d.name.empty()) rd.error(x, "a node needs a name");
  return d;
}

void read_network(Reader& rd, const YAML::Node& n, Scenario& s) {
  // Detection: `ticks` (the default: distributed Erlang's net ticks, 60 s unless net_ticktime
  // says otherwise) or `instant` (contact lost at the instant of a block).
  std::string detection;
  YAML::Node detection_at;
  YAML::Node tick_setting;
  bool tick_set = false;
  Duration ticktime = kSecond * 60;
  Duration setuptime = NetTicks{}.setuptime;
  bool pop = NetTicks{}.prevent_overlapping_partitions;
  for (const Entry& k : rd.entries(n, "network", {"default", "links", "detection", "net_ticktime", "net_setuptime", "prevent_overlapping_partitions"})) {
    if (k.key == "detection") {
      detection_at.reset(k.value);
      if (rd.scalar(k.value, "detection", detection) && detection != "instant" && detection != "ticks")
        rd.error(k.value, "unknown detection '" + detection + "' (instant or ticks)");
    } else if (k.key == "prevent_overlapping_partitions") {
      // OTP 25's `global` default (docs/network.md, "global"): a setting of the tick model.
      if (!tick_set) tick_setting.reset(k.key_node);
      tick_set = true;
      rd.boolean(k.value, k.key, pop);
    } else if (k.key == "net_ticktime" || k.key == "net_setuptime") {
      if (!tick_set) tick_setting.reset(k.key_node);
      tick_set = true;
      Duration& d = k.key == "net_ticktime" ? ticktime : setuptime;
      if (rd.duration(k.value, k.key, d)) {
        if (k.key == "net_ticktime" && d < kMillisecond * 4)
          rd.error(k.value, "net_ticktime must be at least 4ms (a tick is a quarter of it), not " + format_duration(d));
        else if (k.key == "net_setuptime" && d <= Duration::zero())
          rd.error(k.value, "net_setuptime must be more than 0");
      }
    } else if (k.key == "default") {
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
  if (detection == "instant" && tick_set) {
    rd.error(tick_setting, "`detection: instant` has no net ticks: drop net_ticktime, net_setuptime and prevent_overlapping_partitions, or say `detection: ticks`");
  } else if (detection == "instant") {
    s.net_ticks = NetTicks{};
  } else {
    s.net_ticks.ticktime = ticktime;
    s.net_ticks.setuptime = setuptime;
    s.net_ticks.prevent_overlapping_partitions = pop;
  }
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
                        (kind == "link" && words == 3) || ((kind == "fault" || kind == "buggify" || kind == "ticks") && words == 2);
    if (!shaped || p.key.find("  ") != std::string::npos || p.key.back() == ' ') {
      rd.error(kv.first, "streams: '" + p.key + "' names no stream: give `process PATH`, `link FROM TO`, `fault NAME`, `buggify NAME`, `ticks NODE` or `tie-break`");
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


}  // namespace lic::scenarios::reading
