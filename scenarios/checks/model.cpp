#include "scenarios/checks/model.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

#include "supervision/model_harness.hpp"

namespace lic::scenarios {

namespace model = supervision::model;
using supervision::ChildType;
using supervision::Shutdown;
using supervision::StopStyle;
using supervision::Strategy;

namespace {

class Converter {
 public:
  explicit Converter(std::vector<Diagnostic>& why_not) : why_not_(why_not) {}

  model::Node supervisor(const TreeNode& t, const std::string& path) {
    model::Node n;
    n.spec = t.spec;
    n.spec.type = ChildType::supervisor;
    n.flags = t.flags;
    if (t.kind == TreeNode::Kind::lifecycle) {
      no(t.mark, path + " is a lifecycle supervisor");
    } else if (t.flags.strategy == Strategy::simple_one_for_one) {
      no(t.mark, path + " is simple_one_for_one");
    }
    if (!t.init.empty()) no(t.mark, "supervisor " + path + " has an init result of its own");
    for (const TreeNode& c : t.children) {
      const std::string p = path + "/" + c.spec.id;
      if (!c.spec.node.empty()) no(c.mark, p + " runs on node " + std::string(c.spec.node.text()) + ", not its tree's");
      if (c.kind == TreeNode::Kind::worker) {
        n.children.push_back(worker(c, p));
        workers_.push_back(p);
        continue;
      }
      if (c.spec.shutdown.kind != Shutdown::Kind::infinity) no(c.mark, "supervisor " + p + " has a shutdown other than infinity");
      n.children.push_back(supervisor(c, p));
    }
    return n;
  }

  bool is_worker(const std::string& path) const {
    return std::find(workers_.begin(), workers_.end(), path) != workers_.end();
  }

  void no(Mark m, const std::string& what) {
    why_not_.push_back({m, "the `model` check needs what the reference model covers: " + what});
  }

 private:
  model::Node worker(const TreeNode& t, const std::string& path) {
    model::Node n;
    n.spec = t.spec;
    n.spec.type = ChildType::worker;  // a behaviour runs there, whatever `type` says (OTP only reports it)
    const std::string& b = t.behaviour.name;
    if (b == "idle") {
      n.stop = StopStyle::prompt;
    } else if (b == "trap_exit") {
      n.stop = StopStyle::delay;
    } else if (b == "stall") {
      n.stop = StopStyle::stall;
      if (t.spec.shutdown.kind == Shutdown::Kind::infinity) no(t.mark, path + " stalls with shutdown infinity (it would hang, as in OTP)");
    } else {
      no(t.behaviour.mark, path + " runs '" + b + "' (the model's workers are idle, trap_exit and stall)");
      return n;  // its arguments are beside the point
    }
    for (const auto& [name, v] : t.behaviour.args) {
      if (name == "shutdown_delay" && n.stop == StopStyle::delay) {
        const DurationParse d = parse_duration(v.scalar);
        if (d.ok) n.stop_delay = d.value;
        if (d.ok && t.spec.shutdown.kind == Shutdown::Kind::timeout && t.spec.shutdown.timeout == d.value) {
          // Which of the two ends first is then a same-instant race the tie-break decides.
          no(v.mark, path + "'s shutdown_delay equals its shutdown timeout (the model assumes they differ)");
        }
      } else if (name == "init") {
        for (const std::string& item : v.is_list ? v.list : std::vector<std::string>{v.scalar}) {
          if (item == "ok") n.inits.push_back(model::InitOutcome::ok);
          else if (item == "ignore") n.inits.push_back(model::InitOutcome::ignore);
          else if (item == "error") n.inits.push_back(model::InitOutcome::error);
          else no(v.mark, path + "'s init result '" + item + "' (the model's are ok, ignore and error)");
        }
      } else if (name == "init_delay" && parse_duration(v.scalar).ok && parse_duration(v.scalar).value == Duration::zero()) {
        // a zero delay is no delay
      } else {
        no(v.mark, path + " has `" + name + "` (the model's workers take init, and shutdown_delay for trap_exit)");
      }
    }
    return n;
  }

