#!/usr/bin/env bash
# The sweep and merge tests that take more than one command (tools/CMakeLists.txt registers each):
#   sweep_test.sh MODE LETITCRASH TESTDATA_DIR WORK_DIR
# MODE: shards | runners | resume | other-sweep | merge-errors | folder. Every file lands in WORK_DIR (emptied first).
set -euo pipefail
mode=$1
lic=$2
data=$3
work=$4
export LC_ALL=C  # sort the same way everywhere
rm -rf "$work"
mkdir -p "$work"
cd "$work"
chaos="$data/sweep_chaos.yaml"
flaky="$data/sweep_flaky.yaml"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# run RC LOG ARGS...: runs letitcrash with ARGS, keeps stdout and stderr in LOG, checks the exit code.
run() {
  local want=$1 log=$2 rc=0
  shift 2
  echo "+ letitcrash $*"
  "$lic" "$@" >"$log" 2>&1 || rc=$?
  cat "$log"
  [ "$rc" = "$want" ] || fail "letitcrash $* exited $rc, not $want"
}
# run_with RC LOG COMMAND...: as run, for a command line that is not just letitcrash's arguments
# (env VAR=VALUE ... letitcrash ...).
run_with() {
  local want=$1 log=$2 rc=0
  shift 2
  echo "+ $*"
  "$@" >"$log" 2>&1 || rc=$?
  cat "$log"
  [ "$rc" = "$want" ] || fail "$* exited $rc, not $want"
}
# says LOG REGEX: LOG has a line matching the extended regex.
says() { grep -qE -- "$2" "$1" || fail "$1 does not say /$2/"; }
# same_results A B: the same header and the same seed lines, in any order.
same_results() {
  [ "$(head -n 1 "$1")" = "$(head -n 1 "$2")" ] || fail "the headers of $1 and $2 differ"
  diff <(tail -n +2 "$1" | sort) <(tail -n +2 "$2" | sort) || fail "$1 and $2 hold different results"
}
seed_lines() { echo $(($(wc -l <"$1") - 1)); }

case "$mode" in
shards)
  # One job unsharded against two jobs on two shards: equal results also say the threads do not
  # disturb one another's runs.
  run 0 a.log sweep "$chaos" --seeds 1..200 --jobs 1 --check-determinism --out A.jsonl
  says a.log "determinism: 0 mismatches"
  says a.log "wall time: .* [0-9.]+ seeds/s"
  run 0 b1.log sweep "$chaos" --seeds 1..200 --jobs 2 --check-determinism --shard 1/2 --out B1.jsonl
  run 0 b2.log sweep "$chaos" --seeds 1..200 --jobs 2 --check-determinism --shard 2/2 --out B2.jsonl
  [ "$(seed_lines B1.jsonl)" = 100 ] && [ "$(seed_lines B2.jsonl)" = 100 ] || fail "each shard should hold 100 seeds"
  run 0 m.log merge B.jsonl B1.jsonl B2.jsonl
  says m.log "seeds: +200$"
  same_results A.jsonl B.jsonl
  tail -n +2 B.jsonl | sed -E 's/^\{"seed":([0-9]+),.*/\1/' | sort -n -c || fail "merge did not sort the seeds"
  # A merge that lacks a shard reads as an unsharded sweep stopped half way: the command it
  # prints resumes it, running only the missing seeds.
  run 1 half.log merge H.jsonl B2.jsonl
  says half.log "missing: +100 seeds of 1..200: 1, 3, 5, .* and 90 more gaps"
  resume=$(sed -n 's/^  resume the merged file to run just those: [^ ]*letitcrash //p' half.log)
  [ -n "$resume" ] || fail "merge did not print the command that resumes it"
  eval "run 0 resume.log $resume"
  says resume.log "^resuming: 100 of 200 seeds already done"
  same_results A.jsonl H.jsonl
  ;;
