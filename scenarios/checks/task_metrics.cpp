// The built-in metrics (checks/table.hpp): how a task stopped with SIGTERM drained, and what
// bounded mailboxes dropped.

#include <map>

#include "scenarios/checks/table.hpp"

namespace lic::scenarios {

namespace {

const Atom kSigterm("sigterm");
const Atom kSigkill("sigkill");
const Atom kMailboxFull("mailbox_full");

/// Per node stopped with SIGTERM: how long until its task ended (its main exited, or SIGKILL
/// came), and whether SIGKILL ended it. A task still running at the end reports nothing.
void drain(const CheckInput& in, reports::Metrics& out) {
  std::map<Atom, Time> since;  // nodes told SIGTERM, not yet ended
  reports::MetricValue drain_s;
  reports::MetricValue killed;
  for (const TraceEvent& e : in.events->only({EventKind::signal, EventKind::task_exit})) {
    if (e.kind == EventKind::signal && !e.pid && e.tag == kSigterm) {
      since.try_emplace(e.node, e.time);
      continue;
    }
    const bool exited = e.kind == EventKind::task_exit;
    const bool kill = e.kind == EventKind::signal && !e.pid && e.tag == kSigkill;
    if (!exited && !kill) continue;
    const auto it = since.find(e.node);
    if (it == since.end()) continue;
    drain_s.values.push_back(static_cast<double>((e.time - it->second).ns) / 1e9);
    killed.values.push_back(kill ? 1 : 0);
    since.erase(it);
  }
  if (drain_s.values.empty()) return;
  drain_s.list = killed.list = drain_s.values.size() > 1;
  out["drain_s"] = drain_s;
  out["killed"] = killed;
}

void mailbox_drops(const CheckInput& in, reports::Metrics& out) {
  std::int64_t n = 0;
  for (const TraceEvent& e : in.events->only({EventKind::drop})) n += e.kind == EventKind::drop && e.reason == Reason::other(kMailboxFull);
  if (n > 0) out["mailbox_drops"] = reports::MetricValue{{static_cast<double>(n)}, false};
}

}  // namespace

std::vector<MetricInfo> builtin_metrics() {
  return {
      {"drain_s", "for a task stopped with SIGTERM (stop_task): seconds until it ended, by its main's exit or SIGKILL; "
                  "with it, killed: 1 when SIGKILL ended it",
       drain},
      {"mailbox_drops", "messages a bounded mailbox refused (mailbox_full)", mailbox_drops},
  };
}

}  // namespace lic::scenarios
