// summary.json and `run --format json`: the run's facts, verdicts and final state as one object.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/escape.hpp"
#include "reports/metrics_json.hpp"
#include "reports/run_report.hpp"

namespace lic::reports {
namespace {

using Json = nlohmann::ordered_json;

Json child_json(const supervision::ChildInfo& c) {
  Json j;
  j["id"] = c.id;
  if (c.pid) {
    j["state"] = "running";
    j["pid"] = c.pid.id;
  } else {
    j["state"] = c.restarting ? "restarting" : "undefined";
  }
  j["type"] = std::string(supervision::to_string(c.type));
  j["restart"] = std::string(supervision::to_string(c.restart));
  return j;
}

Json supervisor_json(const supervision::SupervisorSnapshot& s) {
  Json j;
  j["path"] = s.path;
  j["pid"] = s.pid.id;
  j["strategy"] = std::string(supervision::to_string(s.strategy));
  Json children = Json::array();
  for (const supervision::ChildInfo& c : s.children) children.push_back(child_json(c));
  j["children"] = std::move(children);
  j["counts"] = {{"specs", s.counts.specs},
                 {"active", s.counts.active},
                 {"supervisors", s.counts.supervisors},
                 {"workers", s.counts.workers}};
  return j;
}

Json lifecycle_json(const supervision::LifecycleSnapshot& l) {
  Json j;
  j["path"] = l.path;
  j["pid"] = l.pid.id;
  Json services = Json::array();
  for (const supervision::ServiceInfo& s : l.services) {
    Json x;
    x["name"] = s.name;
    x["state"] = supervision::to_string(s.state);
    if (s.pid) x["pid"] = s.pid.id;
    x["starts"] = s.starts;
    x["attempts"] = s.attempts;
    services.push_back(std::move(x));
  }
  j["services"] = std::move(services);
  return j;
}

Json final_json(const RunReport& r) {
  Json supervisors = Json::array();
  for (const auto& s : r.final_supervisors) supervisors.push_back(supervisor_json(s));
  Json lifecycles = Json::array();
  for (const auto& l : r.final_lifecycles) lifecycles.push_back(lifecycle_json(l));
  Json starts = Json::object();
  for (const auto& [path, n] : r.starts) starts[path] = n;  // std::map: path order
  Json j;
  j["supervisors"] = std::move(supervisors);
  j["lifecycles"] = std::move(lifecycles);
  j["starts"] = std::move(starts);
  j["alive"] = r.alive;
  return j;
}

}  // namespace

nlohmann::ordered_json metrics_json(const Metrics& m) {
  Json j = Json::object();
  for (const auto& [name, v] : m) {
    if (v.list) j[name] = v.values;
    else if (!v.values.empty()) j[name] = v.values.front();
  }
  return j;
}

bool read_metrics(const nlohmann::ordered_json& j, Metrics& out) {
  if (!j.is_object()) return false;
  for (const auto& [name, v] : j.items()) {
    MetricValue m;
    if (v.is_number()) {
      m.values.push_back(v.get<double>());
    } else if (v.is_array()) {
      m.list = true;
      for (const auto& x : v) {
        if (!x.is_number()) return false;
        m.values.push_back(x.get<double>());
      }
    } else {
      return false;
    }
    out[name] = std::move(m);
  }
  return true;
}

std::string format_witness(const Witness& w) {
  std::string who;
  for (const std::string& p : w.processes) who += (who.empty() ? "" : ", ") + p;
  return fmt::format("t={} event {}{}: {}", format_time(Time{w.t_ns}), w.event, who.empty() ? "" : " (" + who + ")", w.why);
}

std::string summary_json(const RunReport& r) {
  Json j;
  j["scenario"] = r.scenario;
  j["file"] = r.file;
  j["seed"] = r.seed;
  j["tie_break"] = r.tie_break;
  j["virtual_time_ns"] = r.end.ns;
  j["virtual_time"] = format_time(r.end);
  j["events"] = r.events;
  j["trace_hash"] = hash_hex(r.trace_hash);
  j["passed"] = r.passed;
  if (!r.stopped.empty()) j["stopped"] = r.stopped;  // a budget ended the run: the reports so far
  Json checks = Json::array();
  for (const CheckOutcome& c : r.checks) {
    Json check{{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}};
    if (!c.passed) check["kind"] = c.kind, check["roles"] = c.roles;
    if (!c.judged) check["judged"] = false;  // it holds: the run gave it nothing to judge
    if (c.margin) check["margin"] = *c.margin;
    if (c.witness) {
      check["witness"] = {{"t_ns", c.witness->t_ns}, {"event", c.witness->event}, {"processes", c.witness->processes},
                          {"why", c.witness->why}};
      if (!c.witness->related.empty()) check["witness"]["related"] = c.witness->related;
    }
    checks.push_back(std::move(check));
  }
  j["checks"] = std::move(checks);
  j["metrics"] = metrics_json(r.metrics);
  j["faults"] = Json::array();
  for (const FaultCount& f : r.faults)
    j["faults"].push_back({{"name", f.name}, {"kind", f.kind}, {"injected", f.injected}, {"skipped", f.skipped}});
  j["reproduce"] = r.reproduce;
  j["final"] = final_json(r);
  // Invalid UTF-8 (a reason's bytes, say) is replaced rather than thrown on.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace lic::reports
