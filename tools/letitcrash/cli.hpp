#pragma once
// The letitcrash command line as a library call: a user's own executable that knows their
// behaviours and checks is a whole `letitcrash` (run, sweep, merge, replay, validate --list,
// diagram, bench, and every command added later):
//
//   int main(int argc, char** argv) {
//     lic::scenarios::Registry reg = lic::scenarios::Registry::with_builtins();
//     my_system::add_behaviours(reg);
//     return lic::cli_main(argc, argv, reg);
//   }

#include "scenarios/registry.hpp"

namespace lic {

/// Runs the command line `argv` with the behaviours and checks of `registry`. Returns the exit
/// code: 0 success (every check holds), 1 a check failed, 2 bad input or usage. The reproduce
/// lines it prints name the executable as it was invoked (argv[0]).
int cli_main(int argc, char** argv, const scenarios::Registry& registry = scenarios::Registry::builtin());

/// Parses `argv` as cli_main would, with every option's check, and runs nothing: 0 when the
/// command line is good, 2 (and the message on stderr) when it is not. For the CLI fuzzer
/// (tools/fuzz/) and for tools that check a command line before they run it.
int cli_parse_only(int argc, char** argv, const scenarios::Registry& registry = scenarios::Registry::builtin());

}  // namespace lic
