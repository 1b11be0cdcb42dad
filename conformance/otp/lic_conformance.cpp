// lic-conformance: the simulator's side of the OTP conformance suite (docs/conformance.md).
//
//   lic-conformance export CASE.yaml OUT.terms    the case as Erlang terms for the recorder
//   lic-conformance sim CASE.yaml [--unit MS]     the simulator's normalised events (JSON lines)
//   lic-conformance compare CASE.yaml REC.jsonl [--expected LIST]
//                                                 the simulator against a recording
//   lic-conformance same A.jsonl B.jsonl          two recordings agree (a stale recording)
//
// Both sides write the same normalised events: process starts and exits (tree path, start
// number, reason), supervisor reports, management call results and the root's own start result
// (OTP's terms, pids as path#n),
// times rounded to the unit; and at the end every live supervisor's which_children and
// count_children. No Erlang is needed here.

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenarios/file/read.hpp"
#include "scenarios/run/events.hpp"
#include "scenarios/run/runner.hpp"
#include "scenarios/run/world.hpp"
#include "sim/trace_keys.hpp"
#include "supervision/events.hpp"

namespace {

using lic::Duration;
using lic::Reason;
using lic::scenarios::Scenario;
using lic::scenarios::Step;
using lic::scenarios::TreeNode;
using nlohmann::json;

// ------------------------------------------------------------------ export (Erlang terms)

/// `s` between quote characters `q`, with `q` and backslashes escaped: an Erlang string ("...")
/// or a quoted atom ('...').
std::string quoted(const std::string& s, char q) {
  std::string r(1, q);
  for (char c : s) {
    if (c == q || c == '\\') r += '\\';
    r += c;
  }
  return r + q;
}

std::string str(const std::string& s) { return quoted(s, '"'); }
std::string atom(const std::string& s) { return quoted(s, '\''); }

std::string ms(Duration d) { return std::to_string(d.ns / 1'000'000); }

/// A reason as an Erlang term: to_string's form, with `{error,W}` and `{shutdown,T}` as is.
std::string reason_term(const Reason& r) { return to_string(r); }

const lic::scenarios::ArgValue* arg(const TreeNode& n, const std::string& key) {
  for (const auto& [k, v] : n.behaviour.args) {
    if (k == key) return &v;
  }
  return nullptr;
}

Duration duration_arg(const TreeNode& n, const std::string& key) {
  const auto* a = arg(n, key);
  if (a == nullptr) return Duration::zero();
  const lic::DurationParse p = lic::parse_duration(a->scalar);
  if (!p.ok) throw std::runtime_error("bad duration for " + key + ": " + a->scalar);
  return p.value;
}

std::string init_term(const std::string& e) {
  if (e == "ok" || e == "ignore") return e;
  if (e == "error") return "{stop,{error,init_failed}}";
  if (e.rfind("error:", 0) == 0) return "{stop,{error," + e.substr(6) + "}}";
  if (e.rfind("stop:", 0) == 0) {
    Reason r;
    if (!lic::parse_reason(e.substr(5), r)) throw std::runtime_error("bad init result: " + e);
    return "{stop," + reason_term(r) + "}";
  }
  throw std::runtime_error("bad init result: " + e);
}

std::string inits_term(const std::vector<std::string>& xs) {
  std::string s = "[";
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i > 0) s += ",";
    s += init_term(xs[i]);
  }
  return s + "]";
}

