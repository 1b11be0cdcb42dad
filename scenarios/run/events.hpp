#pragma once
// The events a run's world puts in the trace (docs/scenario-format.md, "What a run traces"):
// one spelling for the runner that emits them and the reports and tools that read them.

#include "sim/atom.hpp"
#include "sim/trace_keys.hpp"

namespace lic::scenarios::run_events {

inline const Atom kScriptStep{"script_step"};        ///< {op, target, pid}: a step acts
inline const Atom kScriptSkipped{"script_skipped"};  ///< {op, target, why}: nothing at its target
inline const Atom kScriptResult{"script_result"};    ///< {op, target, result, value}: a management call's result
inline const Atom kWhichChildren{"which_children"};  ///< {target, children, rows}
inline const Atom kCountChildren{"count_children"};  ///< {target, counts}

// Field keys of its own (the others are in sim/trace_keys.hpp).
inline const Atom kOp{"op"};
inline const Atom kChildren{"children"};
inline const Atom kValue{"value"};    ///< a call's result as OTP's term (pids as path#start)
inline const Atom kRows{"rows"};      ///< which_children as OTP's [{Id,Child,Type}] (pids as path#start)
inline const Atom kCounts{"counts"};  ///< count_children as OTP's [{specs,N},{active,N},...]
using keys::kPid;
using keys::kResult;
using keys::kTarget;
using keys::kWhy;

}  // namespace lic::scenarios::run_events
