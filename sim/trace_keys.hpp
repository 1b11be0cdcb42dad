#pragma once
// The field keys of system events, declared once: the supervisors, the fault injector, the
// runner and the reference systems write them, and the checks, the availability measures, the
// reports and the tests read them (through TraceEvent::field). A new key goes here, not in a
// string literal at the place that writes it. The event names live with their writers'
// vocabulary: supervision/events.hpp (supervisors), sim/trace_keys.hpp's fault_events (the fault
// injector, which the reports read too), scenarios/run/events.hpp (the script), and
// properties/conservation.hpp (the line protocol).

#include "sim/atom.hpp"

namespace lic::keys {

inline const Atom kId{"id"};              ///< a child's or service's id
inline const Atom kPid{"pid"};            ///< the process concerned
inline const Atom kStart{"start"};        ///< a start attempt's number
inline const Atom kReason{"reason"};      ///< an exit reason (as text)
inline const Atom kFrom{"from"};          ///< a state left
inline const Atom kTo{"to"};              ///< a state entered; a receiver
inline const Atom kWhy{"why"};            ///< why something did not happen
inline const Atom kAttempt{"attempt"};    ///< a lifecycle start attempt
inline const Atom kDelay{"delay"};        ///< a backoff delay
inline const Atom kOn{"on"};              ///< what a service waits on
inline const Atom kMessage{"message"};    ///< a human sentence
inline const Atom kCall{"call"};          ///< a management call's name
inline const Atom kResult{"result"};      ///< a call's result
inline const Atom kN{"n"};                ///< a count (a ticker's tick)
inline const Atom kFault{"fault"};        ///< a fault's name
inline const Atom kKind{"kind"};          ///< a fault's kind
inline const Atom kTarget{"target"};      ///< what a fault or a step is aimed at
inline const Atom kNode{"node"};          ///< a node
inline const Atom kPeer{"peer"};          ///< a peer's registered name
inline const Atom kTag{"tag"};            ///< a message's tag
inline const Atom kReceived{"received"};  ///< a count of messages received
inline const Atom kPoint{"point"};        ///< a buggify point's name
inline const Atom kName{"name"};          ///< a registered name

}  // namespace lic::keys

namespace lic::fault_events {

inline const Atom kFaultInjected{"fault_injected"};  ///< {fault, kind, target, ...}: a fault acted
inline const Atom kFaultSkipped{"fault_skipped"};    ///< {fault, kind, target, why}: its target was not there
inline const Atom kQuietPhase{"quiet_phase"};        ///< {injected, skipped}: the faults stop
inline const Atom kBuggify{"buggify"};               ///< {point}: a buggify point fired (sim/buggify.hpp)

}  // namespace lic::fault_events

namespace lic::process_events {

/// {name, tag}: a call to a name nothing has registered, which fails at once (noproc, as
/// gen_server:call exits): no message goes anywhere, so without it a retry loop would show
/// nothing and run no event.
inline const Atom kCallNoproc{"call_noproc"};

}  // namespace lic::process_events
