#include "reports/dataflow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "properties/conservation.hpp"
#include "properties/ingest_conservation.hpp"
#include "reports/escape.hpp"

namespace lic::reports {
namespace {

namespace line = properties::line;

/// Builds the nodes and edges by name, in the order first seen.
class FlowBuilder {
 public:
  std::size_t node(const std::string& name, const char* kind) {
    const auto [it, added] = index_.try_emplace(name, flow_.nodes.size());
    if (added) flow_.nodes.push_back({name, kind, 0});
    return it->second;
  }
  void count(std::size_t n, std::uint64_t k = 1) { flow_.nodes[n].count += k; }
  void edge(std::size_t from, std::size_t to, std::uint64_t k = 1) {
    const auto [it, added] = edges_.try_emplace({from, to}, flow_.edges.size());
    if (added) flow_.edges.push_back({from, to, 0});
    flow_.edges[it->second].count += k;
  }
  Flow& flow() { return flow_; }

 private:
  Flow flow_;
  std::map<std::string, std::size_t> index_;
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> edges_;
};

const std::int64_t* seq_of(const TraceEvent& e) { return e.field<std::int64_t>(line::kSeq); }

/// The names the line protocol's `to` uses, as process paths: a registered name is its
/// process's path while registered (a name no process holds stays as it is).
class Names {
 public:
  void on(const TraceEvent& e) {
    if (e.kind == EventKind::spawn && !e.label.name.empty()) path_[e.pid.id] = std::string(e.label.name.text());
    if (e.kind == EventKind::register_name) {
      const auto it = path_.find(e.pid.id);
      if (it != path_.end()) by_name_[std::string(e.tag.text())] = it->second;
    }
  }
  std::string resolve(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? name : it->second;
  }
  /// The path of process `p`, or `otherwise` when it has none.
  std::string path_of_pid(Pid p, const std::string& otherwise) const {
    const auto it = path_.find(p.id);
    if (it != path_.end()) return it->second;
    return otherwise.empty() ? "pid " + std::to_string(p.id) : otherwise;
  }
  std::string path_of(const TraceEvent& e) const {
    if (!e.label.name.empty()) return std::string(e.label.name.text());
    const auto it = path_.find(e.pid.id);
    return it == path_.end() ? "?" : it->second;
  }

 private:
  std::map<std::uint32_t, std::string> path_;
  std::map<std::string, std::string> by_name_;
};

std::string seq_list(const properties::Lines& l) {
  std::string out = "seq ";
  for (std::size_t i = 0; i < l.seqs.size(); ++i) out += (i == 0 ? "" : ", ") + std::to_string(l.seqs[i]);
  if (l.count > l.seqs.size()) out += fmt::format(", ... ({} in all)", l.count);
  return out;
}

/// Where a line was last (its latest line_emitted, line_sent or line_lost): the stage that held
/// it and, for a line_sent, where it was going. Atoms, so a line costs 12 bytes.
struct Holder {
  Atom where;
  Atom to;
  bool sent = false;
  bool known = false;
  std::string text() const {
    if (!known) return "?";
    return sent ? std::string(where.text()) + " -> " + std::string(to.text()) : std::string(where.text());
  }
};

/// Every line's last holder, by seq: a vector for the usual small non-negative seqs counted up
/// from 0, runs of consecutive seqs with one holder for the others. The vector grows only by
/// doubling what it holds (at least kStep), so one far seq (60,000,000 from a user's behaviour)
/// goes to the runs instead of allocating hundreds of megabytes. The far seqs (the built-in
/// pipeline's readers count from 10^9 x their pid) are kept as runs because most lines of a
/// reader end with the same holder (the stage that handed them to the sink): the index then
/// grows with the lines that ended elsewhere, not with every line, and every holder is kept.
class Holders {
 public:
  void set(std::int64_t seq, const Holder& h) {
    const auto i = static_cast<std::size_t>(seq);
    if (seq >= 0 && i < dense_.size()) {
      dense_[i] = h;
    } else if (seq >= 0 && seq < kDense && i < std::max(dense_.size() * 2, kStep)) {
      const auto old = static_cast<std::int64_t>(dense_.size());
      dense_.resize(std::max(i + 1, dense_.size() * 2));
      // What the runs held in the range the vector now covers moves into it.
      move_into_dense(old, static_cast<std::int64_t>(dense_.size()));
      dense_[i] = h;
    } else {
      set_far(seq, h);
    }
  }
  Holder get(std::int64_t seq) const {
    if (seq >= 0 && static_cast<std::size_t>(seq) < dense_.size()) return dense_[static_cast<std::size_t>(seq)];
    const auto it = run_of(seq);
    return it == runs_.end() ? Holder{} : it->second.holder;
  }

