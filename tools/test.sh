#!/usr/bin/env bash
# Sets up, builds and runs every test through CTest. Arguments go to tools/setup.sh
# (e.g. --sanitize --build-dir build-asan, or --compiler clang --build-dir build-clang).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="$root/build"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[$i]}" = --build-dir ] && build_dir="${args[$((i + 1))]}"
done
"$root/tools/setup.sh" "$@"
cd "$build_dir"
# LETITCRASH_CTEST_EXCLUDE: a label regex to leave out (CI's sanitizer and clang stages leave out
# the live conformance labels, which the gcc build has already run against the real programs).
exclude=()
[ -n "${LETITCRASH_CTEST_EXCLUDE:-}" ] && exclude=(-LE "$LETITCRASH_CTEST_EXCLUDE")
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 600 "${exclude[@]}"