  std::vector<Diagnostic>& why_not_;
  std::vector<std::string> workers_;
};

/// The model's worker, as a catalogue behaviour.
BehaviourRef behaviour_of(const model::Node& n) {
  BehaviourRef b;
  b.name = n.stop == StopStyle::prompt ? "idle" : n.stop == StopStyle::delay ? "trap_exit" : "stall";
  if (n.stop == StopStyle::delay) {
    ArgValue d;
    d.scalar = format_duration(n.stop_delay);
    b.args.emplace_back("shutdown_delay", std::move(d));
  }
  if (!n.inits.empty()) {
    ArgValue init;
    init.is_list = true;
    for (model::InitOutcome o : n.inits) {
      init.list.emplace_back(o == model::InitOutcome::ok ? "ok" : o == model::InitOutcome::ignore ? "ignore" : "error");
    }
    b.args.emplace_back("init", std::move(init));
  }
  return b;
}

TreeNode tree_of(const model::Node& n) {
  TreeNode t;
  t.spec = n.spec;
  if (n.spec.type == ChildType::worker) {
    t.kind = TreeNode::Kind::worker;
    t.behaviour = behaviour_of(n);
    return t;
  }
  t.kind = TreeNode::Kind::supervisor;
  t.flags = n.flags;
  for (const model::Node& c : n.children) t.children.push_back(tree_of(c));
  return t;
}

}  // namespace

std::optional<ModelCase> to_model_case(const Scenario& s, std::vector<Diagnostic>& why_not) {
  const std::size_t before = why_not.size();
  Converter conv(why_not);
  if (s.trees.size() != 1) {
    conv.no(s.trees.size() > 1 ? s.trees[1].mark : Mark{}, "one tree (this file has " + std::to_string(s.trees.size()) + ")");
    return std::nullopt;
  }
  const TreeNode& t = s.trees.front();
  ModelCase out;
  out.root = conv.supervisor(t, "/" + t.spec.id);
  out.root.spec.id = t.spec.id;
  if (!s.faults.empty()) conv.no(s.fault_marks.empty() ? Mark{} : s.fault_marks.front(), "no faults (use the script's crash and kill steps)");
  for (const Step& st : s.script) {
    if (st.op == Step::Op::which_children || st.op == Step::Op::count_children) continue;  // it only looks
    if (st.op != Step::Op::crash && st.op != Step::Op::kill) {
      conv.no(st.mark, "a script of crash, kill and which_children steps (this one is " + std::string(to_string(st.op)) + ")");
      continue;
    }
    if (st.op == Step::Op::crash && st.reason.kind == ReasonKind::kill) {
      conv.no(st.mark, "a crash whose reason is kill (the model reads that as the kill step, which ends it `killed`)");
      continue;
    }
    if (!conv.is_worker(st.target)) {
      conv.no(st.mark, "steps on workers (" + st.target + " is not a worker of the tree)");
      continue;
    }
    model::Injection inj;
    inj.at = st.at;
    inj.path = st.target;
    inj.reason = st.op == Step::Op::kill ? Reason::kill() : st.reason;
    out.injections.push_back(std::move(inj));
  }
  // The script runs in time order (file order within an instant).
  std::stable_sort(out.injections.begin(), out.injections.end(),
                   [](const model::Injection& a, const model::Injection& b) { return *a.at < *b.at; });
  if (why_not.size() != before) return std::nullopt;
  return out;
}

Scenario from_model_case(const model::Node& root, const std::vector<model::Injection>& injections,
                         const std::vector<Time>& at, Time end, std::uint64_t seed, TieBreak tie,
                         std::string name, std::vector<CheckDecl> checks) {
  Scenario s;
  s.name = std::move(name);
  s.description = "A case generated against the reference model of OTP supervision; the `model` "
                  "check compares the run's trace with the model's prediction.";
  s.seed = seed;
  s.tie_break = tie;
  TreeNode t = tree_of(root);
  t.spec.id = root.spec.id;
  s.trees.push_back(std::move(t));
  for (std::size_t i = 0; i < injections.size() && i < at.size(); ++i) {
    const model::Injection& inj = injections[i];
    if (inj.fault != model::Fault::process) continue;  // node faults have no script step
    Step st;
    st.at = at[i];
    st.target = inj.path;
    if (inj.reason.kind == ReasonKind::kill) {
      st.op = Step::Op::kill;
    } else {
      st.op = Step::Op::crash;
      st.reason = inj.reason;
    }
    s.script.push_back(std::move(st));
  }
  const std::int64_t seconds = (end - Time{}).ns / kSecond.ns + 2;  // past `end` by 1 to 2 s
  s.duration = kSecond * seconds;
  s.checks = checks.empty() ? std::vector<CheckDecl>{CheckDecl{"model"}} : std::move(checks);
  return s;
}

ModelComparison compare_with_model(const Scenario& s, const EventLog& events, Time end) {
  ModelComparison out;
  std::vector<Diagnostic> why_not;
  const std::optional<ModelCase> c = to_model_case(s, why_not);
  if (!c) {
    out.detail = why_not.empty() ? "outside the model" : why_not.front().message;
    return out;
  }
  // Steps after the run's end were never taken.
  std::vector<model::Injection> taken = c->injections;
  std::erase_if(taken, [&](const model::Injection& i) { return *i.at > end; });
  std::string not_quiet;
  Time step_at{};
  std::vector<model::Event> expected;
  try {
    expected = model::predict(c->root, taken, &not_quiet, &step_at);
  } catch (const std::exception& e) {
    out.detail = std::string("the model cannot judge this run: ") + e.what();
    return out;
  }
  // A step on a path where nothing runs is traced as script_skipped, no event of the tree's;
  // what the model predicts after the run's end cannot be seen.
  std::erase_if(expected, [&](const model::Event& e) { return e.kind == model::Happened::skipped || e.at > end; });
  const std::string prefix = "/" + c->root.spec.id;
  std::vector<model::Event> got = model::events_of(events);
  std::erase_if(got, [&](const model::Event& e) {
    return !(e.path == prefix || e.path.starts_with(prefix + "/"));
  });
  if (!not_quiet.empty()) {
    // Judge what happened before the step that came too soon: a run whose restarts or shutdowns
    // ended at another instant than the model's puts the next step at the wrong moment too, and
    // that difference is the one to report. If there is none, the file is what is wrong.
    auto after_step = [&](const model::Event& e) { return e.at >= step_at; };
    std::erase_if(expected, after_step);
    std::erase_if(got, after_step);
  }
  out.compared = expected.size();
  const std::size_t n = std::min(expected.size(), got.size());
  std::size_t i = 0;
  while (i < n && expected[i] == got[i]) ++i;
  if (i == n && expected.size() == got.size()) {
    if (!not_quiet.empty()) {
      out.detail = "the model cannot judge this run: " + not_quiet;
      return out;
    }
    out.equal = true;
    out.detail = fmt::format("all {} events (starts, exits, give-ups, shutdown errors) are the model's prediction",
                             expected.size());
    return out;
  }
  out.detail = fmt::format("event {} of {} differs: the model predicts {}; the run has {}", i, expected.size(),
                           i < expected.size() ? model::to_string(expected[i]) : std::string("nothing more"),
                           i < got.size() ? model::to_string(got[i]) : std::string("nothing more"));
  return out;
}

}  // namespace lic::scenarios