 private:
  struct Run {
    std::int64_t last;
    Holder holder;
  };
  using Runs = std::map<std::int64_t, Run>;  // first seq -> the run; disjoint
  static constexpr std::int64_t kDense = std::int64_t{1} << 26;
  static constexpr std::size_t kStep = std::size_t{1} << 16;
  static constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

  static bool same(const Holder& a, const Holder& b) {
    return a.known == b.known && a.sent == b.sent && a.where == b.where && a.to == b.to;
  }
  Runs::const_iterator run_of(std::int64_t seq) const {
    auto it = runs_.upper_bound(seq);
    if (it == runs_.begin()) return runs_.end();
    --it;
    return it->second.last >= seq ? it : runs_.end();
  }
  /// Cuts `seq` out of the run holding it (if any).
  void cut(std::int64_t seq) {
    const auto c = run_of(seq);
    if (c == runs_.end()) return;
    const std::int64_t first = c->first;
    const Run r = c->second;
    runs_.erase(c);
    if (first < seq) runs_.emplace(first, Run{seq - 1, r.holder});
    if (seq < r.last) runs_.emplace(seq + 1, Run{r.last, r.holder});
  }
  void set_far(std::int64_t seq, const Holder& h) {
    if (const auto c = run_of(seq); c != runs_.end() && same(c->second.holder, h)) return;
    cut(seq);
    std::int64_t first = seq, last = seq;
    if (seq != kMax)
      if (const auto next = runs_.find(seq + 1); next != runs_.end() && same(next->second.holder, h)) {
        last = next->second.last;
        runs_.erase(next);
      }
    if (seq != kMin)
      if (const auto prev = run_of(seq - 1); prev != runs_.end() && same(prev->second.holder, h)) first = prev->first;
    runs_[first] = Run{last, h};
  }
  void move_into_dense(std::int64_t from, std::int64_t to) {
    auto it = runs_.upper_bound(from);
    if (it != runs_.begin() && std::prev(it)->second.last >= from) --it;
    while (it != runs_.end() && it->first < to) {
      const std::int64_t first = it->first;
      const Run r = it->second;
      it = runs_.erase(it);
      for (std::int64_t s = std::max(first, from); s <= std::min(r.last, to - 1); ++s) dense_[static_cast<std::size_t>(s)] = r.holder;
      if (first < from) runs_.emplace(first, Run{from - 1, r.holder});
      if (r.last >= to) it = runs_.emplace(to, Run{r.last, r.holder}).first;
    }
  }