runners)
  # --shard auto as each job array's runner sets the environment (examples/ci/): four jobs of a
  # runner, merged, equal one unsharded sweep. Kubernetes gives only the index (auto/4).
  run 0 all.log sweep "$chaos" --seeds 1..40 --jobs 1 --out ALL.jsonl
  clean=(-u JOB_COMPLETION_INDEX -u CI_NODE_INDEX -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_STEP)  # whatever runs this test
  for k in 1 2 3 4; do
    run_with 0 k8s$k.log env "${clean[@]}" JOB_COMPLETION_INDEX=$((k - 1)) "$lic" sweep "$chaos" --seeds 1..40 --jobs 1 --shard auto/4 --out K$k.jsonl
    says k8s$k.log "^shard $k/4 from JOB_COMPLETION_INDEX \(Kubernetes Indexed Job\)"
    run_with 0 gitlab$k.log env "${clean[@]}" CI_NODE_INDEX=$k CI_NODE_TOTAL=4 "$lic" sweep "$chaos" --seeds 1..40 --jobs 1 --shard auto --out G$k.jsonl
    says gitlab$k.log "^shard $k/4 from CI_NODE_INDEX/CI_NODE_TOTAL \(GitLab\)"
    run_with 0 slurm$k.log env "${clean[@]}" SLURM_ARRAY_TASK_ID=$((k + 9)) SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_COUNT=4 \
      "$lic" sweep "$chaos" --seeds 1..40 --jobs 1 --shard auto --out S$k.jsonl
    says slurm$k.log "^shard $k/4 from SLURM_ARRAY_TASK_ID"
  done
  for r in K G S; do
    run 0 merge$r.log merge $r.jsonl ${r}1.jsonl ${r}2.jsonl ${r}3.jsonl ${r}4.jsonl
    says merge$r.log "seeds: +40$"
    same_results ALL.jsonl $r.jsonl
  done
  # The header records the resolved shard, not "auto".
  head -n 1 K3.jsonl | grep -q '"shard":"3/4"' || fail "K3.jsonl's header does not record shard 3/4"
  # No runner's variables: exit 2 with the names to set. A count that disagrees: exit 2.
  run_with 2 none.log env "${clean[@]}" "$lic" sweep "$chaos" --seeds 1..4 --shard auto
  says none.log "none of JOB_COMPLETION_INDEX \(Kubernetes\), CI_NODE_INDEX \(GitLab\) or SLURM_ARRAY_TASK_ID"
  run_with 2 k8s.log env "${clean[@]}" JOB_COMPLETION_INDEX=0 "$lic" sweep "$chaos" --seeds 1..4 --shard auto
  says k8s.log "gives the index but not the count: write --shard auto/N"
  run_with 2 clash.log env "${clean[@]}" CI_NODE_INDEX=1 CI_NODE_TOTAL=3 "$lic" sweep "$chaos" --seeds 1..4 --shard auto/4
  says clash.log "the runner says 3 shards"
  # A Slurm array with a step (--array=0-15:4: tasks 0, 4, 8, 12) is shard 1..4 by the step;
  # an index past any count, or a task id off the step, is refused (issue 34).
  run_with 0 step.log env "${clean[@]}" SLURM_ARRAY_TASK_ID=8 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=4 SLURM_ARRAY_TASK_COUNT=4 \
    "$lic" sweep "$chaos" --seeds 1..8 --jobs 1 --shard auto
  says step.log "^shard 3/4 from SLURM_ARRAY_TASK_ID"
  run_with 2 offstep.log env "${clean[@]}" SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=4 SLURM_ARRAY_TASK_COUNT=4 \
    "$lic" sweep "$chaos" --seeds 1..8 --shard auto
  says offstep.log "is not SLURM_ARRAY_TASK_MIN 0 plus a whole number of SLURM_ARRAY_TASK_STEP 4"
  run_with 2 huge.log env "${clean[@]}" JOB_COMPLETION_INDEX=18446744073709551615 "$lic" sweep "$chaos" --seeds 1..4 --shard auto/4
  says huge.log "JOB_COMPLETION_INDEX=18446744073709551615 is past any shard a count can name"
  ;;