std::string worker_cfg(const TreeNode& n) {
  const std::string& b = n.behaviour.name;
  if (b != "idle" && b != "trap_exit" && b != "stall" && b != "crash_after") {
    throw std::runtime_error("the recorder has no behaviour '" + b + "' (idle, trap_exit, stall, crash_after)");
  }
  std::string inits = "[ok]";
  if (const auto* a = arg(n, "init")) inits = inits_term(a->is_list ? a->list : std::vector<std::string>{a->scalar});
  std::string s = "#{kind=>" + b + ",inits=>" + inits + ",init_delay=>" + ms(duration_arg(n, "init_delay")) +
                  ",shutdown_delay=>" + ms(duration_arg(n, "shutdown_delay"));
  if (b == "crash_after") {
    Reason r = Reason::error(lic::Atom("crash"));
    if (const auto* a = arg(n, "reason")) lic::parse_reason(a->scalar, r);
    s += ",'after'=>" + ms(duration_arg(n, "after")) + ",reason=>" + reason_term(r);
  }
  return s + "}";
}

/// The flags, and the supervisor's own init results (`inits`, which the recorder takes out
/// before OTP sees the flags).
std::string flags_term(const TreeNode& n) {
  const lic::supervision::SupFlags& f = n.flags;
  if (f.period.ns % 1'000'000'000 != 0) throw std::runtime_error("OTP's period is whole seconds");
  return "#{strategy=>" + std::string(to_string(f.strategy)) + ",intensity=>" + std::to_string(f.intensity) +
         ",period=>" + std::to_string(f.period.ns / 1'000'000'000) +
         ",auto_shutdown=>" + std::string(to_string(f.auto_shutdown)) +
         (n.init.empty() ? std::string() : ",inits=>" + inits_term(n.init)) + "}";
}

std::string shutdown_term(const lic::supervision::Shutdown& s) {
  using K = lic::supervision::Shutdown::Kind;
  return s.kind == K::brutal_kill ? "brutal_kill" : s.kind == K::infinity ? "infinity" : ms(s.timeout);
}

std::string children_term(const TreeNode& n, const std::string& path);

std::string child_term(const TreeNode& c, const std::string& path, bool is_template) {
  std::string start;
  if (c.kind == TreeNode::Kind::supervisor) {
    start = "{sup," + str(path) + "," + flags_term(c) + "," + children_term(c, path) + "}";
  } else if (c.kind == TreeNode::Kind::worker) {
    start = is_template ? "{template," + worker_cfg(c) + "}" : "{worker," + str(path) + "," + worker_cfg(c) + "}";
  } else {
    throw std::runtime_error("the recorder has no lifecycle supervisors");
  }
  return "#{id=>" + atom(c.spec.id) + ",restart=>" + std::string(to_string(c.spec.restart)) +
         ",shutdown=>" + shutdown_term(c.spec.shutdown) + ",type=>" + std::string(to_string(c.spec.type)) +
         ",significant=>" + (c.spec.significant ? "true" : "false") + ",start=>" + start + "}";
}

std::string children_term(const TreeNode& n, const std::string& path) {
  const bool dynamic = n.flags.strategy == lic::supervision::Strategy::simple_one_for_one;
  std::string s = "[";
  for (std::size_t i = 0; i < n.children.size(); ++i) {
    const TreeNode& c = n.children[i];
    if (i > 0) s += ",";
    s += child_term(c, path + "/" + c.spec.id, dynamic);
  }
  return s + "]";
}

/// The node at a tree path below (and including) `n`, whose own path is `at`.
const TreeNode* node_at(const TreeNode& n, const std::string& at, const std::string& path) {
  if (path == at) return &n;
  if (path.rfind(at + "/", 0) != 0) return nullptr;
  for (const TreeNode& c : n.children) {
    if (const TreeNode* f = node_at(c, at + "/" + c.spec.id, path)) return f;
  }
  return nullptr;
}

const TreeNode* node_at(const TreeNode& root, const std::string& path) {
  return node_at(root, "/" + root.spec.id, path);
}

bool is_dynamic(const Scenario& s, const std::string& path) {
  const TreeNode* n = node_at(s.trees.front(), path);
  return n != nullptr && n->kind == TreeNode::Kind::supervisor &&
         n->flags.strategy == lic::supervision::Strategy::simple_one_for_one;
}

std::string step_opts(const Scenario& s, const Step& st, std::map<std::string, int>& dyn_count) {
  switch (st.op) {
    case Step::Op::crash:
    case Step::Op::exit:
    case Step::Op::stop: return "#{reason=>" + reason_term(st.reason) + "}";
    case Step::Op::start_child: {
      if (!st.child) {
        const TreeNode* n = node_at(s.trees.front(), st.target);
        const std::string tid = n != nullptr && !n->children.empty() ? n->children.front().spec.id : "child";
        return "#{dynamic=>" + str(tid + "." + std::to_string(++dyn_count[st.target])) + ",arg=>" + str(st.arg) + "}";
      }
      return "#{child=>" + child_term(*st.child, st.target + "/" + st.child->spec.id, false) + "}";
    }
    case Step::Op::terminate_child:
    case Step::Op::restart_child:
    case Step::Op::delete_child:
      return "#{id=>" + atom(st.id) + ",dynamic=>" + (is_dynamic(s, st.target) ? "true" : "false") + "}";
    default: return "#{}";
  }
}

int export_case(const Scenario& s, const std::string& out) {
  if (s.trees.size() != 1 || s.trees.front().kind != TreeNode::Kind::supervisor) {
    std::cerr << "the recorder takes one tree with an OTP supervisor at its root\n";
    return 2;
  }
  const TreeNode& root = s.trees.front();
  std::ostringstream o;
  o << "{'case'," << str(s.name) << "," << ms(s.duration) << "}.\n";
  o << "{tree,{sup," << str("/" + root.spec.id) << "," << flags_term(root) << ","
    << children_term(root, "/" + root.spec.id) << "}}.\n";
  std::vector<const Step*> steps;
  for (const Step& st : s.script) steps.push_back(&st);
  std::stable_sort(steps.begin(), steps.end(), [](const Step* a, const Step* b) { return a->at < b->at; });
  std::map<std::string, int> dyn_count;
  for (const Step* st : steps) {
    if (st->op == Step::Op::stop_task) throw std::runtime_error("the recorder has no stop_task");
    o << "{step," << st->at.ns / 1'000'000 << "," << to_string(st->op) << "," << str(st->target) << ","
      << step_opts(s, *st, dyn_count) << "}.\n";
  }
  std::ofstream f(out);
  f << o.str();
  return f ? 0 : 1;
}

// ------------------------------------------------------------------ the simulator's events

std::int64_t units(lic::Time t, std::int64_t unit_ms) {
  const std::int64_t u = unit_ms * 1'000'000;
  return (t.ns + u / 2) / u;
}

json report_of(const lic::TraceEvent& e, std::int64_t unit_ms) {
  namespace sev = lic::supervision::events;
  namespace keys = lic::keys;
  json j = {{"t", units(e.time, unit_ms)}, {"ev", "report"}, {"sup", std::string(e.label.name.text())},
            {"id", e.text(keys::kId)}, {"reason", e.text(keys::kReason)}};
  if (e.name == sev::kReachedMax) {
    j["what"] = "shutdown";
    j["reason"] = "reached_max_restart_intensity";
  } else {
    j["what"] = std::string(e.name.text());
  }
  return j;
}

/// One trace event as a normalised event; null when it is not one.
json event_of(const lic::TraceEvent& e, std::int64_t unit_ms) {
  namespace sev = lic::supervision::events;
  namespace rev = lic::scenarios::run_events;
  const std::string path(e.label.name.text());
  const bool tree = !path.empty() && path.front() == '/';
  if (e.kind == lic::EventKind::spawn && tree) {
    return {{"t", units(e.time, unit_ms)}, {"ev", "start"}, {"path", path}, {"n", e.label.instance}};
  }
  if (e.kind == lic::EventKind::exit && tree) {
    return {{"t", units(e.time, unit_ms)}, {"ev", "exit"}, {"path", path}, {"n", e.label.instance},
            {"reason", to_string(e.reason)}};
  }
  if (e.kind != lic::EventKind::system) return nullptr;
  if (e.name == sev::kChildTerminated || e.name == sev::kStartError || e.name == sev::kShutdownError ||
      e.name == sev::kReachedMax) {
    return report_of(e, unit_ms);
  }
  if (e.name == sev::kRootStart) {
    return {{"t", units(e.time, unit_ms)}, {"ev", "root"}, {"path", path}, {"result", e.text(sev::kValue)}};
  }
  json call = {{"t", units(e.time, unit_ms)}, {"ev", "call"}, {"sup", e.text(lic::keys::kTarget)}};
  if (e.name == rev::kScriptResult) {
    call["call"] = e.text(rev::kOp);
    call["result"] = e.text(rev::kValue);
  } else if (e.name == rev::kWhichChildren) {
    call["call"] = "which_children";
    call["result"] = e.text(rev::kRows);
  } else if (e.name == rev::kCountChildren) {
    call["call"] = "count_children";
    call["result"] = e.text(rev::kCounts);
  } else {
    return nullptr;
  }
  return call;
}

std::vector<json> simulate(const Scenario& s, std::int64_t unit_ms) {
  lic::scenarios::RunResult r = lic::scenarios::run(s);
  std::vector<json> out;
  for (std::size_t i = 0; i < r.sim->trace().events().size(); ++i) {
    json j = event_of(r.sim->trace().events()[i], unit_ms);
    if (!j.is_null()) out.push_back(std::move(j));
  }
  for (const auto& sup : r.final_state.supervisors) {
    const bool dynamic = sup.strategy == lic::supervision::Strategy::simple_one_for_one;
    out.push_back({{"ev", "final"}, {"sup", sup.path},
                   {"which_children", lic::scenarios::rows_term(*r.sim, sup.children, dynamic)},
                   {"count_children", lic::scenarios::counts_term(sup.counts)}});
  }
  return out;
}

// ------------------------------------------------------------------ comparing

struct Events {
  std::int64_t unit_ms = 100;
  std::vector<json> timed;  ///< in order
  std::vector<json> final;  ///< by supervisor
};

Events split(std::vector<json> all) {
  Events e;
  for (json& j : all) {
    if (j.value("ev", "") == "meta") {
      e.unit_ms = j.value("unit_ms", 100);
    } else if (j.value("ev", "") == "final") {
      e.final.push_back(std::move(j));
    } else {
      e.timed.push_back(std::move(j));
    }
  }
  // Within one unit, a process's own events (starts, exits) and the supervisors' words
  // (reports, call results) are two streams, each kept in order; how they interleave is not
  // compared (on the real VM an exit and the report about it race to the recorder).
  auto stream = [](const json& j) { return j.value("ev", "") == "start" || j.value("ev", "") == "exit" ? 0 : 1; };
  std::stable_sort(e.timed.begin(), e.timed.end(), [&](const json& a, const json& b) {
    const auto ta = a.value("t", std::int64_t{0});
    const auto tb = b.value("t", std::int64_t{0});
    return ta != tb ? ta < tb : stream(a) < stream(b);
  });
  auto by_sup = [](const json& a, const json& b) { return a.value("sup", "") < b.value("sup", ""); };
  std::sort(e.final.begin(), e.final.end(), by_sup);
  return e;
}

std::vector<json> read_jsonl(const std::string& file) {
  std::ifstream f(file);
  if (!f) throw std::runtime_error("cannot read " + file);
  std::vector<json> out;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

/// The first difference, or "" when the two agree.
std::string first_difference(const Events& otp, const Events& sim) {
  const std::size_t n = std::max(otp.timed.size(), sim.timed.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string a = i < otp.timed.size() ? otp.timed[i].dump() : "(nothing)";
    const std::string b = i < sim.timed.size() ? sim.timed[i].dump() : "(nothing)";
    if (a != b) return "event " + std::to_string(i + 1) + ":\n  otp: " + a + "\n  sim: " + b;
  }
  const std::size_t m = std::max(otp.final.size(), sim.final.size());
  for (std::size_t i = 0; i < m; ++i) {
    const std::string a = i < otp.final.size() ? otp.final[i].dump() : "(nothing)";
    const std::string b = i < sim.final.size() ? sim.final[i].dump() : "(nothing)";
    if (a != b) return "final state:\n  otp: " + a + "\n  sim: " + b;
  }
  return {};
}

void print_all(const char* side, const std::vector<json>& xs) {
  std::cout << side << ":\n";
  for (const json& j : xs) std::cout << "  " << j.dump() << "\n";
}

/// The expected differences: `case | reason` a line (# comments).
std::map<std::string, std::string> read_expected(const std::string& file) {
  std::map<std::string, std::string> m;
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line.front() == '#') continue;
    const auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    m[trim(line.substr(0, bar))] = trim(line.substr(bar + 1));
  }
  return m;
}

int compare(const Scenario& s, const std::string& rec, const std::string& expected_file) {
  const Events otp = split(read_jsonl(rec));
  const Events sim = split(simulate(s, otp.unit_ms));
  const std::string diff = first_difference(otp, sim);
  const auto expected = expected_file.empty() ? std::map<std::string, std::string>{} : read_expected(expected_file);
  const auto it = expected.find(s.name);
  if (it != expected.end()) {
    if (diff.empty()) {
      std::cout << s.name << ": listed as an expected difference (" << it->second
                << ") but the simulator now matches OTP: remove it from the list\n";
      return 1;
    }
    std::cout << s.name << ": EXPECTED DIFFERENCE (" << it->second << ")\n" << diff << "\n";
    return 0;
  }
  if (diff.empty()) {
    std::cout << s.name << ": matches OTP (" << otp.timed.size() << " events, " << otp.final.size()
              << " supervisors at the end)\n";
    return 0;
  }
  std::cout << s.name << ": DIFFERS from OTP at " << diff << "\n";
  print_all("otp", otp.timed);
  print_all("sim", sim.timed);
  return 1;
}

Scenario load(const std::string& file) {
  lic::scenarios::ParseResult p = lic::scenarios::load_scenario(file);
  if (!p.ok()) {
    for (const auto& d : p.errors) std::cerr << lic::scenarios::format_diagnostic(file, d) << "\n";
    throw std::runtime_error("the case does not read");
  }
  return p.scenario;
}

int usage() {
  std::cerr << "usage: lic-conformance export CASE.yaml OUT.terms | sim CASE.yaml [--unit MS] |\n"
               "       compare CASE.yaml REC.jsonl [--expected LIST] | same A.jsonl B.jsonl\n";
  return 2;
}

int run(const std::vector<std::string>& a) {
  if (a.size() >= 3 && a[0] == "export") return export_case(load(a[1]), a[2]);
  if (a.size() >= 2 && a[0] == "sim") {
    const std::int64_t unit = a.size() >= 4 && a[2] == "--unit" ? std::stoll(a[3]) : 100;
    std::cout << json{{"ev", "meta"}, {"unit_ms", unit}}.dump() << "\n";
    for (const json& j : simulate(load(a[1]), unit)) std::cout << j.dump() << "\n";
    return 0;
  }
  if (a.size() >= 3 && a[0] == "compare") {
    const std::string expected = a.size() >= 5 && a[3] == "--expected" ? a[4] : "";
    return compare(load(a[1]), a[2], expected);
  }
  if (a.size() == 3 && a[0] == "same") {
    const std::string diff = first_difference(split(read_jsonl(a[1])), split(read_jsonl(a[2])));
    if (diff.empty()) return 0;
    std::cout << a[1] << " and " << a[2] << " differ at " << diff << "\n";
    return 1;
  }
  return usage();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "lic-conformance: " << e.what() << "\n";
    return 2;
  }
}
