#!/bin/bash
# Submits a socsim experiment as a Slurm array of N shards (experiment.sbatch), then the merge
# (merge.sbatch) as a job that starts only when every shard succeeded (--dependency=afterok).
# Prints the two job ids, "ARRAY MERGE", on its last line.
#
#   deploy/slurm/submit.sh FILE DIR N [socsim experiment flags...]
#   deploy/slurm/submit.sh experiments/sir-beta.ts /shared/sir-beta 4 --seeds 8
#
# FILE and DIR may be relative to the current directory (they are made absolute, since the jobs
# run in SOCSIM_HOME); DIR must be on a file system every node sees. The jobs run in SOCSIM_HOME
# (default: the current directory), where `npx socsim` must find socsim, and write their logs
# (socsim-<array>_<task>.log, socsim-merge-<job>.log) in the current directory. Extra sbatch
# options go in SBATCH_* variables (e.g. SBATCH_PARTITION, SBATCH_ACCOUNT), which both jobs read.
set -euo pipefail
FILE=$(realpath -e -- "${1:?experiment file}")
OUT=$(realpath -m -- "${2:?experiment directory on a shared file system}")
N=${3:?number of shards}
shift 3
if ! [[ $N =~ ^[1-9][0-9]*$ ]]; then echo "submit.sh: N must be a whole number >= 1 (got $N)" >&2; exit 2; fi
HERE=$(cd "$(dirname "$0")" && pwd)
export SOCSIM_HOME=${SOCSIM_HOME:-$PWD}
ARRAY=$(sbatch --parsable --array=0-$((N - 1)) "$HERE/experiment.sbatch" "$FILE" "$OUT" "$N" "$@")
ARRAY=${ARRAY%%;*} # --parsable prints "id" or "id;cluster"
MERGE=$(sbatch --parsable --dependency=afterok:"$ARRAY" "$HERE/merge.sbatch" "$OUT")
MERGE=${MERGE%%;*}
echo "submitted shards $ARRAY (array 0-$((N - 1))) and the merge $MERGE after them; tables in $OUT"
echo "$ARRAY $MERGE"
