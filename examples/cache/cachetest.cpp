// Our own letitcrash: every command of `letitcrash` (run, sweep, replay, validate --list, ...),
// knowing the cache's behaviours and check.

#include "cache/cache.hpp"

int main(int argc, char** argv) { return lic::cli_main(argc, argv, cache::registry()); }
