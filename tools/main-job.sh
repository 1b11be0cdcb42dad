#!/usr/bin/env bash
# The main job: set up, build, run every scenario of the bundled catalogue (scenarios/catalog/)
# with its reports, and leave them in out/: out/index.html lists the runs, each run's folder has
# its own index.html (verdict, checks, tree, timeline, trace, Perfetto trace, JUnit, summary).
# Exit 0 when every scenario's checks hold, 1 otherwise. A benchmark smoke run lands in
# out/bench.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/out"
. "$root/tools/phase-times.sh"  # `phase NAME`: timed only when LETITCRASH_PHASES is set
phase setup
"$root/tools/setup.sh" --main-job  # only the program and the benchmark's SimGrid peer, no tests
mkdir -p "$out"
cd "$root"   # scenario paths in the reports are relative to the checkout

phase catalogue
status=0
rows=""
for f in scenarios/catalog/*.yaml; do
  name="$(basename "$f" .yaml)"
  if build/letitcrash run "$f" --out "$out/$name"; then verdict=PASS; else verdict=FAIL; status=1; fi
  rows+="<tr><td><a href=\"$name/index.html\">$name</a></td><td class=\"$verdict\">$verdict</td><td><code>$f</code></td></tr>"
  echo
done

cat > "$out/index.html.tmp" <<HTML
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>letitcrash: the scenario catalogue</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.3em .8em;text-align:left}.PASS{color:#176b2c;font-weight:bold}
.FAIL{color:#b00020;font-weight:bold}</style></head>
<body><h1>letitcrash: the scenario catalogue</h1>
<p>Each row is one run of a file in <code>scenarios/catalog/</code>; the name opens its reports.</p>
<table><tr><th>scenario</th><th>verdict</th><th>file</th></tr>$rows</table>
<p>Benchmark smoke run: <a href="bench.txt">bench.txt</a></p></body></html>
HTML
mv "$out/index.html.tmp" "$out/index.html"

phase bench
build/letitcrash bench --quick > "$out/bench.txt.tmp"
mv "$out/bench.txt.tmp" "$out/bench.txt"
phase
echo "Reports: $out/index.html (one folder per scenario), $out/bench.txt"
exit $status
