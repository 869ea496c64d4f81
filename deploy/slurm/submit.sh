#!/bin/bash
# Submits an experiment as a Slurm array of N shards, then the merge as a job that starts only
# when every shard succeeded (afterok).
#
#   deploy/slurm/submit.sh experiments/sir-beta.ts /shared/sir-beta 4
set -euo pipefail
FILE=${1:?experiment file}
OUT=${2:?experiment directory on a shared file system}
N=${3:?number of shards}
HERE=$(cd "$(dirname "$0")" && pwd)
ARRAY=$(sbatch --parsable --array=0-$((N - 1)) "$HERE/experiment.sbatch" "$FILE" "$OUT" "$N")
sbatch --parsable --dependency=afterok:"$ARRAY" --job-name=socsim-merge --cpus-per-task=1 --mem=4G \
  --output=socsim-merge-%j.log --wrap "npx socsim experiment merge '$OUT'"
echo "submitted shards $ARRAY (0-$((N - 1))) and the merge after them; tables in $OUT"
