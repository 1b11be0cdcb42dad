#pragma once
// What the report writers read from the events as the run appends them, so a run that writes
// every report need not keep its events (scenarios/run/stream.hpp installs these as one trace
// sink): trace.jsonl written as it goes, and Perfetto's message flows. index.html's line flow
// is reports/dataflow.hpp's LineFlowStream. Each is also how the writers read a kept trace, so
// both ways give the same bytes.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reports/run_report.hpp"
#include "sim/trace.hpp"

namespace lic::reports {

class AtomicFileWriter;

/// Whether a labelled process path gets a lane in the timeline and Perfetto (run_view.hpp's
/// lanes): a declared path, or one seen under a root (any, when no tree is given). The declared
/// paths are sorted once: asked at every spawn, a search of the whole tree each time made a
/// 10,000-child tree's `run --out` quadratic (a third of its time).
class LanePaths {
 public:
  explicit LanePaths(const std::vector<ShapeNode>& trees);
  bool operator()(std::string_view path) const;

 private:
  bool any_ = false;                 ///< no tree given: every path
  std::vector<std::string> declared_;  ///< sorted
  std::vector<std::string> roots_;
};

/// One message drawn as a Perfetto flow: from its send on the sender's lane to where it landed.
struct MessageFlow {
  Atom tag;
  Time sent;
  Time landed;
  Atom from_path;
  Atom from_node;
  Atom to_path;
  Atom to_node;
};

/// The messages between two processes with lanes, the first kMax of them in trace order: a
/// remote one from its send to its `deliver` (a duplicate gets a flow per copy), a local one at
/// its send (it lands in the mailbox at once).
///
/// A remote send is kept until a `drop` of it: a copy of it may land later. `duplicates` false
/// says the run's network never duplicates a message (no `duplicate` in its paths or faults),
/// so each send has one copy, ending in one `deliver` or one `drop`: the send is then let go at
/// its `deliver` too, and what is kept no longer grows with the messages that landed.
class MessageFlowStream {
 public:
  static constexpr std::uint64_t kMax = 50'000;
  explicit MessageFlowStream(std::function<bool(std::string_view)> is_lane, bool duplicates = true)
      : is_lane_(std::move(is_lane)), duplicates_(duplicates) {}
  void on(const TraceEvent& e);
  const std::vector<MessageFlow>& flows() const { return flows_; }
  std::uint64_t omitted() const { return omitted_; }

 private:
  struct Where {
    Atom path;
    Atom node;
  };
  struct Sent {
    Atom tag;
    Time at;
    Pid from;
  };
  void flow(const Sent& s, Time at, Pid to);

  std::function<bool(std::string_view)> is_lane_;
  bool duplicates_ = true;
  std::vector<Where> where_;               // by process number: a null path has no lane
  std::map<std::uint64_t, Sent> sent_;     // by message id: remote sends not dropped (nor delivered, without duplicates)
  std::vector<MessageFlow> flows_;
  std::uint64_t omitted_ = 0;
};

/// trace.jsonl written as the run appends its events: the header line, then one line an event,
/// to a temporary beside its final place; take() hands over the writer to commit.
class TraceFileStream {
 public:
  TraceFileStream(const std::filesystem::path& path, const std::string& header);
  TraceFileStream(const TraceFileStream&) = delete;
  TraceFileStream& operator=(const TraceFileStream&) = delete;
  ~TraceFileStream();
  void on(const TraceEvent& e);
  AtomicFileWriter& writer() { return *w_; }

 private:
  std::unique_ptr<AtomicFileWriter> w_;
};

}  // namespace lic::reports
