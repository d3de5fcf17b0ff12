#!/usr/bin/env bash
# 002's optimisation, batch and checkpoints (Sec. 4; hiersumm's training options), shared by
# train_liu_ht.sh and train_ft.sh, which pass their architecture and shape: Adam (0.9, 0.998)
# with Noam's schedule (peak 1.3975e-3 after 8,000 warm-up steps), label smoothing 0.1, the title
# + top 24 paragraphs of at most 500 tokens, batches of 10,500 source tokens x 16 accumulated
# (kept on any number of GPUs by fairseq-hier-settings --stage batch; GPUS: default those torch
# sees; MAX_TOKENS and UPDATE_FREQ: yours instead), 500k updates, a checkpoint every 5,000
# updates, the 5 of lowest validation loss kept (five_best.sh). The optimiser, schedule, updates
# and batch are liu_ht's row of the table of architectures (fairseq-hier-settings liu_ht --stage
# paper-train; fairseq_hier/recipes/architectures.py).
# usage: train_002.sh ARCH DATA_BIN RUN_DIR [fairseq-train args: the caller's shape, then yours]
#   RUN_DIR (--save-dir): checkpoints, train.log (fairseq-train's output, appended), run.json
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 ARCH DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
ARCH=$1; DATA=$2; SAVE=$3; shift 3
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
source "$(dirname "$0")/paper_settings.sh"
paper_settings liu_ht "$ARCH" "$SAVE" ${MAX_TOKENS:+--max-tokens "$MAX_TOKENS"} \
  ${UPDATE_FREQ:+--update-freq "$UPDATE_FREQ"}
fairseq-train "$DATA" --user-dir "$USER_DIR" --task hierarchical_summarization \
  --max-paragraphs 24 --max-paragraph-tokens 500 --arch "$ARCH" \
  "${OPTIMISATION[@]}" "${BATCHING[@]}" \
  --save-dir "$SAVE" --save-interval-updates 5000 --validate-interval-updates 5000 \
  --keep-interval-updates 5 --keep-best-checkpoints 5 --skip-invalid-size-inputs-valid-test "$@" \
  2>&1 | tee -a "$SAVE/train.log"
