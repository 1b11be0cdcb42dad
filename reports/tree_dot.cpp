// tree.dot: the declared tree as Graphviz draws it, each node coloured by its final state, with
// its restart count, and the supervisors that gave up marked.

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "reports/escape.hpp"
#include "reports/run_report.hpp"
#include "supervision/events.hpp"

namespace lic::reports {
namespace {

struct Look {
  std::string state;  ///< "running", "restarting", "not running", "gone", or a service's state
  const char* fill;
  const char* border;
};

const Look kRunning{"running", "#c8e6c9", "#2e7d32"};
const Look kGone{"gone", "#eeeeee", "#9e9e9e"};

Look down_look(std::string state) { return {std::move(state), "#ffcdd2", "#c62828"}; }

/// The final state of every path, from the snapshots and the list of live paths.
class FinalStates {
 public:
  explicit FinalStates(const RunReport& r) : alive_(r.alive.begin(), r.alive.end()) {
    for (const auto& s : r.final_supervisors) {
      if (s.strategy == supervision::Strategy::simple_one_for_one) continue;  // ids repeat
      for (const auto& c : s.children) children_[s.path + "/" + c.id] = c;
    }
    for (const auto& l : r.final_lifecycles) {
      for (const auto& s : l.services) services_[l.path + "/" + s.name] = s.state;
    }
  }

  Look of(const std::string& path) const {
    if (auto s = services_.find(path); s != services_.end()) return service_look(s->second);
    if (alive_.count(path) != 0) return kRunning;
    auto c = children_.find(path);
    if (c == children_.end()) return kGone;
    if (c->second.pid) return kRunning;
    return down_look(c->second.restarting ? "restarting" : "not running");
  }

  /// Live and started instances of a simple_one_for_one template: "path.N" paths.
  std::size_t alive_under(const std::string& template_path) const {
    std::size_t n = 0;
    for (const std::string& p : alive_) n += p.starts_with(template_path + ".") ? 1 : 0;
    return n;
  }

 private:
  static Look service_look(supervision::ServiceState s) {
    using supervision::ServiceState;
    switch (s) {
      case ServiceState::running:
        return kRunning;
      case ServiceState::failed:
        return down_look("failed");
      case ServiceState::starting:
        return {"starting", "#fff3c4", "#f9a825"};
      case ServiceState::stopping:
        return {"stopping", "#fff3c4", "#f9a825"};
      case ServiceState::inactive:
        return {"inactive", "#eceff1", "#78909c"};
      case ServiceState::stopped:
        return {"stopped", "#eceff1", "#78909c"};
    }
    return kGone;
  }

  std::set<std::string> alive_;
  std::map<std::string, supervision::ChildInfo> children_;
  std::map<std::string, supervision::ServiceState> services_;
};

std::map<std::string, std::size_t> escalations(const RunReport& r) {
  const Atom kEscalated = supervision::events::kReachedMax;
  std::map<std::string, std::size_t> out;
  if (r.trace == nullptr) return out;
  for (const TraceEvent& e : *r.trace) {
    if (e.kind == EventKind::system && e.name == kEscalated) ++out[std::string(e.label.name.text())];
  }
  return out;
}

class DotWriter {
 public:
  DotWriter(const RunReport& r, std::string_view when) : r_(r), when_(when), final_(r), escalated_(escalations(r)) {}

  std::string write() {
    out_ += "digraph letitcrash {\n";
    out_ +=
        fmt::format("  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, label=\"{}\"];\n",
                    dot_escape(fmt::format("{} (seed {}){}\ngreen running, red restarting or not running, "
                                           "grey gone; dashed arrows: depends_on",
                                           r_.scenario, r_.seed,
                                           when_.empty() ? std::string(r_.passed ? ": PASS" : ": FAIL") : " " + std::string(when_))));
    out_ += "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n";
    out_ += "  edge [arrowhead=none, color=\"#757575\"];\n";
    for (const ShapeNode& t : r_.trees) node(t, nullptr);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  void node(const ShapeNode& n, const ShapeNode* parent) {
    const Look look = final_.of(n.path);
    std::vector<std::string> lines{n.id.empty() ? n.path : n.id};
    if (!n.strategy.empty()) {
      lines.push_back(fmt::format("{} {}/{}", n.strategy, n.intensity, format_duration(n.period)));
    } else if (n.kind == "lifecycle") {
      lines.emplace_back("lifecycle");
    }
    if (!n.behaviour.empty()) lines.push_back(n.kind == "service" ? "service " + n.behaviour : n.behaviour);
    std::string spec = n.restart;
    if (!n.shutdown.empty()) spec += (spec.empty() ? "" : ", ") + std::string("shutdown ") + n.shutdown;
    if (n.significant) spec += (spec.empty() ? "" : ", ") + std::string("significant");
    if (!spec.empty()) lines.push_back(spec);
    if (!n.node.empty()) lines.push_back("on " + n.node);
    if (auto s = r_.starts.find(n.path); s != r_.starts.end() && s->second > 1) {
      lines.push_back(fmt::format("restarts: {}", s->second - 1));
    }
    const bool is_template = parent != nullptr && parent->strategy == "simple_one_for_one";
    if (is_template) {
      lines.push_back(fmt::format("template: {} running", final_.alive_under(n.path)));
    } else {
      lines.push_back(look.state);
    }
    auto esc = escalated_.find(n.path);
    if (esc != escalated_.end()) {
      lines.push_back(esc->second == 1 ? "escalated" : fmt::format("escalated x{}", esc->second));
    }
    std::string label;
    for (const std::string& l : lines) label += (label.empty() ? "" : "\n") + l;
    std::string style = n.kind == "supervisor" || n.kind == "lifecycle" ? "filled" : "rounded,filled";
    if (is_template) style += ",dashed";
    if (esc != escalated_.end()) style += ",bold";
    const char* shape = n.kind == "service" ? "component" : "box";
    out_ += fmt::format(
        "  \"{}\" [label=\"{}\", shape={}, style=\"{}\", fillcolor=\"{}\", color=\"{}\"{}];\n",
        dot_escape(n.path), dot_escape(label), shape, style, is_template ? "#ffffff" : look.fill,
        esc != escalated_.end() ? "#b71c1c" : look.border, esc != escalated_.end() ? ", penwidth=3" : "");
    if (parent != nullptr) {
      out_ += fmt::format("  \"{}\" -> \"{}\";\n", dot_escape(parent->path), dot_escape(n.path));
    }
    for (const ShapeNode& c : n.children) node(c, &n);
    // depends_on names siblings (services of the same lifecycle supervisor).
    for (const std::string& d : n.depends_on) {
      const std::string target = n.path.substr(0, n.path.rfind('/') + 1) + d;
      out_ += fmt::format(
          "  \"{}\" -> \"{}\" [style=dashed, color=\"#1565c0\", arrowhead=normal, constraint=false, "
          "tooltip=\"{}\"];\n",
          dot_escape(n.path), dot_escape(target), dot_escape(n.id + " depends on " + d));
    }
  }

  const RunReport& r_;
  std::string_view when_;  ///< not empty: a tree at a time, no verdict (the diagram command)
  FinalStates final_;
  std::map<std::string, std::size_t> escalated_;
  std::string out_;
};

}  // namespace

std::string tree_dot(const RunReport& r, std::string_view when) { return DotWriter(r, when).write(); }

}  // namespace lic::reports
