// timeline.svg: a lane per tree path over [0, end): green while up, pale red while down after
// its first start, marks for crashes, kills, restarts, escalations and faults, shaded bands for
// partitions, node pauses and node outages, a time axis and a legend. Sized for 10 lanes and
// still usable at hundreds: lanes shrink to a minimum height, labels are cut with the full path
// in a tooltip, and marks and bars closer than a pixel are merged (marks over a wider span when a
// lane would still have too many) so a long run stays small.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>
#include <optional>
#include <string>
#include <vector>

#include "reports/escape.hpp"
#include "reports/run_report.hpp"
#include "reports/run_view.hpp"
#include "reports/time_axis.hpp"

namespace lic::reports {
namespace {

constexpr double kWidth = 1200;
constexpr double kPlotLeft = 248;
constexpr double kPlotRight = 1164;  // room for the last tick's label
constexpr double kLabelWidth = 232;
constexpr double kBandTop = 50;  // bands shade from here down through the lanes
constexpr double kBandLabelY = 62;
constexpr double kWorldMarkY = 71;  // faults that name no process
constexpr double kAxisY = 84;
constexpr double kLanesTop = 92;
constexpr double kBottom = 12;
constexpr double kLaneHeightMax = 24;
constexpr double kLaneHeightMin = 10;
constexpr double kLanesHeightGoal = 720;  // lanes shrink to fit this, down to the minimum
constexpr std::size_t kMarksPerLaneMax = 200;
constexpr double kMergePx = 1.0;

const char* const kStyle =
    "<style>\n"
    "text{font-family:Helvetica,Arial,sans-serif;fill:#212121}\n"
    ".title{font-size:14px;font-weight:bold}.legend,.tick,.bandlabel{font-size:11px;fill:#424242}\n"
    ".stripe{fill:#f4f6f8}.up{fill:#43a047}.down{fill:#ef9a9a}.grid{stroke:#dcdcdc;stroke-width:1}\n"
    ".crash{fill:#d32f2f;stroke:#7f0000;stroke-width:.5}.kill{fill:none;stroke:#212121;stroke-width:1.6}\n"
    ".restart{fill:#1e88e5;stroke:#0d47a1;stroke-width:.5}.escalation{fill:#8e24aa;stroke:#4a148c;stroke-"
    "width:.8}\n"
    ".fault{fill:#fb8c00;stroke:#e65100;stroke-width:.5}.operation{fill:none;stroke:#c2185b;stroke-width:2}\n"
    ".partition{fill:#7e57c2;opacity:.16}.pause{fill:#fdd835;opacity:.28}.node_down{fill:#616161;opacity:.22}"
    "\n"
    ".draining{fill:#ff7043;opacity:.18}.loss{fill:#e53935;opacity:.10}.duplicate{fill:#1e88e5;opacity:.10}"
    ".reorder{fill:#8d6e63;opacity:.14}.clog{fill:#6d4c41;opacity:.16}.history{fill:#c2185b;opacity:.30}.backlog{fill:#26a69a;stroke:#00695c;stroke-width:.6;opacity:.85}.lane.backlog{font-style:italic}\n"
    ".believed{fill:#ffb300}.write{stroke:#37474f;stroke-width:1}.unsafe{stroke:#d50000;stroke-width:2}.unsafe_sw{fill:#d50000}"
    ".write_sw{fill:#37474f}.holder{stroke:#ffffff;stroke-width:.5}.holdertext{font-size:10px;fill:#ffffff}.lane.role{font-weight:bold}\n"
    "</style>\n";

std::string num(double v) { return fmt::format("{:.1f}", v); }

class Scale {
 public:
  explicit Scale(Time end) : end_ns_(end.ns > 0 ? static_cast<double>(end.ns) : 1.0) {}
  double x(Time t) const {
    return kPlotLeft + static_cast<double>(t.ns) / end_ns_ * (kPlotRight - kPlotLeft);
  }

