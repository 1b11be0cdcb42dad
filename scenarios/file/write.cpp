#include "scenarios/file/write.hpp"

#include <algorithm>
#include <yaml-cpp/yaml.h>

#include "scenarios/faults/table.hpp"

namespace lic::scenarios {

namespace {

using supervision::ChildType;
using supervision::Shutdown;

std::string format_at(Time t) { return format_duration(t - Time{}); }

std::string signed_text(Duration d) { return d < Duration::zero() ? "-" + format_duration(Duration::zero() - d) : format_duration(d); }

std::string format_shutdown(const Shutdown& s) {
  switch (s.kind) {
    case Shutdown::Kind::brutal_kill: return "brutal_kill";
    case Shutdown::Kind::infinity: return "infinity";
    case Shutdown::Kind::timeout: break;
  }
  return format_duration(s.timeout);
}

void write_value(YAML::Emitter& y, const ArgValue& v);

void write_args(YAML::Emitter& y, const BehaviourRef& b) {
  if (b.args.empty()) return;
  y << YAML::Key << "args" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : b.args) {
    y << YAML::Key << k << YAML::Value;
    write_value(y, v);
  }
  y << YAML::EndMap;
}

/// A link's parameters where they differ from `base` (what the reader starts from: a link
/// starts from the default link, and `latency` alone means a fixed latency).
void write_link(YAML::Emitter& y, const LinkParams& p, const LinkParams& base) {
  if (p.latency_max != Duration::zero()) {
    y << YAML::Key << "latency" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "uniform" << YAML::Value
      << YAML::Flow << YAML::BeginSeq << format_duration(p.latency_min) << format_duration(p.latency_max) << YAML::EndSeq
      << YAML::EndMap;
  } else {
    y << YAML::Key << "latency" << YAML::Value << format_duration(p.latency_mean);
    if (p.latency_min != p.latency_mean) y << YAML::Key << "latency_min" << YAML::Value << format_duration(p.latency_min);
  }
  if (p.loss != base.loss) y << YAML::Key << "loss" << YAML::Value << format_ratio(p.loss);
  if (p.duplicate != base.duplicate) y << YAML::Key << "duplicate" << YAML::Value << format_ratio(p.duplicate);
  if (p.reorder != base.reorder) y << YAML::Key << "reorder" << YAML::Value << format_ratio(p.reorder);
  if (p.clog != base.clog) y << YAML::Key << "clog" << YAML::Value << format_duration(p.clog);
}

void write_flags(YAML::Emitter& y, const supervision::SupFlags& f, const std::vector<std::string>& init) {
  y << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "strategy" << YAML::Value << std::string(supervision::to_string(f.strategy));
  // OTP's defaults (1 in 5 s), which the reader starts from, are left out as a user leaves them.
  const supervision::SupFlags d;
  if (f.intensity != d.intensity) y << YAML::Key << "intensity" << YAML::Value << f.intensity;
  if (f.period != d.period) y << YAML::Key << "period" << YAML::Value << format_duration(f.period);
  if (f.auto_shutdown != supervision::AutoShutdown::never)
    y << YAML::Key << "auto_shutdown" << YAML::Value << std::string(supervision::to_string(f.auto_shutdown));
  if (f.window != supervision::IntensityWindow::otp_seconds) y << YAML::Key << "window" << YAML::Value << "precise";
  if (f.max_children) y << YAML::Key << "max_children" << YAML::Value << *f.max_children;
  if (init.size() == 1) y << YAML::Key << "init" << YAML::Value << init.front();
  if (init.size() > 1) {
    y << YAML::Key << "init" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& x : init) y << x;
    y << YAML::EndSeq;
  }
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
    if (t.spec.mailbox_max != 0)
      y << YAML::Key << "mailbox" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "max" << YAML::Value
        << t.spec.mailbox_max << YAML::Key << "when_full" << YAML::Value << (t.spec.mailbox_block ? "block" : "drop")
        << YAML::EndMap;
  }
  switch (t.kind) {
    case TreeNode::Kind::worker:
      y << YAML::Key << "behaviour" << YAML::Value << t.behaviour.name;
      write_args(y, t.behaviour);
      break;
    case TreeNode::Kind::supervisor:
      y << YAML::Key << "supervisor" << YAML::Value;
      write_flags(y, t.flags, t.init);
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

/// A knob's value, or its range `lo..hi` when the file gave one.
std::string knob(const faults::Fault& f, std::string_view key, std::string value) {
  const faults::KnobRange* r = f.range(key);
  return r == nullptr ? value : r->lo + ".." + r->hi;
}

/// A knob's value as written: drawn per injection (`{uniform: [lo, hi]}`), a swarm range
/// (`lo..hi`), or `plain`.
struct KnobText {
  const faults::Fault& f;
  std::string_view key;
  std::string plain;
};

YAML::Emitter& operator<<(YAML::Emitter& y, const KnobText& k) {
  if (const faults::KnobRange* r = k.f.drawn(k.key))
    return y << YAML::Flow << YAML::BeginMap << YAML::Key << "uniform" << YAML::Value << YAML::Flow << YAML::BeginSeq << r->lo
             << r->hi << YAML::EndSeq << YAML::EndMap;
  return y << knob(k.f, k.key, k.plain);
}

void write_options(YAML::Emitter& y, const faults::Fault& f, const faults::KindInfo& k) {
  using faults::Option;
  // Each option it takes, where it differs from what the reader starts from (or is a range).
  const faults::Fault d;
  auto key = [&](Option o) -> YAML::Emitter& { return y << YAML::Key << std::string(faults::to_string(o)) << YAML::Value; };
  // An option the kind needs is written whatever its value (a pause of 0s, a loss of 0%): the
  // reader refuses the fault without it.
  auto always = [&](Option o) {
    return f.range(faults::to_string(o)) != nullptr || f.drawn(faults::to_string(o)) != nullptr ||
           std::find(k.needs.begin(), k.needs.end(), o) != k.needs.end();
  };
  for (Option o : k.takes) {
    if (o == Option::reason && f.reason != d.reason) key(o) << to_string(f.reason);
    if (o == Option::to && !f.side_b.empty()) write_sides(key(o), f.side_b);
    if (o == Option::one_way && f.one_way) key(o) << "true";
    const auto value = [&f](std::string_view name, std::string plain) { return KnobText{f, name, std::move(plain)}; };
    if (o == Option::duration && (f.duration != Duration::zero() || always(o))) key(o) << value("duration", format_duration(f.duration));
    if (o == Option::delay && (f.delay != Duration::zero() || always(o))) key(o) << value("delay", format_duration(f.delay));
    if (o == Option::ratio && (f.ratio != Ratio::never() || always(o))) key(o) << value("ratio", format_ratio(f.ratio));
    if (o == Option::restart_after && f.restart_after) key(o) << value("restart_after", format_duration(*f.restart_after));
    if (o == Option::grace) key(o) << value("grace", format_duration(f.grace));
    if (o == Option::mode) key(o) << f.mode;
    if (o == Option::skew && f.skew) key(o) << signed_text(*f.skew);
    if (o == Option::drift && f.drift_ppm) key(o) << std::to_string(*f.drift_ppm) + "ppm";
  }
}

void write_fault(YAML::Emitter& y, const faults::Fault& f) {
  const faults::KindInfo& k = faults::info(f.kind);
  y << YAML::Flow << YAML::BeginMap;
  if (!f.name.empty()) y << YAML::Key << "name" << YAML::Value << f.name;
  if (f.at) y << YAML::Key << "at" << YAML::Value << knob(f, "at", format_at(*f.at));
  if (f.every) y << YAML::Key << "every" << YAML::Value << knob(f, "every", format_duration(*f.every));
  if (f.until) y << YAML::Key << "until" << YAML::Value << format_at(*f.until);
  if (f.mtbf) y << YAML::Key << "mtbf" << YAML::Value << knob(f, "mtbf", format_duration(*f.mtbf));
  if (f.after) y << YAML::Key << "after" << YAML::Value << format_at(*f.after);
  y << YAML::Key << std::string(k.name) << YAML::Value;
  if (k.aim == faults::Aim::process || k.aim == faults::Aim::node) y << f.target.text;
  else if (k.aim == faults::Aim::sides) write_sides(y, f.side_a);
  else y << "all";
  write_options(y, f, k);
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
  if (s.op == Step::Op::stop_task) y << YAML::Key << "grace" << YAML::Value << format_duration(s.grace);
  if (s.child) {
    y << YAML::Key << "child" << YAML::Value;
    write_child(y, *s.child, false);
  }
  y << YAML::EndMap;
}

void write_value(YAML::Emitter& y, const ArgValue& v) {
  if (!v.is_list) {
    y << v.scalar;
    return;
  }
  y << YAML::Flow << YAML::BeginSeq;
  for (const std::string& x : v.list) y << x;
  y << YAML::EndSeq;
}

void write_check(YAML::Emitter& y, const CheckDecl& c) {
  if (c.args.empty()) {
    y << c.name;
    return;
  }
  y << YAML::Flow << YAML::BeginMap << YAML::Key << c.name << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : c.args) {
    y << YAML::Key << k << YAML::Value;
    write_value(y, v);
  }
  y << YAML::EndMap << YAML::EndMap;
}

