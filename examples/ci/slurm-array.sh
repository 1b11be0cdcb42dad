#!/usr/bin/env bash
# Slurm: a job array of 8 tasks; each gets SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and
# SLURM_ARRAY_TASK_COUNT, which `--shard auto` reads. Submit with
#   sbatch examples/ci/slurm-array.sh
# then, when the array is done:
#   sbatch --dependency=afterany:<array job id> --wrap "build/letitcrash merge all.jsonl shard*.jsonl"
#SBATCH --job-name=letitcrash-sweep
#SBATCH --array=1-8
#SBATCH --cpus-per-task=2
set -euo pipefail
build/letitcrash sweep scenarios/catalog/partition.yaml --seeds 1..100000 --shard auto \
  --out "shard${SLURM_ARRAY_TASK_ID}.jsonl"