 private:
  double end_ns_;
};

std::string span_text(Time from, Time to) { return format_time(from) + " \xe2\x80\x93 " + format_time(to); }

/// One marker as drawn: marks of one kind closer than a pixel share it.
struct Drawn {
  MarkKind kind;
  double x;
  Time first;
  Time last;
  std::size_t count = 1;
  std::string detail;
};

std::string marker(MarkKind k, double x, double cy, double s, const std::string& cls) {
  const std::string c = fmt::format("{} {}", cls, to_string(k));
  switch (k) {
    case MarkKind::crash:
      return fmt::format("<path class=\"{}\" d=\"M{},{}h{}l{},{}z\">", c, num(x - s), num(cy - s), num(2 * s),
                         num(-s), num(2 * s));
    case MarkKind::kill:
      return fmt::format("<path class=\"{}\" d=\"M{},{}l{},{}m0,{}l{},{}\">", c, num(x - s), num(cy - s),
                         num(2 * s), num(2 * s), num(-2 * s), num(-2 * s), num(2 * s));
    case MarkKind::restart:
      return fmt::format("<circle class=\"{}\" cx=\"{}\" cy=\"{}\" r=\"{}\">", c, num(x), num(cy),
                         num(s * 0.8));
    case MarkKind::escalation:
      return fmt::format("<path class=\"{}\" d=\"M{},{}l{},{}l{},{}l{},{}z\">", c, num(x), num(cy - 1.4 * s),
                         num(1.4 * s), num(1.4 * s), num(-1.4 * s), num(1.4 * s), num(-1.4 * s),
                         num(-1.4 * s));
    case MarkKind::fault:
      return fmt::format("<path class=\"{}\" d=\"M{},{}h{}l{},{}z\">", c, num(x - s), num(cy + s), num(2 * s),
                         num(-s), num(-2 * s));
    case MarkKind::operation:  // a tick across the lane
      return fmt::format("<path class=\"{}\" d=\"M{},{}v{}\">", c, num(x), num(cy - 1.4 * s), num(2.8 * s));
  }
  return {};
}

const char* closing(MarkKind k) { return k == MarkKind::restart ? "</circle>" : "</path>"; }

std::string marker_title(const Drawn& d) {
  if (d.count == 1) return fmt::format("{} at {}: {}", to_string(d.kind), format_time(d.first), d.detail);
  return fmt::format("{} x {}, {}", d.count, to_string(d.kind), span_text(d.first, d.last));
}

/// Marks merged per kind when closer than `width` pixels.
std::vector<Drawn> merge_within(const std::vector<Mark>& marks, const Scale& sc, double width) {
  std::vector<Drawn> out;
  std::array<std::optional<std::size_t>, kMarkKinds> last{};  // by MarkKind: the kind's latest marker
  for (const Mark& m : marks) {
    const double x = sc.x(m.at);
    auto& l = last[static_cast<std::size_t>(m.kind)];
    if (l && x - out[*l].x < width) {
      ++out[*l].count;
      out[*l].last = m.at;
      continue;
    }
    l = out.size();
    out.push_back({m.kind, x, m.at, m.at, 1, m.detail});
  }
  return out;
}

/// Marks merged below a pixel; when that leaves more than kMarksPerLaneMax, merged over twice
/// the width, and so on, so a busy lane is drawn over its whole length at a coarser grain.
/// Ordered for drawing: restarts first, then operations, faults, crashes, kills, escalations on top (a
/// crash and its restart fall on the same pixel; the crash is what should show).
std::vector<Drawn> merge_marks(const std::vector<Mark>& marks, const Scale& sc) {
  std::vector<Drawn> out = merge_within(marks, sc, kMergePx);
  for (double width = 2 * kMergePx; out.size() > kMarksPerLaneMax; width *= 2)
    out = merge_within(marks, sc, width);
  auto layer = [](MarkKind k) {
    switch (k) {
      case MarkKind::restart:
        return 0;
      case MarkKind::operation:
        return 1;
      case MarkKind::fault:
        return 2;
      case MarkKind::crash:
        return 3;
      case MarkKind::kill:
        return 4;
      case MarkKind::escalation:
        return 5;
    }
    return 0;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&layer](const Drawn& a, const Drawn& b) { return layer(a.kind) < layer(b.kind); });
  return out;
}

class TimelineWriter {
 public:
  TimelineWriter(const RunReport& r, const RunView& v) : r_(r), v_(v), sc_(v_.end) {
    const std::size_t all = v_.lanes.size() + v_.backlogs.size() + role_lanes();
    const double n = static_cast<double>(std::max<std::size_t>(all, 1));
    lane_h_ = std::clamp(std::floor(kLanesHeightGoal / n), kLaneHeightMin, kLaneHeightMax);
    lanes_bottom_ = kLanesTop + lane_h_ * static_cast<double>(all);
    height_ = lanes_bottom_ + kBottom + (v_.lanes.empty() ? 24 : 0);
  }

