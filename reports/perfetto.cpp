// trace.perfetto.json: the Chrome trace event format (a JSON object with traceEvents), which
// ui.perfetto.dev and chrome://tracing open. A process per node, a thread per tree path in tree
// order; a complete event ("X") per up interval, instant events ("i") for crashes, kills,
// restarts, escalations and faults; partitions on a "network" process with a thread per path
// between nodes (and global instants where they start and heal); pauses and outages on a
// "node state" thread of their node; link-fault windows (loss, duplicate, reorder, clog) on the
// "network" process too. Messages between two lanes are flow events (an arrow from the send on
// the sender's thread to the delivery on the receiver's: "s" then "f" with the same id), at
// most MessageFlowStream::kMax of them, in trace order (otherData says how many were left out). Times in
// microseconds, fractional: the trace is in ns.

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/atomic_file.hpp"
#include "reports/escape.hpp"
#include "reports/run_report.hpp"
#include "reports/run_view.hpp"
#include "reports/streams.hpp"

namespace lic::reports {
namespace {

using Json = nlohmann::ordered_json;

std::string dump(const Json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

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
  /// With `file`, what is rendered goes out to it a chunk at a time (the document is never held
  /// whole: 12 MB for the bench pipeline's 24 virtual hours); without, it gathers in take().
  explicit PerfettoWriter(const RunView& v, AtomicFileWriter* file = nullptr) : v_(v), file_(file) {
    for (std::size_t i = 0; i < v_.nodes.size(); ++i) pid_of_[v_.nodes[i]] = static_cast<int>(i) + 1;
    network_pid_ = static_cast<int>(v_.nodes.size()) + 1;
    next_tid_ = static_cast<std::int64_t>(v_.lanes.size()) + 1;
  }

  /// The nodes, lanes, marks and bands.
  void draw() {
    for (std::size_t i = 0; i < v_.nodes.size(); ++i) {
      add(metadata("process_name", pid_of_[v_.nodes[i]], 0, {{"name", v_.nodes[i]}}));
      add(metadata("process_sort_index", pid_of_[v_.nodes[i]], 0, {{"sort_index", i}}));
    }
    for (std::size_t i = 0; i < v_.lanes.size(); ++i) lane(v_.lanes[i], static_cast<std::int64_t>(i) + 1);
    for (const Mark& m : v_.world_marks) {
      add(instant(to_string(m.kind), to_string(m.kind), "g", 0, 0, m.at, {{"detail", m.detail}}));
    }
    for (const Band& b : v_.bands) band(b);
  }

  /// The events rendered and not yet spilled to the file, each after a "\n" (the first) or ",\n".
  std::string take() { return std::exchange(out_, {}); }

  /// Flow events for the messages between two processes with lanes (MessageFlowStream's).
  /// Returns how many were left out past MessageFlowStream::kMax.
  std::uint64_t flows(const MessageFlowStream& m) {
    std::map<Atom, std::int64_t> tid_of_path;
    for (std::size_t i = 0; i < v_.lanes.size(); ++i) tid_of_path[Atom(v_.lanes[i].path)] = static_cast<std::int64_t>(i) + 1;
    std::uint64_t next = 1;
    for (const MessageFlow& f : m.flows()) {
      flow_event(f.tag, "s", next, f.sent, pid_of(std::string(f.from_node.text())), tid_of_path.at(f.from_path));
      flow_event(f.tag, "f\",\"bp\":\"e", next, f.landed, pid_of(std::string(f.to_node.text())), tid_of_path.at(f.to_path));
      ++next;
    }
    return m.omitted();
  }

 private:
  void separate() {
    if (file_ != nullptr && out_.size() >= AtomicFileWriter::kChunkBytes) {
      file_->write(out_);
      out_.clear();
    }
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
  }
  void add(const Json& j) {
    separate();
    out_ += dump(j);
  }

  /// A flow event written straight into the output, byte for byte what add() would write for
  /// {"name", "cat":"message", "ph", "id", "ts", "pid", "tid"}: up to 100,000 of them, where
  /// building each as a Json object was most of the file's cost. `ph` may carry `","bp":"e`.
  void flow_event(Atom tag, const char* ph, std::uint64_t id, Time at, int pid, std::int64_t tid) {
    separate();
    out_ += "{\"name\":";
    append_string(tag.empty() ? std::string_view("message") : tag.text());
    out_ += ",\"cat\":\"message\",\"ph\":\"";
    out_ += ph;
    fmt::format_to(std::back_inserter(out_), "\",\"id\":{},\"ts\":", id);
    append_number(micros(at));
    fmt::format_to(std::back_inserter(out_), ",\"pid\":{},\"tid\":{}}}", pid, tid);
  }

  /// A JSON string as dump() writes it: plain printable ASCII as it is, anything else through
  /// nlohmann (its escapes, and U+FFFD for bad UTF-8).
  void append_string(std::string_view text) {
    for (const char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
        out_ += dump(Json(std::string(text)));
        return;
      }
    }
    out_ += '"';
    out_ += text;
    out_ += '"';
  }

