#pragma once
// Behaviour coverage (issue 31, docs/explore.md): a bounded signature of what happened in a run,
// hashed into a fixed-size map as AFL hashes edges. The guided search keeps a schedule that
// reaches a slot no run reached before. The signature holds:
//   - each (event kind, role) reached: a role is a process's tree path with its digits folded
//     ("/root/pool/w12" and "/root/pool/w3" are one role), so that a restart's new pid is the
//     same role;
//   - each edge (previous event of a role, this event of it): "a crash while a sibling restarts"
//     is an exit of one role between a supervisor's exit report and its child_started;
//   - each fault and the reactions that followed it within a short window (happens-before pairs:
//     the fault's kind and target role, the reaction's kind and role);
//   - each role's count of restarts, exits and gave-ups, in AFL's buckets (1, 2, 3, 4-7, 8-15,
//     16-31, 32+): "a supervisor at k of n";
//   - each check's margin, in buckets (failed, within 5 %, 10 %, 25 %, 50 %, more): a run that
//     comes closer to failing a check than any before reaches a new slot.
// Message traffic (send, deliver) is left out: it is most of a trace and says little of the
// supervision's state. The signature is a pure function of the trace and the verdicts.

#include <cstdint>
#include <optional>
#include <vector>

#include "scenarios/checks/table.hpp"
#include "sim/trace.hpp"

namespace lic::scenarios {

/// Slots in the map: 2^16.
inline constexpr std::uint32_t kSignatureSlots = 1U << 16;

/// The slots a run reached, sorted, each once.
struct Signature {
  std::vector<std::uint32_t> slots;
};

/// The signature of a finished run's trace and checks.
Signature signature_of(const EventLog& events, const std::vector<CheckResult>& checks);

/// A margin's bucket: 0 failed (< 0), 1 at the edge (0), 2 within 5 %, 3 within 10 %, 4 within 25 %,
/// 5 within 50 %, 6 more.
int margin_bucket(double margin);

}  // namespace lic::scenarios
