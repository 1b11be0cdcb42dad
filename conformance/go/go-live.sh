#!/usr/bin/env bash
# Runs the Go program (channels/main.go) and compares its output with the committed recording
# (channels.expected); the go-live CTest label runs this. With --update it re-records instead:
# the recording is rewritten from the Go runtime installed here (then review the diff and the
# table in docs/conformance-go.md before committing).
#
# With --shutdown TESTS (the go_conformance_tests binary) it runs seed 004's shutdown orders on
# real goroutines instead (shutdown/, about 15-20 s), then the same orders at three loads (32, 160
# and 640 trials at a time, SIGTERM at 5 s: about a minute), and checks both fresh outputs against
# the simulator with the [shutdown] test cases, the same comparison `ctest -L conformance` makes
# with the committed shutdown.expected and shutdown_loads.expected. The counts vary from run to run, so the comparison is on the
# outcomes and within the bounds the test states. With --update as well, shutdown.expected and
# shutdown_loads.expected are rewritten from the fresh outputs, only when that comparison passes.
#
#   conformance/go/go-live.sh [--go PATH] [--out FILE] [--update] [--shutdown TESTS]
#
# Exit 0: Go answers every case as recorded (the shutdown orders come out as simulated).
# 1: a case differs (the diff, or the failing comparison, is printed).
# 2: go is not installed, or a bad argument.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go_bin="go"
out=""
update=0
shutdown_tests=""
while [ $# -gt 0 ]; do
  case "$1" in
    --go|--out|--shutdown)
      if [ $# -lt 2 ] || [ -z "$2" ]; then echo "go-live.sh: $1 needs a value (see --help)" >&2; exit 2; fi ;;&
    --go) go_bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --update) update=1; shift ;;
    --shutdown) shutdown_tests="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "go-live.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if ! command -v "$go_bin" >/dev/null 2>&1; then
  echo "go-live.sh: go not found ('$go_bin'): install Debian's golang-go (tools/setup.sh --go)" >&2
  exit 2
fi

if [ -n "$shutdown_tests" ] && ! [ -x "$shutdown_tests" ]; then
  echo "go-live.sh: --shutdown '$shutdown_tests' is not an executable (build go_conformance_tests)" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A private build cache when HOME is not writable (CI sandboxes). Both programs use the
# standard library only: nothing is ever downloaded.
if [ -z "${GOCACHE:-}" ] && ! [ -w "${HOME:-/nonexistent}" ]; then export GOCACHE="$tmp/gocache"; fi
export GOPROXY=off

echo "go-live: $("$go_bin" version)"

if [ -n "$shutdown_tests" ]; then
  [ -n "$out" ] || out="$tmp/shutdown.recorded"
  loads_out="${out%.recorded}_loads.recorded"
  [ "$loads_out" != "$out" ] || loads_out="$out.loads"
  (cd "$here/shutdown" && "$go_bin" run .) >"$out"
  cat "$out"
  # The same orders at three loads (trials at a time), SIGTERM at 5 s: the preemption cases.
  (cd "$here/shutdown" && "$go_bin" run . -trials 300 -sigterm 5 -loads 32,160,640) >"$loads_out"
  grep -v '^load [0-9]* where' "$loads_out"
  if ! LIC_GO_SHUTDOWN_RECORDING="$out" LIC_GO_SHUTDOWN_LOADS="$loads_out" "$shutdown_tests" '[shutdown]'; then
    echo "go-live: the shutdown orders on real goroutines no longer come out as the simulator's (above)" >&2
    exit 1
  fi
  if [ "$update" = 1 ]; then
    cp "$out" "$here/shutdown.expected"
    cp "$loads_out" "$here/shutdown_loads.expected"
    echo "go-live: re-recorded $here/shutdown.expected and $here/shutdown_loads.expected"
  fi
  echo "go-live: the shutdown orders on real goroutines come out as simulated"
  exit 0
fi

[ -n "$out" ] || out="$tmp/channels.recorded"
(cd "$here/channels" && "$go_bin" run .) >"$out"

if [ "$update" = 1 ]; then
  cp "$out" "$here/channels.expected"
  echo "go-live: re-recorded $here/channels.expected ($(wc -l <"$out") cases)"
  exit 0
fi
if diff -u "$here/channels.expected" "$out"; then
  echo "go-live: all $(wc -l <"$out") cases as recorded"
else
  echo "go-live: the Go runtime's answers differ from channels.expected (above: - recorded, + now)" >&2
  exit 1
fi