  /// A number as dump() writes a double: nlohmann's own shortest-digits formatter.
  void append_number(double x) {
    if (!std::isfinite(x)) {
      out_ += "null";
      return;
    }
    std::array<char, 64> buf{};
    char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), x);
    out_.append(buf.data(), static_cast<std::size_t>(end - buf.data()));
  }

  int pid_of(const std::string& node) const {
    auto it = pid_of_.find(node);
    return it != pid_of_.end() ? it->second : network_pid_;
  }

  void lane(const Lane& l, std::int64_t tid) {
    const int pid = pid_of(l.node);
    add(metadata("thread_name", pid, tid, {{"name", l.path}}));
    add(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
    for (const properties::Interval& i : l.up) up_event(l.path, pid, tid, i);
    for (const Mark& m : l.marks) mark_event(m, l.path, pid, tid);
  }

  /// A lane's up interval written straight into the output, byte for byte what add() would
  /// write for complete("up", "up", pid, tid, from, to, {{"path", path}}): a child restarted a
  /// million times has a million of them.
  void up_event(std::string_view path, int pid, std::int64_t tid, const properties::Interval& i) {
    separate();
    out_ += R"({"name":"up","cat":"up","ph":"X","ts":)";
    append_number(micros(i.from));
    out_ += ",\"dur\":";
    append_number(micros(i.to - i.from));
    fmt::format_to(std::back_inserter(out_), R"(,"pid":{},"tid":{},"args":{{"path":)", pid, tid);
    append_string(path);
    out_ += "}}";
  }

  /// A lane's mark, likewise: instant(kind, kind, "t", pid, tid, at, {{"path"}, {"detail"}}).
  void mark_event(const Mark& m, std::string_view path, int pid, std::int64_t tid) {
    const std::string_view kind = to_string(m.kind);
    separate();
    out_ += R"({"name":)";
    append_string(kind);
    out_ += R"(,"cat":)";
    append_string(kind);
    out_ += R"(,"ph":"i","s":"t","ts":)";
    append_number(micros(m.at));
    if (pid != 0) fmt::format_to(std::back_inserter(out_), R"(,"pid":{})", pid);
    if (tid != 0) fmt::format_to(std::back_inserter(out_), R"(,"tid":{})", tid);
    out_ += R"(,"args":{"path":)";
    append_string(path);
    out_ += R"(,"detail":)";
    append_string(m.detail);
    out_ += "}}";
  }

  /// A thread of the "network" process, named `name`.
  std::int64_t network_thread(const std::string& name) {
    auto [it, added] = network_tids_.try_emplace(name, next_tid_);
    if (added) {
      ++next_tid_;
      if (network_tids_.size() == 1) add(metadata("process_name", network_pid_, 0, {{"name", "network"}}));
      add(metadata("thread_name", network_pid_, it->second, {{"name", name}}));
    }
    return it->second;
  }

  void band(const Band& b) {
    if (b.kind == BandKind::loss || b.kind == BandKind::duplicate || b.kind == BandKind::reorder || b.kind == BandKind::clog) {
      // A link fault's window: the label is the fault's name.
      add(complete(std::string(to_string(b.kind)) + " " + b.label, to_string(b.kind), network_pid_,
                   network_thread("fault " + b.label), b.from, b.to, Json::object()));
      return;
    }
    if (b.kind == BandKind::history) {  // a failing linearizable's operation, on a track of its own
      add(complete(b.label, "history", network_pid_, network_thread("history"), b.from, b.to, Json::object()));
      return;
    }
    if (b.kind == BandKind::partition) {
      add(complete("partition " + b.label, "partition", network_pid_, network_thread(b.label), b.from, b.to,
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

  const RunView& v_;
  AtomicFileWriter* file_;
  bool first_ = true;
  std::map<std::string, int> pid_of_;
  int network_pid_ = 0;
  std::int64_t next_tid_ = 1;
  std::map<std::string, std::int64_t> network_tids_;
  std::map<std::string, std::int64_t> node_tids_;
  std::string out_;
};

}  // namespace

namespace {
/// The whole document: its head, the events (spilled to `file` as they go when there is one)
/// and its tail, into `out` (what is left of it, with a file).
void render(const RunReport& r, const RunView& v, std::string& out, AtomicFileWriter* file) {
  out += "{\"traceEvents\":[";
  if (file != nullptr) {
    file->write(out);
    out.clear();
  }
  PerfettoWriter w(v, file);
  w.draw();
  std::uint64_t omitted = 0;
  if (r.message_flows != nullptr) {
    omitted = w.flows(*r.message_flows);
  } else if (r.trace != nullptr) {
    std::set<std::string, std::less<>> lanes;
    for (const Lane& l : v.lanes) lanes.insert(l.path);
    MessageFlowStream m([&lanes](std::string_view path) { return lanes.contains(path); });
    for (const TraceEvent& e : *r.trace) m.on(e);
    omitted = w.flows(m);
  }
  out += w.take();
  Json other = {{"scenario", r.scenario}, {"seed", r.seed}, {"trace_hash", hash_hex(r.trace_hash)}};
  if (omitted > 0) other["flows_omitted"] = omitted;
  out += "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":" + dump(other) + "}\n";
}
}  // namespace

std::string perfetto_json(const RunReport& r) { return perfetto_json(r, view_of(r)); }

std::string perfetto_json(const RunReport& r, const RunView& v) {
  std::string out;
  render(r, v, out, nullptr);
  return out;
}

std::string write_perfetto_json(const RunReport& r, const RunView& v, const std::filesystem::path& path) {
  AtomicFileWriter file(path);
  if (!file.error().empty()) return file.error();
  std::string rest;
  render(r, v, rest, &file);
  file.write(rest);
  return file.commit();
}

}  // namespace lic::reports
