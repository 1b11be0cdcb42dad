#!/usr/bin/env bash
# pg-live (docs/conformance-pg.md): records every case of cases.yaml again on a real PostgreSQL 15
# (record.py) into OUT and compares it with the committed recordings (compare.py): value,
# error_class and winners exactly, timed steps within max(5 %, 50 ms).
#
#   conformance/pg/pg-live.sh --out DIR
#
# Not root, record.py cannot cut connections and reports the net cases as not run (its exit 3):
# this test then FAILS, unless LETITCRASH_PG_ALLOW_NOT_RUN=1 allows comparing only the cases that
# ran. CI runs it as root.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    *) echo "pg-live.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "pg-live.sh: --out DIR is required" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out"
/usr/bin/python3 "$here/record.py" --out "$out"
rc=$?
ids=()
if [ "$rc" -eq 3 ]; then
  if [ "${LETITCRASH_PG_ALLOW_NOT_RUN:-0}" != 1 ]; then
    echo "pg-live: FAILED: the net cases were not run (not root: no private network namespace);" \
         "run as root, or set LETITCRASH_PG_ALLOW_NOT_RUN=1 to compare only the other cases" >&2
    exit 1
  fi
  echo "pg-live: LETITCRASH_PG_ALLOW_NOT_RUN=1: comparing only the cases that ran" >&2
  while read -r id rest; do
    [ -z "$rest" ] && ids+=("$id")
  done < <(/usr/bin/python3 "$here/record.py" --list)
elif [ "$rc" -ne 0 ]; then
  echo "pg-live: FAILED: record.py exited $rc" >&2
  exit 1
fi
/usr/bin/python3 "$here/compare.py" --times "$here/recordings" "$out" "${ids[@]}"
