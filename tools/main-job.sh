#!/usr/bin/env bash
# The main job: set up, build, run the bundled work and leave the reports in out/.
# For now: the kernel demo (out/demo/) and a benchmark smoke run (out/bench.txt); the bundled
# scenario catalogue takes the demo's place once scenarios/ exists.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/out"
"$root/tools/setup.sh"
mkdir -p "$out"
"$root/build/letitcrash" demo --seed 1 --out "$out/demo" --quiet
"$root/build/letitcrash" bench --quick | tee "$out/bench.txt.tmp"
mv "$out/bench.txt.tmp" "$out/bench.txt"
echo
echo "Reports: $out/demo/trace.txt (readable trace), $out/demo/trace.jsonl, $out/bench.txt"
