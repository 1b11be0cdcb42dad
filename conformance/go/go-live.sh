#!/usr/bin/env bash
# Runs the Go program (channels/main.go) and compares its output with the committed recording
# (channels.expected); the go-live CTest label runs this. With --update it re-records instead:
# the recording is rewritten from the Go runtime installed here (then review the diff and the
# table in docs/conformance-go.md before committing).
#
#   conformance/go/go-live.sh [--go PATH] [--out FILE] [--update]
#
# Exit 0: Go answers every case as recorded. 1: a case differs (the diff is printed).
# 2: go is not installed, or a bad argument.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go_bin="go"
out=""
update=0
while [ $# -gt 0 ]; do
  case "$1" in
    --go) go_bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --update) update=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "go-live.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if ! command -v "$go_bin" >/dev/null 2>&1; then
  echo "go-live.sh: go not found ('$go_bin'): install Debian's golang-go (tools/setup.sh --go)" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
[ -n "$out" ] || out="$tmp/channels.recorded"
# A private build cache when HOME is not writable (CI sandboxes).
if [ -z "${GOCACHE:-}" ] && ! [ -w "${HOME:-/nonexistent}" ]; then export GOCACHE="$tmp/gocache"; fi

echo "go-live: $("$go_bin" version)"
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