resume)
  run 1 full.log sweep "$flaky" --seeds 1..60 --jobs 2 --out full.jsonl
  # A sweep stopped after five seeds, in the middle of writing the sixth.
  { head -n 6 full.jsonl; sed -n 7p full.jsonl | head -c 40; } >part.jsonl
  run 1 part.log sweep "$flaky" --seeds 1..60 --jobs 2 --out part.jsonl
  says part.log "part.jsonl:7: dropped a torn last line"
  says part.log "^resuming: 5 of 60 seeds already done"
  says part.log "seeds: +60 \(5 resumed from part.jsonl, 55 run now\)"
  [ "$(grep 'failed:' full.log)" = "$(grep 'failed:' part.log)" ] || fail "the resumed sweep counts other failures"
  same_results full.jsonl part.jsonl
  run 1 again.log sweep "$flaky" --seeds 1..60 --jobs 2 --out part.jsonl
  says again.log "^resuming: 60 of 60 seeds already done"
  same_results full.jsonl part.jsonl
  # A whole last line that is not a result is a mistake, not a torn line: exit 2, the file kept.
  { head -n 6 full.jsonl; echo '{"seed": "not a number"}'; } >bad.jsonl
  cp bad.jsonl bad.kept
  run 2 bad.log sweep "$flaky" --seeds 1..60 --jobs 2 --out bad.jsonl
  says bad.log "bad.jsonl:7: not a seed result line"
  cmp bad.jsonl bad.kept || fail "a refused resume changed the results file"
  ;;
other-sweep)
  run 1 first.log sweep "$flaky" --seeds 1..10 --out r.jsonl
  cp r.jsonl kept.jsonl
  run 2 seeds.log sweep "$flaky" --seeds 1..20 --out r.jsonl
  says seeds.log "r.jsonl:1: holds the results of another sweep \(seeds 1..10 in r.jsonl, 1..20 in this sweep\).*--fresh"
  run 2 tie.log sweep "$flaky" --seeds 1..10 --tie-break random --out r.jsonl
  says tie.log "tie-break fifo in r.jsonl, random in this sweep"
  run 2 det.log sweep "$flaky" --seeds 1..10 --check-determinism --out r.jsonl
  says det.log "--check-determinism off in r.jsonl, on in this sweep"
  run 2 shard.log sweep "$flaky" --seeds 1..10 --shard 1/2 --out r.jsonl
  says shard.log "shard 1/1 in r.jsonl, 1/2 in this sweep"
  run 2 scenario.log sweep "$chaos" --seeds 1..10 --out r.jsonl
  says scenario.log "the scenario differs"
  cmp r.jsonl kept.jsonl || fail "a refused resume changed the file"
  run 1 fresh.log sweep "$flaky" --seeds 1..20 --fresh --out r.jsonl
  [ "$(seed_lines r.jsonl)" = 20 ] || fail "--fresh should start the file over"
  says r.jsonl '"seeds":"1..20"'
  if command -v flock >/dev/null; then  # util-linux's flock(1) takes the lock a sweep takes
    cp r.jsonl kept.jsonl
    rc=0
    flock r.jsonl "$lic" sweep "$flaky" --seeds 1..20 --fresh --out r.jsonl >locked.log 2>&1 || rc=$?
    cat locked.log
    [ "$rc" = 2 ] || fail "a sweep on a file another sweep writes exited $rc, not 2"
    says locked.log "r.jsonl: another sweep is writing it"
    cmp r.jsonl kept.jsonl || fail "a sweep changed a file another sweep writes"
  fi
  echo "not a results file" >junk.jsonl
  run 2 junk.log sweep "$flaky" --seeds 1..10 --out junk.jsonl
  says junk.log "junk.jsonl:1: not a sweep results file"
  ;;
