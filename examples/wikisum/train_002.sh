#!/usr/bin/env bash
# 002's optimisation, batch and checkpoints (README.md, step 4), for train_liu_ht.sh and train_ft.sh.
# usage: train_002.sh ARCH DATA_BIN RUN_DIR [fairseq-train args]; env GPUS MAX_TOKENS UPDATE_FREQ
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 ARCH DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
ARCH=$1; DATA=$2; SAVE=$3; shift 3
source "$(dirname "$0")/paper_settings.sh"
paper_settings liu_ht "$ARCH" "$SAVE" ${MAX_TOKENS:+--max-tokens "$MAX_TOKENS"} \
  ${UPDATE_FREQ:+--update-freq "$UPDATE_FREQ"}
fairseq-train "$DATA" --user-dir "$ROOT/fairseq_hier" --task hierarchical_summarization \
  --max-paragraphs 24 --max-paragraph-tokens 500 --arch "$ARCH" \
  "${OPTIMISATION[@]}" "${BATCHING[@]}" \
  --save-dir "$SAVE" --save-interval-updates 5000 --validate-interval-updates 5000 \
  --keep-interval-updates 5 --keep-best-checkpoints 5 --skip-invalid-size-inputs-valid-test "$@" \
  2>&1 | tee -a "$SAVE/train.log"
