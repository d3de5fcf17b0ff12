#!/usr/bin/env bash
# Step 7 (README.md): decode one trained system on SUBSET with its family's rules and score it
# (protocol parsingsum: SUBSET.rouge.txt, SUBSET.rouge_whole.txt) in WORK/runs/RUN.
# usage: WORK=DIR decode.sh SYSTEM [fairseq-generate args]; env RUN CHECKPOINT SUBSET BATCH MIN_LEN MAX_LEN
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: WORK=DIR $0 SYSTEM [fairseq-generate args...]" >&2; exit 2; }
SYSTEM=$1; shift
: "${WORK:?set WORK to the output folder of the recipe}"
HERE=$(dirname "$0")
RUN=${RUN:-$SYSTEM}
source "$HERE/systems.sh"
system "$SYSTEM"
source "$HERE/generation.sh"
if [[ "$KIND" == hier ]]; then GENERATION=("${GENERATION_HIER[@]}"); fi
SUBSET=${SUBSET:-test} bash "$HERE/../common/decode.sh" "$WORK/runs/$RUN" "--protocol parsingsum" \
  --data "$WORK/data-bin" --references "$WORK/parsed/${SUBSET:-test}.tgt.tok" \
  --checkpoint "${CHECKPOINT:-$WORK/runs/$RUN/checkpoint_best.pt}" --name "$RUN" \
  --arch "$SYSTEM" --task-args="${TASK[*]}" --generation="${GENERATION[*]}" \
  --batch-size "${BATCH:-32}" -- --post-process sentencepiece "$@"
