#!/usr/bin/env bash
# Slurm: joins the shards examples/ci/slurm-array.sh wrote into DIR/merged/ (results.jsonl,
# summary.json, index.html, junit.xml, coverage.html). Submit it to run after the array:
#   sbatch --dependency=afterany:<array job id> examples/ci/slurm-merge.sh [DIR]
# Exit 1 when a seed failed or a shard's seeds are missing: the log names the missing ranges and
# the command that runs just those.
#SBATCH --job-name=letitcrash-merge
#SBATCH --output=slurm-merge-%j.out
set -euo pipefail
dir="${1:-sweep}"
exec "${LETITCRASH:-build/letitcrash}" merge "$dir/merged" "$dir"/shard*.jsonl