  std::string write() {
    out_ += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n",
        kWidth, height_);
    out_ += kStyle;
    out_ +=
        fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", kWidth, height_);
    out_ += fmt::format(
        "<text class=\"title\" x=\"8\" y=\"20\">{}</text>\n",
        xml_escape(fmt::format("{} \xe2\x80\x94 seed {}, tie-break {}, {} virtual, {} \xe2\x80\x94 {}",
                               r_.scenario, r_.seed, r_.tie_break, format_time(v_.end),
                               v_.lanes.size() == 1 ? "1 lane" : fmt::format("{} lanes", v_.lanes.size()),
                               r_.passed ? "PASS" : "FAIL")));
    legend();
    stripes();
    axis();
    for (std::size_t i = 0; i < v_.lanes.size(); ++i) lane(i);
    for (std::size_t i = 0; i < v_.backlogs.size(); ++i) backlog(v_.backlogs[i], tree_lane_y(v_.lanes.size() + i));
    // The leader-election lanes go first: they are what such a run is about.
    for (std::size_t i = 0; i < v_.leaders.size(); ++i) leader_lane(v_.leaders[i], lane_y(i));
    if (!v_.leaders.empty()) holder_lane(lane_y(v_.leaders.size()));
    bands();
    world_marks();
    if (v_.lanes.empty())
      out_ += fmt::format("<text class=\"legend\" x=\"8\" y=\"{}\">no tree paths to draw</text>\n",
                          num(kLanesTop + 16));
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  double lane_y(std::size_t i) const { return kLanesTop + lane_h_ * static_cast<double>(i); }
  /// The i-th tree (or backlog) lane: after the role lanes.
  double tree_lane_y(std::size_t i) const { return lane_y(role_lanes() + i); }
  /// A lane per leader-election node and one for the database's holder.
  std::size_t role_lanes() const { return v_.leaders.empty() ? 0 : v_.leaders.size() + 1; }

  void role_label(const std::string& text, const std::string& tip, double y) {
    const double font = std::clamp(lane_h_ - 4, 8.0, 12.0);
    out_ += fmt::format("<text class=\"lane role\" x=\"8\" y=\"{}\" font-size=\"{}\"><title>{}</title>{}</text>\n",
                        num(y + lane_h_ / 2 + font * 0.35), num(font), xml_escape(tip),
                        xml_escape(truncate_right(text, static_cast<std::size_t>(kLabelWidth / (font * 0.6)))));
  }

  /// One tick per pixel column that saw a write (a long run's thousands of writes stay small).
  void ticks(const std::vector<Time>& at, const char* cls, double y0, double y1, const std::string& what) {
    double last = -1;
    for (Time t : at) {
      const double x = std::floor(sc_.x(t));
      if (x == last) continue;
      last = x;
      out_ += fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"><title>{}</title></line>\n", cls, num(x),
                          num(y0), num(x), num(y1), xml_escape(what + " at " + format_time(t)));
    }
  }

  /// When the node believed it led (amber), its accepted writes (grey ticks) and those made while
  /// another held the lock or lease (red): a split-brain shows as two amber bars with ticks.
  void leader_lane(const LeaderLane& l, double y) {
    role_label("leader? " + l.node, l.node + ": believes it leads (leader_belief), and its leader writes", y);
    const double h = lane_h_ * 0.5, top = y + lane_h_ * 0.15;
    for (const properties::Interval& i : l.believed) {
      out_ += fmt::format("<rect class=\"believed\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>\n",
                          num(sc_.x(i.from)), num(top), num(std::max(sc_.x(i.to) - sc_.x(i.from), 0.5)), num(h),
                          xml_escape(l.node + " believes it leads, " + span_text(i.from, i.to)));
    }
    ticks(l.writes, "write", top + h, y + lane_h_ - 1, l.node + ": accepted leader write");
    ticks(l.unsafe, "unsafe", y + 1, y + lane_h_ - 1, l.node + ": write while another node held the leadership");
  }