merge-errors)
  run 1 s1.log sweep "$flaky" --seeds 1..20 --shard 1/2 --out s1.jsonl
  run 1 s2.log sweep "$flaky" --seeds 1..20 --shard 2/2 --out s2.jsonl
  run 0 other.log sweep "$chaos" --seeds 1..20 --shard 2/2 --out other.jsonl
  run 2 mixed.log merge m.jsonl s1.jsonl other.jsonl
  says mixed.log "other.jsonl is not a shard of the same sweep as s1.jsonl"
  [ ! -e m.jsonl ] || fail "a refused merge wrote its output"
  # A shard of another letitcrash version, or of a swarm sweep: refused, the file named.
  sed -E '1s/"version":"[^"]*"/"version":"0.0.1"/' s2.jsonl >v2.jsonl
  run 2 version.log merge m.jsonl s1.jsonl v2.jsonl
  says version.log "v2.jsonl is not a shard of the same sweep as s1.jsonl \(letitcrash version 0.0.1 in v2.jsonl"
  sed -E '1s/"swarm":false/"swarm":true/' s2.jsonl >w2.jsonl
  run 2 swarm.log merge m.jsonl s1.jsonl w2.jsonl
  says swarm.log "w2.jsonl is not a shard of the same sweep as s1.jsonl \(--swarm on in w2.jsonl"
  [ ! -e m.jsonl ] || fail "a refused merge wrote its output"
  sed -E '2s/"trace_hash":"[0-9a-f]{4}/"trace_hash":"ffff/' s1.jsonl >s1x.jsonl
  run 2 clash.log merge m.jsonl s1.jsonl s1x.jsonl
  says clash.log "s1x.jsonl:2: seed [0-9]+ has other results \(trace_hash ffff"
  run 1 dup.log merge m.jsonl s1.jsonl s1.jsonl s2.jsonl
  says dup.log "seeds: +20$"
  [ "$(seed_lines m.jsonl)" = 20 ] || fail "identical duplicate lines should be kept once"
  says m.jsonl '"shard":"1/1"'
  says dup.log "letitcrash run .*sweep_flaky.yaml --seed [0-9]+ --tie-break fifo  # restarts\(/root/a\)"
  run 1 half.log merge m.jsonl other.jsonl
  says half.log "missing: +10 seeds of 1..20: 1, 3, 5, 7, 9, 11, 13, 15, 17, 19$"
  says half.log "INCOMPLETE"
  # A results file's strings reach the terminal escaped (issue 34): a check name holding a
  # clear-screen and a forged verdict line is printed as \x1B[2J... on one line.
  sed -E 's/"restarts\(/"\\u001b[2J\\nverdict: PASS\\nrestarts(/g' s1.jsonl >esc1.jsonl
  sed -E 's/"restarts\(/"\\u001b[2J\\nverdict: PASS\\nrestarts(/g' s2.jsonl >esc2.jsonl
  run 1 esc.log merge e.jsonl esc1.jsonl esc2.jsonl
  ! grep -q $'\x1b' esc.log || fail "merge printed a raw escape byte from a results file"
  ! grep -q '^verdict: PASS' esc.log || fail "merge printed a forged verdict line from a results file"
  says esc.log '\\x1B\[2J\\x0Averdict: PASS\\x0Arestarts'
  # A line naming 300,000 metrics (no sweep writes one) is refused at once: it took minutes.
  python3 -c 'import json,sys; l=open(sys.argv[1]).read().splitlines(); d=json.loads(l[1]); d["metrics"]={"m%d"%i:1.0 for i in range(300000)}; open(sys.argv[2],"w").write(l[0]+"\n"+json.dumps(d)+"\n")' s1.jsonl many.jsonl
  run 2 many.log merge mm.jsonl many.jsonl
  says many.log "many.jsonl:2: names 300000 metrics, more than the 10000 a seed result may hold"
  # A field of another type where a string belongs (the results fuzzer's first finding): an error
  # at its line, exit 2; it threw out of the JSON library and ended merge with no line named.
  sed -E '1s/"kind":"letitcrash_sweep"/"kind":[]/' s1.jsonl >kind.jsonl
  run 2 kind.log merge mk.jsonl kind.jsonl
  says kind.log "kind.jsonl:1: not a sweep results file"
  ;;
folder)
  # --out DIR: results.jsonl and the pages in a folder (created with its parents), resumed as a
  # .jsonl path is; junit.xml parses with a test case per failing seed; index.html fetches nothing.
  run 1 f.log sweep "$flaky" --seeds 1..30 --jobs 2 --out deep/out
  for f in results.jsonl summary.json index.html junit.xml coverage.html; do
    [ -s "deep/out/$f" ] || fail "deep/out/$f was not written"
  done
  says f.log "^results: deep/out/results.jsonl$"
  says f.log "^summary: deep/out/summary.json$"
  says f.log "^pages: deep/out/index.html \(coverage: deep/out/coverage.html, junit: deep/out/junit.xml\)$"
  failed=$(sed -n 's/^  failed: *//p' f.log)
  [ "$failed" -gt 0 ] || fail "the flaky sweep should fail some seeds"
  cp deep/out/results.jsonl kept.jsonl
  run 1 again.log sweep "$flaky" --seeds 1..30 --jobs 2 --out deep/out
  says again.log "^resuming: 30 of 30 seeds already done \(deep/out/results.jsonl\)"
  says again.log "seeds: +30 \(30 resumed from deep/out/results.jsonl, 0 run now\)"
  cmp kept.jsonl deep/out/results.jsonl || fail "a resume with nothing to run changed results.jsonl"
  python3 - "$failed" deep/out/junit.xml deep/out/index.html <<'PY' || fail "junit.xml or index.html is not as it should be"
