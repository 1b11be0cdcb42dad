#include "reports/trace_format.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

namespace lic::reports {
namespace {

std::string field_text(const FieldValue& v) {
  switch (v.index()) {
    case 0: return std::to_string(std::get<std::int64_t>(v));
    case 1: return std::string(std::get<Atom>(v).text());
    case 2: return format_pid(std::get<Pid>(v));
    case 3: return format_duration(std::get<Duration>(v));
    default: return std::get<std::string>(v);
  }
}

nlohmann::json field_json(const FieldValue& v) {
  switch (v.index()) {
    case 0: return std::get<std::int64_t>(v);
    case 1: return std::string(std::get<Atom>(v).text());
    case 2: return std::get<Pid>(v).id;
    case 3: return std::get<Duration>(v).ns;
    default: return std::get<std::string>(v);
  }
}

bool has_reason(EventKind k) {
  return k == EventKind::exit || k == EventKind::exit_signal || k == EventKind::down ||
         k == EventKind::drop || k == EventKind::task_exit;
}

bool is_chan(EventKind k) {
  return k == EventKind::chan_make || k == EventKind::chan_send || k == EventKind::chan_recv ||
         k == EventKind::chan_close || k == EventKind::chan_wait || k == EventKind::chan_wake;
}

/// A channel event's size key: a channel's capacity when made, its length after anything else.
const char* chan_size_key(EventKind k) { return k == EventKind::chan_make ? "cap" : "len"; }

}  // namespace

std::string format_pid(Pid p) { return p ? fmt::format("<0.{}.0>", p.id) : "world"; }

std::string format_event_text(const TraceEvent& e) {
  std::string who = format_pid(e.pid);
  if (!e.label.name.empty()) who += fmt::format(" {}#{}", e.label.name.text(), e.label.instance);
  std::string line = fmt::format("{:>12}  {:<28} {:<11}", format_time(e.time), who,
                                 e.kind == EventKind::system ? std::string(e.name.text())
                                                             : std::string(to_string(e.kind)));
  if (e.other) line += " other=" + format_pid(e.other);
  if (!e.tag.empty()) line += fmt::format(" tag={}", e.tag.text());
  if (is_chan(e.kind)) line += fmt::format(" {}={}", chan_size_key(e.kind), e.msg);
  else if (e.msg != 0) line += fmt::format(" msg={}", e.msg);
  if (has_reason(e.kind)) line += " reason=" + to_string(e.reason);
  if (is_chan(e.kind) && !e.reason.detail.empty()) line += fmt::format(" op={}", e.reason.detail.text());
  for (const TraceField& f : e.fields()) line += fmt::format(" {}={}", f.key.text(), field_text(f.value));
  return line;
}

std::string format_event_json(const TraceEvent& e) {
  nlohmann::ordered_json j;
  j["seq"] = e.seq;
  j["t_ns"] = e.time.ns;
  j["kind"] = e.kind == EventKind::system ? std::string(e.name.text()) : std::string(to_string(e.kind));
  j["node"] = std::string(e.node.text());
  j["pid"] = e.pid.id;
  if (!e.label.name.empty()) {
    j["path"] = std::string(e.label.name.text());
    j["start"] = e.label.instance;
  }
  if (e.other) j["other"] = e.other.id;
  if (!e.tag.empty()) j["tag"] = std::string(e.tag.text());
  if (e.kind == EventKind::clock_change) {
    j["skew_ns"] = static_cast<std::int64_t>(e.msg);
    j["drift_ppm"] = static_cast<std::int64_t>(e.other.id);
    return j.dump();
  }
  if (is_chan(e.kind)) j[chan_size_key(e.kind)] = e.msg;
  else if (e.msg != 0) j["msg"] = e.msg;
  if (has_reason(e.kind)) j["reason"] = to_string(e.reason);
  if (is_chan(e.kind) && !e.reason.detail.empty()) j["op"] = std::string(e.reason.detail.text());
  if (e.field_count != 0) {
    nlohmann::ordered_json f = nlohmann::ordered_json::object();
    for (const TraceField& x : e.fields()) f[std::string(x.key.text())] = field_json(x.value);
    j["fields"] = std::move(f);
  }
  return j.dump();
}

void JsonlSink::on_event(const TraceEvent& e) { out_ << format_event_json(e) << '\n'; }

}  // namespace lic::reports