  std::vector<Holder> dense_;
  Runs runs_;
};

void add_line_losses(const Holders& holders, const properties::Conservation& c, FlowBuilder& b) {
  for (const auto& [why, l] : c.lost) {
    std::set<std::string> where;
    std::map<std::string, std::uint64_t> by_holder;  // for the diagram: the stage most listed
    for (const std::int64_t s : l.seqs) {
      const std::string h = holders.get(s).text();
      where.insert(h);
      ++by_holder[h.substr(0, h.find(" -> "))];
    }
    std::string where_text;
    for (const std::string& w : where) where_text += (where_text.empty() ? "" : "; ") + w;
    b.flow().losses.push_back({where_text, why, l.count, seq_list(l)});
    const auto top = std::max_element(by_holder.begin(), by_holder.end(),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
    const std::size_t lost = b.node("lost: " + why, "lost");
    b.count(lost, l.count);
    if (top != by_holder.end()) b.edge(b.node(top->first, "stage"), lost, l.count);
  }
  const std::pair<const char*, const properties::Lines*> odd[] = {
      {"in flight at the end", &c.in_flight}, {"in a live buffer at the end", &c.buffered},
      {"unaccounted (a violation)", &c.unaccounted},
      {"accounted twice (a violation)", &c.duplicated}, {"never emitted (a violation)", &c.unknown}};
  for (const auto& [why, l] : odd)
    if (l->count > 0) b.flow().losses.push_back({"", why, l->count, seq_list(*l)});
}

}  // namespace

/// The pass line_flow makes, one event at a time.
class LineFlowStream::Impl {
 public:
  void on(const TraceEvent& e) {
    names_.on(e);
    if (e.kind == EventKind::drop) {
      carrying_.erase(e.other.id);  // the carrying send failed (no receiver, a cut, a lost path): no handoff
      return;
    }
    if (e.kind == EventKind::send) {
      const auto it = carrying_.find(e.pid.id);
      if (it == carrying_.end() || e.other == e.pid) return;  // a timer to itself carries nothing
      const std::string to = names_.path_of_pid(e.other, it->second);
      const std::size_t n = b_.node(to, "stage");
      b_.count(n);
      b_.edge(b_.node(names_.path_of(e), "stage"), n);
      carrying_.erase(it);
      return;
    }
    if (e.kind != EventKind::system) return;
    if (e.name == line::kEmitted) {
      emitted_ = true;
      b_.count(b_.node(names_.path_of(e), "source"));
      carrying_[e.pid.id] = "";
    } else if (e.name == line::kSent) {
      b_.node(names_.path_of(e), "stage");
      carrying_[e.pid.id] = names_.resolve(e.text(line::kTo));
    } else if (e.name == line::kStored || e.name == line::kDeadLettered) {
      const std::size_t end = b_.node(e.name == line::kStored ? "stored" : "dead-lettered", "end");
      b_.count(end);
      b_.edge(b_.node(names_.path_of(e), "stage"), end);
    }
    if (e.name == line::kEmitted || e.name == line::kSent || e.name == line::kLost) {
      if (const std::int64_t* seq = seq_of(e)) {
        Holder h{Atom(names_.path_of(e)), {}, e.name == line::kSent, true};
        if (h.sent) h.to = Atom(names_.resolve(e.text(line::kTo)));
        holders_.set(*seq, h);
      }
    }
  }
  Flow finish(const properties::Conservation& c) {
    add_line_losses(holders_, c, b_);
    Flow f = std::move(b_.flow());
    f.what = "lines";
    f.summary = properties::describe(c);
    return f;
  }
  bool emitted() const { return emitted_; }

