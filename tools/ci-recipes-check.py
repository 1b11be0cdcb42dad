#!/usr/bin/env python3
"""The CI recipes of examples/ci/ parse, and each one's shard count matches what runs it.

    python3 tools/ci-recipes-check.py examples/ci

Kubernetes: `completions` is the N of `--shard auto/N`, the Job is Indexed, and each pod writes
its own shard file. GitLab: `parallel:` jobs with `--shard auto` and a merge stage after them.
GitHub Actions: the matrix is shards 1..N with `--shard ${{ matrix.shard }}/N`, and the merge
job needs them. Slurm: both scripts pass `bash -n`, the array's default size is its shard count
(`--shard auto`), and the merge globs the shard files the array writes. In every recipe the
shard count is at most the seeds swept. Prints one line a recipe; exit 1 on the first problem.
"""
import re
import subprocess
import sys

import yaml

folder = sys.argv[1] if len(sys.argv) > 1 else "examples/ci"
problems = []


def seeds_in(text):
    m = re.search(r"--seeds (\d+)\.\.(\d+)", text)
    if not m:
        return None
    return int(m.group(2)) - int(m.group(1)) + 1


def need(cond, what):
    if not cond:
        problems.append(what)
    return cond


def kubernetes():
    job = yaml.safe_load(open(f"{folder}/kubernetes-indexed-job.yaml"))
    spec = job["spec"]
    args = " ".join(spec["template"]["spec"]["containers"][0]["args"])
    n = re.search(r"--shard auto/(\d+)", args)
    need(spec.get("completionMode") == "Indexed", "kubernetes: not an Indexed Job (no JOB_COMPLETION_INDEX)")
    if need(n is not None, "kubernetes: no --shard auto/N"):
        need(int(n.group(1)) == spec["completions"], f"kubernetes: --shard auto/{n.group(1)} but {spec['completions']} completions")
        need(int(n.group(1)) <= (seeds_in(args) or 0), "kubernetes: more shards than seeds")
    need("$JOB_COMPLETION_INDEX" in args.split("--out", 1)[-1], "kubernetes: the pods do not write a file each")
    return f"kubernetes-indexed-job.yaml: {spec['completions']} completions, --shard auto/{n.group(1) if n else '?'}"


def gitlab():
    ci = yaml.safe_load(open(f"{folder}/gitlab-ci.yml"))
    sweep, merge = ci["sweep"], ci["merge"]
    script = " ".join(sweep["script"])
    need(isinstance(sweep.get("parallel"), int) and sweep["parallel"] > 1, "gitlab: the sweep job has no parallel: N")
    need("--shard auto" in script, "gitlab: the sweep job does not read CI_NODE_INDEX (--shard auto)")
    need(ci["stages"].index(merge["stage"]) > ci["stages"].index(sweep["stage"]), "gitlab: merge does not come after sweep")
    need(merge.get("when") == "always", "gitlab: merge does not run when a shard failed")
    need(sweep["parallel"] <= (seeds_in(script) or 0), "gitlab: more shards than seeds")
    return f"gitlab-ci.yml: parallel {sweep['parallel']}, --shard auto"


def github():
    wf = yaml.safe_load(open(f"{folder}/github-actions.yml"))
    shard, merge = wf["jobs"]["shard"], wf["jobs"]["merge"]
    shards = shard["strategy"]["matrix"]["shard"]
    runs = " ".join(step.get("run", "") for step in shard["steps"])
    n = re.search(r"--shard \$\{\{ matrix\.shard \}\}/(\d+)", runs)
    if need(n is not None, "github: no --shard ${{ matrix.shard }}/N"):
        need(shards == list(range(1, int(n.group(1)) + 1)), f"github: the matrix {shards} is not shards 1..{n.group(1)}")
        need(int(n.group(1)) <= (seeds_in(runs) or 0), "github: more shards than seeds")
    need(merge.get("needs") == "shard", "github: the merge job does not wait for the shards")
    need(shard["strategy"].get("fail-fast") is False, "github: a failing shard cancels the others (fail-fast)")
    return f"github-actions.yml: matrix of {len(shards)}, --shard K/{n.group(1) if n else '?'}"


def slurm():
    for script in ("slurm-array.sh", "slurm-merge.sh"):
        r = subprocess.run(["bash", "-n", f"{folder}/{script}"], capture_output=True, text=True)
        need(r.returncode == 0, f"slurm: {script} does not parse: {r.stderr.strip()}")
    array = open(f"{folder}/slurm-array.sh").read()
    merge = open(f"{folder}/slurm-merge.sh").read()
    spec = re.search(r"^#SBATCH --array=(\d+)-(\d+)$", array, re.M)
    seeds = re.search(r'seeds="\$\{2:-(\d+)\.\.(\d+)\}"', array)
    need("--shard auto" in array, "slurm: the array does not read its task variables (--shard auto)")
    need('shard${SLURM_ARRAY_TASK_ID}.jsonl' in array and '"$dir"/shard*.jsonl' in merge,
         "slurm: the merge does not glob the files the array writes")
    if need(spec is not None and seeds is not None, "slurm: no default #SBATCH --array=A-B or default seeds"):
        tasks = int(spec.group(2)) - int(spec.group(1)) + 1
        need(tasks <= int(seeds.group(2)) - int(seeds.group(1)) + 1, "slurm: more tasks than seeds")
        return f"slurm-array.sh + slurm-merge.sh: --array={spec.group(1)}-{spec.group(2)} ({tasks} shards), --shard auto"
    return "slurm: ?"


for check in (kubernetes, gitlab, github, slurm):
    try:
        said = check()
    except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError) as e:
        problems.append(f"{check.__name__}: {type(e).__name__}: {e}")
        said = None
    if problems:
        print("ci-recipes: FAILED:", "; ".join(problems))
        sys.exit(1)
    print("ok", said)
print("ci-recipes: every recipe parses and shards as it says")
