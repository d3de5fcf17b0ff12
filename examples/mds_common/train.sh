#!/usr/bin/env bash
# Step 6 (README.md): train one of the four systems on WORK/data-bin with 003's settings (the
# table's row: FT's for the flat systems, HT's for the hierarchical ones).
# usage: WORK=DIR train.sh SYSTEM [fairseq-train args]
# env: RUN MAX_TOKENS PAPER_UPDATE_FREQ UPDATE_FREQ GPUS MAX_UPDATE DECAY_PERIOD SAVE_INTERVAL PRECISION
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: WORK=DIR $0 SYSTEM [fairseq-train args...]" >&2; exit 2; }
SYSTEM=$1; shift
: "${WORK:?set WORK to the output folder of the recipe}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUN=${RUN:-$SYSTEM}
SAVE="$WORK/runs/$RUN"
if [[ -f "$SAVE/done" ]]; then echo "train.sh: $SAVE/done exists, skipping"; exit 0; fi
source "$ROOT/examples/mds_common/systems.sh"
system "$SYSTEM"
# one example (the smallest batch): the concatenation's positions (flat), the paragraph grid (hier)
SMALLEST=${FLAT_POSITIONS:-500}
if [[ "$KIND" == flat ]]; then SAVE_INTERVAL=${SAVE_INTERVAL:-2000}
else SAVE_INTERVAL=${SAVE_INTERVAL:-5000}; SMALLEST=$(( ${MAX_PARAGRAPHS:-10} * ${MAX_PARAGRAPH_TOKENS:-160} )); fi
mkdir -p "$SAVE"
SETTINGS=("$ROW" --dataset "${SETTINGS_DATASET:-multi_news}")
BATCHING_TEXT=$(fairseq-hier-settings "${SETTINGS[@]}" --stage batch ${MAX_TOKENS:+--max-tokens "$MAX_TOKENS"} \
  ${PAPER_UPDATE_FREQ:+--paper-update-freq "$PAPER_UPDATE_FREQ"} --smallest "$SMALLEST" \
  ${UPDATE_FREQ:+--update-freq "$UPDATE_FREQ"} ${GPUS:+--gpus "$GPUS"} --log "$SAVE/train.log")
mapfile -t BATCHING <<< "$BATCHING_TEXT"
OPTIMISATION_TEXT=$(fairseq-hier-settings "${SETTINGS[@]}" --stage paper-train -- \
  ${MAX_UPDATE:+--max-update "$MAX_UPDATE"} ${DECAY_PERIOD:+--lr-deacy-period "$DECAY_PERIOD"})
mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
fairseq-hier-record run "$SAVE" --name "$RUN" --arch "$SYSTEM" \
  --task hierarchical_summarization --metric rouge > /dev/null
fairseq-train "$WORK/data-bin" --user-dir "$ROOT/fairseq_hier" --task hierarchical_summarization \
  "${ARCH[@]}" "${TASK[@]}" "${OPTIMISATION[@]}" "${BATCHING[@]}" \
  --save-dir "$SAVE" --save-interval-updates "$SAVE_INTERVAL" \
  --validate-interval-updates "$SAVE_INTERVAL" --keep-interval-updates 2 --no-epoch-checkpoints \
  --skip-invalid-size-inputs-valid-test --log-format simple --log-interval 100 \
  ${PRECISION:+"$PRECISION"} "$@" 2>&1 | tee -a "$SAVE/train.log"
touch "$SAVE/done"
