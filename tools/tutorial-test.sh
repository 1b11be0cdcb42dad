#!/usr/bin/env bash
# docs/tutorial.md as a new user follows it: letitcrash installed to a temporary prefix, an empty
# folder, the page's files written into it, and every command the page quotes run there, its
# output held to what the page quotes (tools/doc_commands.py). CTest runs it as "docs: the
# tutorial ...", label docs.
#   tools/tutorial-test.sh [BUILD_DIR]      (default: build; KEEP_TUTORIAL=1 keeps its folder to look at)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/letitcrash-tutorial.XXXXXX")"
[ -n "${KEEP_TUTORIAL:-}" ] || trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
python3 "$root/tools/doc_commands.py" "$root/docs/tutorial.md" "$work/myjobs" "LETITCRASH=$work/prefix"
