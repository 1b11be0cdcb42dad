#!/usr/bin/env bash
# tools/phase-times.sh: a script that sources it and changes directory between phases still
# writes every phase line to the one file LETITCRASH_PHASES names, relative or not, each line
# in the documented form (SCRIPT PHASE start= end= wall_s= user_s= sys_s=), the CPU seconds of
# the children that finished in it counted (a busy child makes user_s + sys_s > 0).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/elsewhere"
cat > "$dir/job.sh" <<JOB
set -euo pipefail
. "$here/phase-times.sh"
phase first
awk 'BEGIN { for (i = 0; i < 3000000; i++) s += i }'
cd elsewhere
phase second step
phase
JOB
(cd "$dir" && LETITCRASH_PHASES=phases.txt bash job.sh)
fail() { echo "phase-times-test: $*" >&2; exit 1; }
[ -f "$dir/phases.txt" ] || fail "no phases.txt where LETITCRASH_PHASES pointed"
[ ! -e "$dir/elsewhere/phases.txt" ] || fail "a phase line went to elsewhere/phases.txt (relative to the new directory)"
[ "$(wc -l < "$dir/phases.txt")" -eq 2 ] || fail "want 2 phase lines, got: $(cat "$dir/phases.txt")"
num='[0-9]+\.[0-9]{3}'
line="job first start=$num end=$num wall_s=$num user_s=$num sys_s=$num"
grep -Eq "^$line\$" <(sed -n 1p "$dir/phases.txt") || fail "bad first line: $(sed -n 1p "$dir/phases.txt")"
grep -Eq "^${line/first/second_step}\$" <(sed -n 2p "$dir/phases.txt") || fail "bad second line: $(sed -n 2p "$dir/phases.txt")"
awk '{ split($6, u, "="); split($7, s, "="); if (NR == 1 && u[2] + s[2] <= 0) exit 1 }' "$dir/phases.txt" ||
  fail "the first phase's busy child counted no CPU time: $(sed -n 1p "$dir/phases.txt")"
echo "phase-times-test: ok"