void write_nodes(YAML::Emitter& y, const std::vector<NodeDecl>& nodes) {
  if (!nodes.empty()) {
    y << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
    for (const NodeDecl& n : nodes) {
      if (n.clock_skew == Duration::zero() && n.drift_ppm == 0 && n.preempt.num == 0 && n.preempt_mean == Duration::zero()) {
        y << n.name;
        continue;
      }
      y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n.name;
      if (n.clock_skew != Duration::zero()) y << YAML::Key << "clock_skew" << YAML::Value << signed_text(n.clock_skew);
      if (n.drift_ppm != 0) y << YAML::Key << "drift" << YAML::Value << std::to_string(n.drift_ppm) + "ppm";
      if (n.preempt.num != 0 || n.preempt_mean != Duration::zero()) {  // as written, a chance of 0 too
        y << YAML::Key << "preempt" << YAML::Value << YAML::Flow << YAML::BeginMap;
        y << YAML::Key << "chance" << YAML::Value << format_ratio(n.preempt);
        y << YAML::Key << "mean" << YAML::Value << format_duration(n.preempt_mean) << YAML::EndMap;
      }
      y << YAML::EndMap;
    }
    y << YAML::EndSeq;
  }
}

void write_network(YAML::Emitter& y, const Scenario& s) {
  // Only what differs from the default (net ticks, OTP's 60 s).
  const bool ticks = s.net_ticks.ticktime != Duration::zero();
  const bool other_ticks = ticks && s.net_ticks != Scenario::default_net_ticks();
  if (s.default_link != LinkParams{} || !s.links.empty() || !ticks || other_ticks) {
    y << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
    if (!ticks) y << YAML::Key << "detection" << YAML::Value << "instant";
    if (other_ticks) {
      y << YAML::Key << "detection" << YAML::Value << "ticks";
      if (s.net_ticks.ticktime != Scenario::default_net_ticks().ticktime)
        y << YAML::Key << "net_ticktime" << YAML::Value << format_duration(s.net_ticks.ticktime);
      if (s.net_ticks.setuptime != NetTicks{}.setuptime)
        y << YAML::Key << "net_setuptime" << YAML::Value << format_duration(s.net_ticks.setuptime);
      if (!s.net_ticks.prevent_overlapping_partitions) y << YAML::Key << "prevent_overlapping_partitions" << YAML::Value << false;
    }
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
}

void write_reports(YAML::Emitter& y, const ReportSet& r) {
  if (r != ReportSet{}) {
    y << YAML::Key << "reports" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    const std::pair<bool, const char*> all[] = {{r.trace, "trace"},       {r.tree, "tree"},
                                                {r.timeline, "timeline"}, {r.perfetto, "perfetto"},
                                                {r.junit, "junit"},       {r.summary, "summary"},
                                                {r.html, "html"}};
    bool any = false;
    for (const auto& [on, name] : all) {
      if (on) y << name, any = true;
    }
    if (!any) y << "none";
    y << YAML::EndSeq;
  }
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
  write_nodes(y, s.nodes);
  write_network(y, s);
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
  if (!s.buggify.empty()) {
    y << YAML::Key << "buggify" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& b : s.buggify) y << b;
    y << YAML::EndSeq;
  }
  if (!s.streams.empty()) {
    y << YAML::Key << "streams" << YAML::Value << YAML::BeginMap;
    for (const StreamPin& p : s.streams) y << YAML::Key << p.key << YAML::Value << p.seed;
    y << YAML::EndMap;
  }
  if (!s.expect_fail.empty()) {
    y << YAML::Key << "expect" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "fail" << YAML::Value
      << YAML::Flow << YAML::BeginSeq;
    for (const std::string& c : s.expect_fail) y << c;
    y << YAML::EndSeq << YAML::EndMap;
  }
  if (!s.fix.empty()) y << YAML::Key << "fix" << YAML::Value << YAML::Flow << YAML::Load(s.fix);
  if (!s.checks.empty()) {
    y << YAML::Key << "checks" << YAML::Value << YAML::BeginSeq;
    for (const CheckDecl& c : s.checks) write_check(y, c);
    y << YAML::EndSeq;
  }
  write_reports(y, s.reports);
  y << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

}  // namespace lic::scenarios