import sys, re, xml.etree.ElementTree as ET
from html.parser import HTMLParser
failed, junit, index = int(sys.argv[1]), sys.argv[2], sys.argv[3]
root = ET.parse(junit).getroot()
cases = root.findall("./testsuite/testcase")
seeds = [c for c in cases if c.get("name").startswith("seed ")]
assert len(seeds) == failed, (len(seeds), failed)
assert all(c.find("failure") is not None and "--seed " + c.get("name")[5:] in c.find("failure").text for c in seeds)
summary = [c for c in cases if c.get("name") == "sweep: 30 seeds"]
assert len(summary) == 1 and summary[0].find("failure") is not None
assert root.get("tests") == str(len(cases)) and root.get("failures") == str(failed + 1)
page = open(index, encoding="utf-8").read()
assert '<p id="counts" data-seeds="30" data-passed="%d" data-failed="%d">' % (30 - failed, failed) in page
class Refs(HTMLParser):
    def __init__(self):
        super().__init__(); self.src = []; self.remote_href = []; self.strip = 0; self.li = 0; self.in_failing = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "src" in a: self.src.append(a["src"])
        if tag != "a" and re.match(r"(https?:)?//", a.get("href", "")): self.remote_href.append(a["href"])
        if tag == "rect" and "seed" in a.get("class", "").split(): self.strip += 1
        if tag == "ol" and a.get("id") == "failing": self.in_failing = True
        if tag == "li" and self.in_failing and "data-seed" in a: self.li += 1
    def handle_endtag(self, tag):
        if tag == "ol": self.in_failing = False
p = Refs(); p.feed(page)
assert p.src == [], p.src
assert p.remote_href == [], p.remote_href
assert p.strip == 30, p.strip
assert p.li == failed, (p.li, failed)
assert not re.search(r"<(script|link|img|iframe)\b", page)
PY
  # The .jsonl form keeps its names and adds <stem>.junit.xml.
  run 1 j.log sweep "$flaky" --seeds 1..10 --out r.jsonl
  for f in r.jsonl r.summary.json r.index.html r.junit.xml r.coverage.html; do [ -s "$f" ] || fail "$f was not written"; done
  says j.log "^pages: r.index.html \(coverage: r.coverage.html, junit: r.junit.xml\)$"
  # merge into a folder, an input given as its folder.
  run 1 m.log merge merged deep/out
  says m.log "into merged/results.jsonl$"
  says m.log "^pages: merged/index.html \(coverage: merged/coverage.html, junit: merged/junit.xml\)$"
  same_results deep/out/results.jsonl merged/results.jsonl
  [ -s merged/summary.json ] && [ -s merged/junit.xml ] || fail "merge did not write the folder's pages"
  # The merged summary is the sweep's, coverage included (the scenario file is the one swept).
  cmp -s deep/out/summary.json merged/summary.json || fail "the merged summary.json differs from the sweep's"
  # A file that is no longer the one swept: the merge says so and leaves the coverage out.
  cp "$flaky" changed.yaml
  run 1 c1.log sweep changed.yaml --seeds 1..6 --out changed
  sed -i 's/mtbf: 5s/mtbf: 6s/' changed.yaml
  run 1 c2.log merge changed-merged changed
  says c2.log "^merge: no coverage in the summary: changed.yaml is not the file the shards ran"
  grep -q '"coverage"' changed-merged/summary.json && fail "coverage from a file that changed"
  # --shrink writes into the folder.
  run 1 s.log sweep "$flaky" --seeds 1..30 --jobs 2 --out deep/out --shrink 1
  ls deep/out/sweep_flaky.seed*.shrunk.yaml >/dev/null || fail "--shrink did not write into the folder"
  # A file that is not a folder (and not .jsonl) is refused.
  echo "not a folder" >plain
  run 2 plain.log sweep "$flaky" --seeds 1..3 --out plain
  says plain.log "plain: --out is not a folder \(a results file's name ends in .jsonl\)"
  ;;
*) fail "unknown mode '$mode'" ;;
esac
echo "ok: $mode"
