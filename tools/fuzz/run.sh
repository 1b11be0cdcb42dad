#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a bounded time from the
# seed corpus (docs/robustness.md). Exit 1 when a target finds something: the input is left in
# build-fuzz/findings/<target>/ with the command that reproduces it. Exit 0 when all ran clean.
#
#   tools/fuzz/run.sh [--seconds N] [--build-dir DIR] [--jobs J] [TARGET...]
#
# TARGET: scenario, replay, cli, results (default: all four, one after the other). --seconds is per
# target (default 60). --jobs J runs J fuzzing processes per target (default 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="$root/build-fuzz"
seconds=60
jobs=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build-dir) build_dir="$(realpath -m "$2")"; shift 2 ;;  # absolute: the runs below cd into it
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    scenario|replay|cli|results) targets+=("$1"); shift ;;
    *) echo "fuzz/run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(scenario replay cli results)
case "$seconds" in ''|*[!0-9]*) echo "fuzz/run.sh: --seconds takes a whole number" >&2; exit 2 ;; esac

"$root/tools/setup.sh" --fuzz --build-dir "$build_dir" --no-build
mkdir -p "$build_dir"
# A folder already built with the fuzzer's instrumentation (CI's sanitizer stage: `tools/test.sh
# --sanitize --fuzz`) is used as it is, its tests and flags kept; any other is configured here.
if ! grep -qs '^LETITCRASH_FUZZ:BOOL=ON$' "$build_dir/CMakeCache.txt"; then
  cmake -S "$root" -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ -DLETITCRASH_FUZZ=ON -DLETITCRASH_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
    >"$build_dir/fuzz-configure.log" 2>&1 || { cat "$build_dir/fuzz-configure.log" >&2; exit 1; }
fi
for t in "${targets[@]}"; do
  cmake --build "$build_dir" -j "$(nproc 2>/dev/null || echo 2)" --target "lic_fuzz_$t" >"$build_dir/fuzz-build.log" 2>&1 ||
    { grep -E "error" "$build_dir/fuzz-build.log" | head -n 40 >&2; echo "fuzz/run.sh: build of lic_fuzz_$t failed" >&2; exit 1; }
done

# The seed corpus: the repository's scenario files, small recorded traces, command lines.
seed_dirs() {
  case "$1" in
    scenario) echo "$root/scenarios/catalog $root/scenarios/broken $root/scenarios/bugs $root/scenarios/studies" ;;
    replay) echo "$build_dir/seed-traces" ;;
    cli) echo "$root/tools/fuzz/corpus/cli" ;;
    results) echo "$root/tools/fuzz/corpus/results" ;;
  esac
}
mkdir -p "$build_dir/seed-traces"
for g in one_for_one dynamic lifecycle escalation; do cp "$root/scenarios/catalog/golden/$g.trace.jsonl" "$build_dir/seed-traces/"; done

status=0
for t in "${targets[@]}"; do
  work="$build_dir/corpus/$t"
  findings="$build_dir/findings/$t"
  mkdir -p "$work" "$findings"
  # shellcheck disable=SC2046
  cp -n $(find $(seed_dirs "$t") "$root/tools/fuzz/regressions/$t" -type f) "$work/" 2>/dev/null || true
  echo "== fuzz $t for ${seconds}s (corpus $(find "$work" -type f | wc -l) inputs)"
  args=(-max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1
        -artifact_prefix="$findings/")
  [ "$jobs" -gt 1 ] && args+=(-fork="$jobs" -ignore_crashes=0)
  [ "$t" = cli ] && args+=(-close_fd_mask=3)  # the parser's messages; libFuzzer keeps its own
  log="$build_dir/fuzz-$t.log"
  if ! (cd "$build_dir" && "./lic_fuzz_$t" "${args[@]}" "$work" >"$log" 2>&1); then
    status=1
    echo "fuzz/run.sh: lic_fuzz_$t found a failing input:" >&2
    grep -E "ERROR|SUMMARY|finding|Test unit written" "$log" | head -n 20 >&2
    echo "reproduce: $build_dir/lic_fuzz_$t $findings/<the file above>   (log: $log)" >&2
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$log" | sed "s/^/  $t /" || true
done
exit "$status"