 private:
  FlowBuilder b_;
  Names names_;
  // A line_emitted or line_sent names the process's next kernel send to another process as the
  // line's carrier: that send's receiver is where the line went. A `drop` instead of that send
  // (the properties/conservation.hpp rule) means it went nowhere: conservation counts the loss.
  std::map<std::uint32_t, std::string> carrying_;  // pid -> the line's `to` ("" for an emitted line)
  Holders holders_;
  bool emitted_ = false;
};

LineFlowStream::LineFlowStream() : impl_(std::make_unique<Impl>()) {}
LineFlowStream::~LineFlowStream() = default;
void LineFlowStream::on(const TraceEvent& e) { impl_->on(e); }
bool LineFlowStream::emitted() const { return impl_->emitted(); }
Flow LineFlowStream::finish(const properties::Conservation& c) { return impl_->finish(c); }

namespace {

Flow line_flow(const EventLog& events) {
  LineFlowStream s;
  for (const TraceEvent& e : events) s.on(e);
  return s.finish(properties::check_conservation(events));
}

/// The ingest server's stages, in the order an event passes them.
Flow ingest_flow(const EventLog& events) {
  namespace in = properties::ingest;
  const properties::IngestConservation c = properties::check_ingest(events);
  std::uint64_t collected = 0, queued = 0;
  for (const TraceEvent& e : events) {
    if (e.kind != EventKind::system) continue;
    if (e.name == in::kCollected) ++collected;
    if (e.name == in::kQueued)
      if (const std::int64_t* n = e.field<std::int64_t>(in::kEvents)) queued += static_cast<std::uint64_t>(*n);
  }
  FlowBuilder b;
  const std::size_t http = b.node("HTTP ingress", "source");
  b.count(http, static_cast<std::uint64_t>(c.accepted + c.refused));
  const auto step = [&b](std::size_t from, const std::string& name, const char* kind, std::uint64_t n) {
    if (n == 0 && std::string_view(kind) != "stage") return from;  // an end nothing reached
    const std::size_t to = b.node(name, kind);
    b.count(to, n);
    if (n > 0) b.edge(from, to, n);
    return to;
  };
  step(http, "refused (503)", "end", static_cast<std::uint64_t>(c.refused));
  const std::size_t ch = step(http, "EventCh", "stage", static_cast<std::uint64_t>(c.accepted));
  const std::size_t batch = step(ch, "CollectLoop batches", "stage", collected);
  const std::size_t up = step(batch, "UploadCh", "stage", queued);
  step(up, "uploaded to S3", "end", static_cast<std::uint64_t>(c.uploaded));
  step(up, "DLQ files", "end", static_cast<std::uint64_t>(c.dlq));
  for (const properties::LostEvents& l : c.lost) {
    const std::size_t where = l.where == "EventCh" ? ch : l.where == "open batch" ? batch : up;
    step(where, "lost: " + l.why + " (" + l.where + ")", "lost", static_cast<std::uint64_t>(l.events));
    std::string items = fmt::format("events {}..{}", l.first, l.last);
    if (l.batch > 0) items += fmt::format(" (batch {})", l.batch);
    items += " at " + format_time(l.at);
    if (!l.detail.empty()) items += ": " + l.detail;
    b.flow().losses.push_back({l.where, l.why, static_cast<std::uint64_t>(l.events), items});
  }
  if (c.pending > 0) b.flow().losses.push_back({"in the server", "still running at the end", static_cast<std::uint64_t>(c.pending), ""});
  Flow f = std::move(b.flow());
  f.what = "events";
  f.summary = properties::describe(c);
  return f;
}

}  // namespace

Flow flow_of(const EventLog& events, const Flow* streamed_lines) {
  if (properties::has_ingest(events)) return ingest_flow(events);
  if (streamed_lines != nullptr) return *streamed_lines;
  for (const TraceEvent& e : events)
    if (e.kind == EventKind::system && e.name == line::kEmitted) return line_flow(events);
  return {};
}

namespace {

constexpr double kBoxW = 170, kBoxH = 46, kColW = 250, kRowH = 66, kMargin = 16;

/// Each node's column: its longest path from a source (a loss or an end one past its stage).
std::vector<std::size_t> columns(const Flow& f) {
  std::vector<std::size_t> col(f.nodes.size(), 0);
  for (std::size_t round = 0; round < f.nodes.size(); ++round) {  // relax: a DAG settles in |V| rounds
    bool moved = false;
    for (const FlowEdge& e : f.edges) {
      if (e.from == e.to || col[e.to] >= col[e.from] + 1) continue;
      col[e.to] = col[e.from] + 1;
      moved = true;
    }
    if (!moved) break;
  }
  return col;
}

const char* fill(const std::string& kind) {
  if (kind == "source") return "#e3f2fd";
  if (kind == "end") return "#e8f5e9";
  if (kind == "lost") return "#ffebee";
  return "#f5f5f5";
}

}  // namespace

std::string dataflow_html(const Flow& f) {
  if (f.empty()) return {};
  const std::vector<std::size_t> col = columns(f);
  std::vector<std::size_t> row(f.nodes.size(), 0);
  std::map<std::size_t, std::size_t> used;  // column -> rows taken
  for (std::size_t i = 0; i < f.nodes.size(); ++i) row[i] = used[col[i]]++;
  std::size_t rows = 1, cols = 1;
  for (const auto& [c, n] : used) rows = std::max(rows, n), cols = std::max(cols, c + 1);
  const double w = kMargin * 2 + kColW * static_cast<double>(cols - 1) + kBoxW;
  const double h = kMargin * 2 + kRowH * static_cast<double>(rows - 1) + kBoxH;
  const auto x = [&](std::size_t i) { return kMargin + kColW * static_cast<double>(col[i]); };
  const auto y = [&](std::size_t i) { return kMargin + kRowH * static_cast<double>(row[i]); };
  std::string svg = fmt::format("<svg id=\"dataflow\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
                                "aria-label=\"the data flow\">\n", w, h);
  svg += "<defs><marker id=\"df-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
         "orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#607d8b\"/></marker></defs>\n";
  for (const FlowEdge& e : f.edges) {
    const double x0 = x(e.from) + kBoxW, y0 = y(e.from) + kBoxH / 2, x1 = x(e.to), y1 = y(e.to) + kBoxH / 2;
    const bool lost = f.nodes[e.to].kind == "lost";
    svg += fmt::format("<path class=\"flow-edge\" d=\"M{:.1f},{:.1f}C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" fill=\"none\" "
                       "stroke=\"{}\" stroke-width=\"1.6\" marker-end=\"url(#df-arrow)\"><title>{}</title></path>\n",
                       x0, y0, (x0 + x1) / 2, y0, (x0 + x1) / 2, y1, x1, y1, lost ? "#c62828" : "#607d8b",
                       xml_escape(fmt::format("{} -> {}: {} {}", f.nodes[e.from].name, f.nodes[e.to].name, e.count, f.what)));
    // The count three quarters along the curve: near its target, so edges that leave one stage apart.
    const double lx = 0.015625 * x0 + 0.5625 * (x0 + x1) / 2 + 0.421875 * x1;
    const double ly = 0.15625 * y0 + 0.84375 * y1;
    svg += fmt::format("<text class=\"flow-count\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\" "
                       "fill=\"#37474f\">{}</text>\n", lx, ly - 4, e.count);
  }
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    const FlowNode& n = f.nodes[i];
    svg += fmt::format("<g class=\"flow-node {}\" data-name=\"{}\" data-count=\"{}\"><title>{}</title>"
                       "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" rx=\"6\" fill=\"{}\" stroke=\"#90a4ae\"/>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\">{}</text>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" font-weight=\"bold\" text-anchor=\"middle\">{}</text></g>\n",
                       n.kind, xml_escape(n.name), n.count, xml_escape(fmt::format("{}: {} {}", n.name, n.count, f.what)),
                       x(i), y(i), kBoxW, kBoxH, fill(n.kind), x(i) + kBoxW / 2, y(i) + 18,
                       xml_escape(truncate_left(n.name, 26)), x(i) + kBoxW / 2, y(i) + 36, n.count);
  }
  svg += "</svg>\n";
  std::string out = "<h2>Data flow</h2>\n<p>" + xml_escape(f.summary) + "</p>\n<div style=\"overflow-x:auto\">" + svg + "</div>\n";
  if (f.losses.empty()) return out + "<p>Nothing was lost.</p>\n";
  out += fmt::format("<table id=\"losses\">\n<tr><th>where</th><th>why</th><th>{}</th><th>which</th></tr>\n", f.what);
  for (const FlowLoss& l : f.losses)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", xml_escape(l.where), xml_escape(l.why),
                       l.count, xml_escape(l.items));
  return out + "</table>\n";
}

}  // namespace lic::reports
