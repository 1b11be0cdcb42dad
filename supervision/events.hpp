#pragma once
// The names of the events supervisors put in the trace (system events; docs/supervision.md).
// The supervisors emit them and the checks, the availability measures, the reports, the fault
// injector and the model harness read them: one spelling for all.

#include "sim/atom.hpp"

namespace lic::supervision::events {

inline const Atom kChildStarted{"child_started"};          ///< {id, pid}: a child is up
inline const Atom kChildTerminated{"child_terminated"};    ///< {id, pid, reason}: it ended abnormally
inline const Atom kStartError{"start_error"};              ///< {id, reason}: its start failed
inline const Atom kShutdownError{"shutdown_error"};        ///< {id, pid, reason}: it did not stop as asked
inline const Atom kReachedMax{"reached_max_restart_intensity"};  ///< {id}: the supervisor gives up
inline const Atom kAutoShutdown{"auto_shutdown"};          ///< {id}: a significant child ended it
/// {result, value}: a root supervisor's own start, as supervisor:start_link returns it
/// (value {ok,/root#1}, ignore or {error,Reason}; result ok, ignore or error).
inline const Atom kRootStart{"root_start"};
inline const Atom kValue{"value"};                         ///< root_start's OTP term
inline const Atom kServiceState{"service_state"};          ///< lifecycle: {id, from, to, ...}
inline const Atom kServiceRetry{"service_retry"};          ///< lifecycle: {id, attempt, delay}: next try after delay
inline const Atom kServiceGaveUp{"service_gave_up"};       ///< lifecycle: {id, why, attempt}: failed for good

}  // namespace lic::supervision::events
