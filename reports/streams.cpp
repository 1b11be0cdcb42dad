#include "reports/streams.hpp"

#include <algorithm>

#include "reports/atomic_file.hpp"
#include "reports/trace_format.hpp"

namespace lic::reports {

namespace {

void collect(const ShapeNode& n, std::vector<std::string>& into) {
  into.push_back(n.path);
  for (const ShapeNode& c : n.children) collect(c, into);
}

}  // namespace

LanePaths::LanePaths(const std::vector<ShapeNode>& trees) : any_(trees.empty()) {
  for (const ShapeNode& t : trees) {
    collect(t, declared_);
    roots_.push_back(t.path);
  }
  std::sort(declared_.begin(), declared_.end());
}

bool LanePaths::operator()(std::string_view path) const {
  if (any_) return true;
  const auto at = std::lower_bound(declared_.begin(), declared_.end(), path);
  if (at != declared_.end() && *at == path) return true;
  return std::any_of(roots_.begin(), roots_.end(), [path](const std::string& r) {
    return path.size() > r.size() && path.starts_with(r) && path[r.size()] == '/';
  });
}

void MessageFlowStream::on(const TraceEvent& e) {
  const auto where = [this](Pid p) { return p.id < where_.size() && !where_[p.id].path.empty() ? &where_[p.id] : nullptr; };
  if (e.kind == EventKind::spawn && !e.label.name.empty()) {
    if (is_lane_(e.label.name.text())) {
      if (where_.size() <= e.pid.id) where_.resize(e.pid.id + 1);
      where_[e.pid.id] = Where{e.label.name, e.node};
    }
  } else if (e.kind == EventKind::send) {
    const Where* a = where(e.pid);
    if (a == nullptr) return;  // its sender has no lane: never a flow
    const Where* b = where(e.other);
    if (b == nullptr) return;  // nor its receiver (spawned before it was sent to): never a flow
    if (a->node == b->node) flow(Sent{e.tag, e.time, e.pid}, e.time, e.other);
    else sent_[e.msg] = Sent{e.tag, e.time, e.pid};
  } else if (e.kind == EventKind::deliver) {
    if (auto s = sent_.find(e.msg); s != sent_.end()) {
      flow(s->second, e.time, e.pid);
      if (!duplicates_) sent_.erase(s);  // its only copy landed
    }
  } else if (e.kind == EventKind::drop) {
    sent_.erase(e.msg);
  }
}

void MessageFlowStream::flow(const Sent& s, Time at, Pid to) {
  if (s.from == to || s.from.id >= where_.size() || to.id >= where_.size()) return;
  const Where& a = where_[s.from.id];
  const Where& b = where_[to.id];
  if (a.path.empty() || b.path.empty()) return;
  if (flows_.size() >= kMax) {
    ++omitted_;
    return;
  }
  flows_.push_back({s.tag, s.at, at, a.path, a.node, b.path, b.node});
}

TraceFileStream::TraceFileStream(const std::filesystem::path& path, const std::string& header)
    : w_(std::make_unique<AtomicFileWriter>(path, true)) {
  if (!header.empty()) {  // how to run it again (replay)
    w_->buffer() += header;
    w_->buffer() += '\n';
  }
}

TraceFileStream::~TraceFileStream() = default;

void TraceFileStream::on(const TraceEvent& e) {
  std::string& buf = w_->buffer();
  append_event_json(buf, e);
  buf += '\n';
  w_->flush_if_full();
}

}  // namespace lic::reports
