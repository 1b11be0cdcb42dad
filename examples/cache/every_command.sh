#!/bin/sh
# Every subcommand of our own letitcrash (cachetest, built with lic::cli_main) on our own files:
# each must know the cache's behaviours and check, and exit as documented (0 holds, 1 a check
# failed). CTest runs it as "cache: every subcommand ...".
#   every_command.sh CACHETEST SCENARIOS_DIR WORK_DIR
set -eu
exe="$1" dir="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
ok="$dir/cache.yaml" bug="$dir/cache_short_timeout.yaml"
expect() {  # expect CODE COMMAND...: runs it, fails unless it exits CODE
  want="$1"; shift
  set +e; "$@" >"$work/out.txt" 2>&1; got=$?; set -e
  if [ "$got" -ne "$want" ]; then
    echo "FAIL (exit $got, expected $want): $*"; cat "$work/out.txt"; exit 1
  fi
  echo "ok (exit $got): $*"
}
expect 0 "$exe" validate "$ok" "$bug"
expect 0 "$exe" run "$ok" --out "$work/run"
expect 1 "$exe" run "$bug"
expect 0 "$exe" run "$bug" --fixed
expect 0 "$exe" replay "$work/run/trace.jsonl"
expect 0 "$exe" diagram "$ok" --at 10s
expect 0 "$exe" sweep "$ok" --seeds 1..10 --shard 1/2 --out "$work/s1.jsonl"
expect 0 "$exe" sweep "$ok" --seeds 1..10 --shard 2/2 --out "$work/s2.jsonl"
expect 0 "$exe" merge "$work/all.jsonl" "$work/s1.jsonl" "$work/s2.jsonl"
expect 0 "$exe" sweep "$ok" --seeds 1..10 --metrics cache.hit_ratio
grep -q cache.hit_ratio "$work/out.txt" || { echo "FAIL: sweep --metrics printed no cache.hit_ratio"; exit 1; }
expect 0 "$exe" shrink "$bug" --seed 1 --max-runs 60 --out "$work/shrunk.yaml"
# The shrunk file keeps the bug: it fails as too_unavailable, and with the declared fix it no
# longer does (docs/shrinking.md: a shrink that kept another failure is a slip).
expect 1 "$exe" run "$work/shrunk.yaml" --format json
grep -q '"kind": *"too_unavailable"' "$work/out.txt" || { echo "FAIL: the shrunk file does not fail as too_unavailable"; cat "$work/out.txt"; exit 1; }
set +e; "$exe" run "$work/shrunk.yaml" --fixed --format json >"$work/out.txt" 2>&1; set -e
if grep -q '"kind": *"too_unavailable"' "$work/out.txt"; then echo "FAIL: a slip: with the fix the shrunk file still fails as too_unavailable"; exit 1; fi
echo "ok: the shrunk file fails as too_unavailable, and not with its fix"
expect 1 "$exe" explore "$bug" --runs 20 --out "$work/explore"
expect 0 "$exe" bench bugs --dir "$dir" --only cache_short_timeout --ranges 2 --max-seeds 20 --shrink-runs 40
grep -q "cache_short_timeout" "$work/out.txt" || { echo "FAIL: bench bugs printed no row for cache_short_timeout"; exit 1; }
echo "every subcommand of $(basename "$exe") works on our files"
