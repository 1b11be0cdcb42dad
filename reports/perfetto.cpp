// trace.perfetto.json: the Chrome trace event format (a JSON object with traceEvents), which
// ui.perfetto.dev and chrome://tracing open. A process per node, a thread per tree path in tree
// order; a complete event ("X") per up interval, instant events ("i") for crashes, kills,
// restarts, escalations and faults; partitions on a "network" process with a thread per path
// between nodes (and global instants where they start and heal); pauses and outages on a
// "node state" thread of their node. Times in microseconds, fractional: the trace is in ns.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/escape.hpp"
#include "reports/run_report.hpp"
#include "reports/run_view.hpp"

namespace lic::reports {
namespace {

using Json = nlohmann::ordered_json;

double micros(Time t) { return static_cast<double>(t.ns) / 1000.0; }
double micros(Duration d) { return static_cast<double>(d.ns) / 1000.0; }

Json metadata(const char* name, int pid, std::int64_t tid, Json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

Json complete(const std::string& name, const char* cat, int pid, std::int64_t tid, Time from, Time to,
              Json args) {
  return {{"name", name},
          {"cat", cat},
          {"ph", "X"},
          {"ts", micros(from)},
          {"dur", micros(to - from)},
          {"pid", pid},
          {"tid", tid},
          {"args", std::move(args)}};
}

Json instant(const std::string& name, const char* cat, const char* scope, int pid, std::int64_t tid, Time at,
             Json args) {
  Json j = {{"name", name}, {"cat", cat}, {"ph", "i"}, {"s", scope}, {"ts", micros(at)}};
  if (pid != 0) j["pid"] = pid;
  if (tid != 0) j["tid"] = tid;
  j["args"] = std::move(args);
  return j;
}

class PerfettoWriter {
 public:
  explicit PerfettoWriter(RunView v) : v_(std::move(v)) {
    for (std::size_t i = 0; i < v_.nodes.size(); ++i) pid_of_[v_.nodes[i]] = static_cast<int>(i) + 1;
    network_pid_ = static_cast<int>(v_.nodes.size()) + 1;
    next_tid_ = static_cast<std::int64_t>(v_.lanes.size()) + 1;
  }

  std::vector<Json> events() {
    for (std::size_t i = 0; i < v_.nodes.size(); ++i) {
      add(metadata("process_name", pid_of_[v_.nodes[i]], 0, {{"name", v_.nodes[i]}}));
      add(metadata("process_sort_index", pid_of_[v_.nodes[i]], 0, {{"sort_index", i}}));
    }
    for (std::size_t i = 0; i < v_.lanes.size(); ++i) lane(v_.lanes[i], static_cast<std::int64_t>(i) + 1);
    for (const Mark& m : v_.world_marks) {
      add(instant(to_string(m.kind), to_string(m.kind), "g", 0, 0, m.at, {{"detail", m.detail}}));
    }
    for (const Band& b : v_.bands) band(b);
    return std::move(out_);
  }

 private:
  void add(Json j) { out_.push_back(std::move(j)); }

  int pid_of(const std::string& node) const {
    auto it = pid_of_.find(node);
    return it != pid_of_.end() ? it->second : network_pid_;
  }

  void lane(const Lane& l, std::int64_t tid) {
    const int pid = pid_of(l.node);
    add(metadata("thread_name", pid, tid, {{"name", l.path}}));
    add(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
    for (const properties::Interval& i : l.up)
      add(complete("up", "up", pid, tid, i.from, i.to, {{"path", l.path}}));
    for (const Mark& m : l.marks) {
      add(instant(to_string(m.kind), to_string(m.kind), "t", pid, tid, m.at,
                  {{"path", l.path}, {"detail", m.detail}}));
    }
  }

  void band(const Band& b) {
    if (b.kind == BandKind::partition) {
      auto [it, added] = network_tids_.try_emplace(b.label, next_tid_);
      if (added) {
        ++next_tid_;
        if (network_tids_.size() == 1) add(metadata("process_name", network_pid_, 0, {{"name", "network"}}));
        add(metadata("thread_name", network_pid_, it->second, {{"name", b.label}}));
      }
      add(complete("partition " + b.label, "partition", network_pid_, it->second, b.from, b.to,
                   Json::object()));
      add(instant("partition " + b.label, "partition", "g", 0, 0, b.from, Json::object()));
      add(instant("heal " + b.label, "partition", "g", 0, 0, b.to, Json::object()));
      return;
    }
    // "node2 paused" / "node2 down": the node is the label's first word.
    const std::string node = b.label.substr(0, b.label.find(' '));
    const int pid = pid_of(node);
    auto [it, added] = node_tids_.try_emplace(node, next_tid_);
    if (added) {
      ++next_tid_;
      add(metadata("thread_name", pid, it->second, {{"name", "node state"}}));
    }
    add(complete(b.label, to_string(b.kind), pid, it->second, b.from, b.to, Json::object()));
  }

  RunView v_;
  std::map<std::string, int> pid_of_;
  int network_pid_ = 0;
  std::int64_t next_tid_ = 1;
  std::map<std::string, std::int64_t> network_tids_;
  std::map<std::string, std::int64_t> node_tids_;
  std::vector<Json> out_;
};

}  // namespace

std::string perfetto_json(const RunReport& r) {
  const auto dump = [](const Json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::string out = "{\"traceEvents\":[";
  const std::vector<Json> events = PerfettoWriter(view_of(r)).events();
  for (std::size_t i = 0; i < events.size(); ++i) out += (i == 0 ? "\n" : ",\n") + dump(events[i]);
  const Json other = {{"scenario", r.scenario}, {"seed", r.seed}, {"trace_hash", hash_hex(r.trace_hash)}};
  out += "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":" + dump(other) + "}\n";
  return out;
}

}  // namespace lic::reports
