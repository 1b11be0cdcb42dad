#!/usr/bin/env bash
# Slurm: a sweep as a job array, one shard a task. `--shard auto` reads SLURM_ARRAY_TASK_ID,
# SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_STEP and SLURM_ARRAY_TASK_COUNT, so the array's size
# is the number of shards, whatever range, step or throttle it is given:
#   sbatch --array=1-8 examples/ci/slurm-array.sh [FILE [SEEDS [DIR]]]
#   sbatch --array=0-15:4 ...   (4 shards)      sbatch --array=1-16%4 ...   (16, four at a time)
# FILE defaults to scenarios/catalog/partition.yaml, SEEDS to 1..100000, DIR (where the shards'
# results files go: DIR/shardK.jsonl, K the task id) to sweep. Then, once every task has ended,
# the merge (examples/ci/slurm-merge.sh):
#   sbatch --dependency=afterany:<array job id> examples/ci/slurm-merge.sh [DIR]
# afterany, not afterok: a task whose shard found a failing seed exits 1, and the merge should
# still run. A task that was cancelled or lost resumes its own results file when run again
# (`scontrol requeue <job>_<task>` keeps its array variables, so it is the same shard).
# LETITCRASH names the program (default build/letitcrash); a task gets SLURM_CPUS_PER_TASK jobs.
#SBATCH --job-name=letitcrash-sweep
#SBATCH --array=1-8
#SBATCH --cpus-per-task=2
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
file="${1:-scenarios/catalog/partition.yaml}"
seeds="${2:-1..100000}"
dir="${3:-sweep}"
mkdir -p "$dir"
exec "${LETITCRASH:-build/letitcrash}" sweep "$file" --seeds "$seeds" --shard auto \
  --jobs "${SLURM_CPUS_PER_TASK:-1}" --out "$dir/shard${SLURM_ARRAY_TASK_ID}.jsonl"
