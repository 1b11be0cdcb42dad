#!/usr/bin/env bash
# No function in scenarios/ or tools/ is over 70 lines (tests included): clang-tidy's
# readability-function-size over every .cpp there, with the build's compile_commands.json.
#   tools/function-size.sh BUILD_DIR [LINES]
# Exit 0 when none is over, 1 (listing each one as file:line:col) when some are.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:?usage: function-size.sh BUILD_DIR [LINES]}"
lines="${2:-70}"
command -v clang-tidy >/dev/null || { echo "function-size: clang-tidy is not installed (tools/setup.sh installs it)" >&2; exit 1; }
[ -f "$build/compile_commands.json" ] || { echo "function-size: no $build/compile_commands.json" >&2; exit 1; }
cd "$root"
config="{Checks: '-*,readability-function-size', WarningsAsErrors: 'readability-function-size', CheckOptions: [{key: readability-function-size.LineThreshold, value: $lines}]}"
files="$(git ls-files 'scenarios/*.cpp' 'tools/*.cpp' | grep -v '/fixtures/')"
[ -n "$files" ] || { echo "function-size: no source files found (not a git checkout?)" >&2; exit 1; }
# clang-tidy exits non-zero on a violation (WarningsAsErrors); its output says which.
out="$(printf '%s\n' "$files" | xargs -P "$(nproc 2>/dev/null || echo 2)" -n 4 clang-tidy -p "$build" --quiet --config="$config" 2>&1 || true)"
if printf '%s\n' "$out" | grep -q 'clang-diagnostic-error'; then
  printf '%s\n' "$out" | grep -B2 -A2 'clang-diagnostic-error' | head -n 30
  echo "function-size: clang-tidy could not compile some files; nothing was judged" >&2
  exit 1
fi
over="$(printf '%s\n' "$out" | grep -E 'note: [0-9]+ lines including' || true)"
if [ -n "$over" ]; then
  printf '%s\n' "$over"
  echo "function-size: $(printf '%s\n' "$over" | wc -l) function(s) over $lines lines"
  exit 1
fi
echo "function-size: every function in scenarios/ and tools/ is at most $lines lines"
