# Sourced by tools/setup.sh and tools/main-job.sh: where their time goes, phase by phase.
# Nothing happens unless LETITCRASH_PHASES names a file (tools/fresh-machine-time.sh sets it).
#
#   phase NAME   ends the phase running, if any, and starts NAME
#   phase        ends the phase running
#
# Each ended phase appends one line to $LETITCRASH_PHASES:
#   SCRIPT PHASE start=EPOCH end=EPOCH wall_s=W user_s=U sys_s=S
# user_s and sys_s are the CPU time of the script's child processes that finished during the
# phase (bash's `times`: the kernel's accounting, so a loaded machine does not inflate them; a
# locale's decimal comma there is read as a point).
_phase_name=""
_phase_script="$(basename "$0" .sh)"
# A relative path names a file in the directory the script started in, though it may `cd` later
# (main-job.sh does); exported from the environment, the absolute path reaches its children too.
case "${LETITCRASH_PHASES:-}" in
  "" | /*) ;;
  *) LETITCRASH_PHASES="$PWD/$LETITCRASH_PHASES" ;;
esac

phase() {
  [ -n "${LETITCRASH_PHASES:-}" ] || return 0
  local now cpu user sys
  now="$EPOCHREALTIME"
  times > "$LETITCRASH_PHASES.times"  # in this shell: a subshell would see none of its children
  cpu="$(awk 'function sec(t,  m) { gsub(/,/, ".", t); m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
    NR == 2 { printf "%.3f %.3f\n", sec($1), sec($2) }' "$LETITCRASH_PHASES.times")"
  user="${cpu% *}"; sys="${cpu#* }"
  if [ -n "$_phase_name" ]; then
    awk -v sc="$_phase_script" -v p="$_phase_name" -v t0="$_phase_t0" -v t1="$now" -v u0="$_phase_u0" -v u1="$user" \
        -v s0="$_phase_s0" -v s1="$sys" 'BEGIN { printf "%s %s start=%.3f end=%.3f wall_s=%.3f user_s=%.3f sys_s=%.3f\n",
        sc, p, t0, t1, t1 - t0, u1 - u0, s1 - s0 }' >> "$LETITCRASH_PHASES"
  fi
  _phase_name="$*"
  _phase_name="${_phase_name// /_}"
  _phase_t0="$now"; _phase_u0="$user"; _phase_s0="$sys"
}
