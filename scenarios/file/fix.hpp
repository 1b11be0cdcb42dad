#pragma once
// A known bug's fix (docs/scenario-format.md, "Known bugs and their fixes"): each file of
// scenarios/bugs/ declares the one change that fixes its bug as an overlay on its trees,
//   fix: {tree: {/root: {intensity: 10, period: 1m}}}            # a supervisor's flags
//   fix: {tree: {/task/server: {args: {order: close_first}}}}    # a worker's arguments
//   fix: {tree: {/root/consumer: {restart: permanent}}}          # a child spec
// and the bug tests run the file with it applied: the fix must pass, on the file as written and
// on its shrunk reproducer (a shrink that kept the bug still fails without the fix and passes
// with it; one that slipped to another failure fails either way).

#include "scenarios/file/read.hpp"
#include "scenarios/registry.hpp"
#include "scenarios/scenario.hpp"

namespace lic::scenarios {

/// `s` with its fix applied, and no fix left: the file as its author fixed it. Each key under a
/// path goes where it belongs: `args` into the worker's arguments, a supervisor flag (strategy,
/// intensity, period, auto_shutdown, window, max_children, init) into the supervisor's flags, a
/// lifecycle service's keys into the service, anything else (restart, shutdown, type, ...) into
/// the child spec. A path that names nothing, or a fixed file that does not read, is a
/// diagnostic at the fix (errors in file order, as parse_scenario reports them). A scenario with
/// no fix comes back as it is.
ParseResult apply_fix(const Scenario& s, const Registry& registry = Registry::builtin());

}  // namespace lic::scenarios
