#!/usr/bin/env bash
# letitcrash as a user's project sees it: install the build to a temporary prefix, then
# configure, build and test examples/cache against that prefix (find_package(letitcrash 0.3)),
# not against the build tree. Its own executable (built with lic::cli_main) runs its scenario
# file and lists its behaviours next to the built-in ones.
#   tools/example-test.sh [BUILD_DIR]      (default: build; run tools/setup.sh first)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/letitcrash-example.XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
echo "== install $build to $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
echo "== configure examples/cache with -DCMAKE_PREFIX_PATH=$prefix"
cmake -S "$root/examples/cache" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
# It must have found the installed package, not a build tree.
grep -q "letitcrash_DIR:PATH=$prefix/lib/cmake/letitcrash" "$work/build/CMakeCache.txt" ||
  { echo "example-test: find_package(letitcrash) did not find $prefix" >&2; grep letitcrash_DIR "$work/build/CMakeCache.txt" >&2; exit 1; }
echo "== build"
cmake --build "$work/build" -j "$(nproc 2>/dev/null || echo 2)" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
echo "== test"
ctest --test-dir "$work/build" --output-on-failure
echo "== its own executable"
"$work/build/cachetest" run "$root/examples/cache/scenarios/cache.yaml"
"$work/build/cachetest" validate --list | grep -E '^  (cache\.|idle )'
echo "example-test: examples/cache builds and passes against the installed letitcrash"