  /// The database's lock (or lease) holder: a colour per node, its name where there is room.
  void holder_lane(double y) {
    role_label("DB lock holder", "who the database had as leader: the lock's session, or the lease", y);
    static constexpr std::array<const char*, 6> kColours{"#5e35b1", "#00897b", "#6d4c41", "#3949ab", "#c0ca33", "#8d6e63"};
    for (const HolderSpan& s : v_.holders) {
      std::size_t ix = 0;
      while (ix < v_.leaders.size() && v_.leaders[ix].node != s.node) ++ix;
      const double x0 = sc_.x(s.from), w = std::max(sc_.x(s.to) - x0, 0.5);
      out_ += fmt::format("<rect class=\"holder\" fill=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>\n",
                          kColours[ix % kColours.size()], num(x0), num(y + lane_h_ * 0.15), num(w), num(lane_h_ * 0.7),
                          xml_escape(s.node + " holds it, " + span_text(s.from, s.to)));
      if (w >= 8.0 * static_cast<double>(s.node.size()))
        out_ += fmt::format("<text class=\"holdertext\" x=\"{}\" y=\"{}\">{}</text>\n", num(x0 + 2), num(y + lane_h_ * 0.7),
                            xml_escape(s.node));
    }
  }

  void legend() {
    double x = 8;
    const double y = 40;
    auto text = [&](const char* t, double width) {
      out_ += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">{}</text>\n", num(x + 14), num(y + 4), t);
      x += width;
    };
    auto swatch = [&](const char* cls, const char* t, double width) {
      out_ += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"10\" height=\"10\"/>\n", cls, num(x),
                          num(y - 5));
      text(t, width);
    };
    swatch("up", "up", 44);
    swatch("down", "down (after its first start)", 178);
    for (const auto& [k, t, w] :
         {std::tuple{MarkKind::crash, "crash", 56.0}, std::tuple{MarkKind::kill, "kill", 44.0},
          std::tuple{MarkKind::restart, "restart", 64.0},
          std::tuple{MarkKind::escalation, "escalation (gave up)", 140.0},
          std::tuple{MarkKind::fault, "fault injected", 104.0}}) {
      out_ += marker(k, x + 5, y, 4.5, "lg") + closing(k) + "\n";
      text(t, w);
    }
    swatch("partition", "partition", 76);
    swatch("pause", "node paused", 94);
    swatch("node_down", "node down", 80);
    const auto present = [this](BandKind k) {
      return std::any_of(v_.bands.begin(), v_.bands.end(), [k](const Band& b) { return b.kind == k; });
    };
    if (present(BandKind::draining)) swatch("draining", "draining (SIGTERM to exit)", 170);
    if (present(BandKind::history)) swatch("history", "not linearizable", 110);
    const bool operations = std::any_of(v_.lanes.begin(), v_.lanes.end(), [](const Lane& l) {
      return std::any_of(l.marks.begin(), l.marks.end(), [](const Mark& m) { return m.kind == MarkKind::operation; });
    });
    if (operations) {
      out_ += marker(MarkKind::operation, x + 5, y, 4.5, "lg") + closing(MarkKind::operation) + "\n";
      text("concurrent operation", 140);
    }
    for (const auto& [k, t, w] : {std::tuple{BandKind::loss, "loss", 48.0}, std::tuple{BandKind::duplicate, "duplication", 90.0},
                                  std::tuple{BandKind::reorder, "reordering", 84.0}, std::tuple{BandKind::clog, "clog", 48.0}})
      if (present(k)) swatch(to_string(k), t, w);
    if (!v_.leaders.empty()) {
      swatch("believed", "leads (belief)", 100);
      swatch("write_sw", "write", 54);
      swatch("unsafe_sw", "unsafe write", 96);
    }
  }

  void stripes() {
    for (std::size_t i = 1; i < v_.lanes.size(); i += 2) {
      out_ += fmt::format("<rect class=\"stripe\" x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                          num(tree_lane_y(i)), kWidth, num(lane_h_));
    }
  }

  void axis() {
    const Ticks t = choose_ticks(v_.end - Time{0}, static_cast<std::size_t>((kPlotRight - kPlotLeft) / 90));
    out_ += fmt::format("<text class=\"tick\" x=\"8\" y=\"{}\">virtual time ({})</text>\n", num(kAxisY),
                        t.unit_name);
    for (Time at{0}; at <= v_.end; at = at + t.step) {
      const double x = sc_.x(at);
      out_ += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", num(x),
                          num(kLanesTop - 4), num(std::max(lanes_bottom_, kLanesTop)));
      out_ += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(x),
                          num(kAxisY), xml_escape(tick_label(at, t)));
    }
  }

  void lane(std::size_t i) {
    const Lane& l = v_.lanes[i];
    const double y = tree_lane_y(i);
    const double cy = y + lane_h_ / 2;
    const std::vector<Drawn> marks = merge_marks(l.marks, sc_);
    label(l, y);
    const double bar_h = lane_h_ * 0.6;
    if (!l.up.empty()) {
      out_ += fmt::format("<rect class=\"down\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                          num(sc_.x(l.up.front().from)), num(cy - bar_h / 4),
                          num(kPlotRight - sc_.x(l.up.front().from)), num(bar_h / 2));
    }
    up_bars(l, cy - bar_h / 2, bar_h);
    const double s = std::min(lane_h_ * 0.3, 5.0);
    for (const Drawn& d : marks) {
      out_ += marker(d.kind, d.x, cy, s, "mk") + "<title>" + xml_escape(marker_title(d)) + "</title>" +
              closing(d.kind) + "\n";
    }
  }

  /// A channel's length over time as a filled step area, the lane's height its longest; per
  /// pixel column the longest it was there, so a lane of a million steps draws in ~1000 points.
  void backlog(const Backlog& b, double y) {
    const double font = std::clamp(lane_h_ - 4, 8.0, 12.0);
    const std::string name = fmt::format("{} ({}/{})", b.name, b.max, b.cap);
    const auto chars = static_cast<std::size_t>(kLabelWidth / (font * 0.6));
    out_ += fmt::format("<text class=\"lane backlog\" x=\"8\" y=\"{}\" font-size=\"{}\"><title>{}</title>{}</text>\n",
                        num(y + lane_h_ / 2 + font * 0.35), num(font),
                        xml_escape(fmt::format("channel {} on {}: capacity {}, longest {}", b.name, b.node, b.cap, b.max)),
                        xml_escape(truncate_right(name, chars)));
    const double bottom = y + lane_h_ - 1, top = y + 2;
    const double scale = b.max == 0 ? 0 : (bottom - top) / static_cast<double>(b.max);
    std::string points = fmt::format("{},{}", num(kPlotLeft), num(bottom));
    std::uint64_t len = 0;
    double column = -1;
    std::uint64_t column_max = 0;
    const auto emit = [&](double x, std::uint64_t l) {
      points += fmt::format(" {},{} {},{}", num(x), num(bottom - scale * static_cast<double>(len)), num(x),
                            num(bottom - scale * static_cast<double>(l)));
      len = l;
    };
    for (const auto& [t, l] : b.steps) {
      const double x = std::floor(sc_.x(t));
      if (x == column) {
        column_max = std::max(column_max, l);
        continue;
      }
      if (column >= 0) emit(column, column_max);
      column = x;
      column_max = l;
    }
    if (column >= 0) emit(column, column_max);
    points += fmt::format(" {},{} {},{}", num(kPlotRight), num(bottom - scale * static_cast<double>(len)), num(kPlotRight), num(bottom));
    out_ += fmt::format("<polygon class=\"backlog\" points=\"{}\"><title>{}</title></polygon>\n", points,
                        xml_escape(fmt::format("{} backlog: longest {} of {}", b.name, b.max, b.cap)));
  }

  void label(const Lane& l, double y) {
    const double font = std::clamp(lane_h_ - 4, 8.0, 12.0);
    const double indent = static_cast<double>(std::min<std::size_t>(l.depth, 8)) * 8;
    const std::string shown = l.depth == 0 ? l.path : l.path.substr(l.path.rfind('/') + 1);
    const auto chars = static_cast<std::size_t>((kLabelWidth - indent) / (font * 0.6));
    std::string tip = l.path;
    if (l.shape == nullptr) tip += " (dynamic)";
    if (!l.node.empty()) tip += " on " + l.node;
    out_ +=
        fmt::format("<text class=\"lane\" x=\"{}\" y=\"{}\" font-size=\"{}\"><title>{}</title>{}</text>\n",
                    num(8 + indent), num(y + lane_h_ / 2 + font * 0.35), num(font), xml_escape(tip),
                    xml_escape(truncate_left(shown, chars)));
  }

  /// Up intervals as bars, joined where the gap between two is under a pixel.
  void up_bars(const Lane& l, double y, double h) {
    std::optional<std::pair<double, double>> bar;
    std::size_t joined = 0;
    Time from{}, to{};
    auto flush = [&] {
      if (!bar) return;
      out_ += fmt::format(
          "<rect class=\"up\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>\n",
          num(bar->first), num(y), num(std::max(bar->second - bar->first, 0.5)), num(h),
          xml_escape((joined > 1 ? fmt::format("up ({} intervals) ", joined) : std::string("up ")) +
                     span_text(from, to)));
    };
    for (const properties::Interval& i : l.up) {
      const double x0 = sc_.x(i.from), x1 = sc_.x(i.to);
      if (bar && x0 - bar->second < kMergePx) {
        bar->second = x1;
        to = i.to;
        ++joined;
        continue;
      }
      flush();
      bar = {x0, x1};
      from = i.from;
      to = i.to;
      joined = 1;
    }
    flush();
  }

  void bands() {
    // Per kind, bands closer than a pixel share one rectangle.
    std::array<std::optional<std::size_t>, kBandKinds> last{};
    struct Shade {
      BandKind kind;
      double x0, x1;
      Time from, to;
      std::size_t count;
      std::string label;
    };
    std::vector<Shade> shades;
    for (const Band& b : v_.bands) {
      const double x0 = sc_.x(b.from), x1 = sc_.x(b.to);
      auto& l = last[static_cast<std::size_t>(b.kind)];
      if (l && x0 - shades[*l].x1 < kMergePx) {
        Shade& s = shades[*l];
        s.x1 = std::max(s.x1, x1);
        s.to = std::max(s.to, b.to);
        ++s.count;
        continue;
      }
      l = shades.size();
      shades.push_back({b.kind, x0, x1, b.from, b.to, 1, b.label});
    }
    for (const Shade& s : shades) {
      const std::string what = s.count == 1 ? fmt::format("{} {}", to_string(s.kind), s.label)
                                            : fmt::format("{} x {}", s.count, to_string(s.kind));
      const std::string tip = xml_escape(what + ", " + span_text(s.from, s.to));
      const double w = std::max(s.x1 - s.x0, 1.0);
      out_ += fmt::format(
          "<rect class=\"band {}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>\n",
          to_string(s.kind), num(s.x0), num(kBandTop), num(w),
          num(std::max(lanes_bottom_, kLanesTop) - kBandTop), tip);
      const auto chars = static_cast<std::size_t>(w / 6.2);
      if (chars >= 4) {
        out_ += fmt::format("<text class=\"bandlabel\" x=\"{}\" y=\"{}\"><title>{}</title>{}</text>\n",
                            num(s.x0 + 2), num(kBandLabelY), tip,
                            xml_escape(truncate_right(s.count == 1 ? s.label : what, chars)));
      }
    }
  }

  void world_marks() {
    for (const Drawn& d : merge_marks(v_.world_marks, sc_)) {
      out_ += marker(d.kind, d.x, kWorldMarkY, 4, "mk world") + "<title>" +
              xml_escape("world: " + marker_title(d)) + "</title>" + closing(d.kind) + "\n";
    }
  }

  const RunReport& r_;
  const RunView& v_;
  Scale sc_;
  double lane_h_ = kLaneHeightMax;
  double lanes_bottom_ = kLanesTop;
  double height_ = 0;
  std::string out_;
};

}  // namespace

std::string timeline_svg(const RunReport& r) { return timeline_svg(r, view_of(r)); }
std::string timeline_svg(const RunReport& r, const RunView& v) { return TimelineWriter(r, v).write(); }

}  // namespace lic::reports
