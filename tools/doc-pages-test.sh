#!/usr/bin/env bash
# The command blocks (```console) of docs pages run as a reader would run them, from the top of
# the repository with build/letitcrash, their output held to what the page quotes
# (tools/doc_commands.py). They run in a temporary folder holding `build` and `scenarios` links,
# so what the commands write lands there. CTest runs it as "docs: the commands quoted in ...".
#   tools/doc-pages-test.sh BUILD_DIR PAGE...       (PAGE: docs/shrinking.md, ...)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "$1" && pwd)"
shift
work="$(mktemp -d "${TMPDIR:-/tmp}/letitcrash-docs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
ln -s "$build" "$work/build"
ln -s "$root/scenarios" "$work/scenarios"
status=0
for page in "$@"; do
  python3 "$root/tools/doc_commands.py" "$root/$page" "$work" || status=1
done
exit $status
