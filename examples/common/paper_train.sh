#!/usr/bin/env bash
# usage: paper_train.sh DATA_BIN RUN_DIR ROW DATASET ARCH TASK METRIC [fairseq-train args]: ARCH
# trained into the run folder with the table's optimisation and batch for ROW on DATASET, the batch
# kept on this machine's GPUs (examples/hat_common/README.md). env: BATCH or MAX_TOKENS PAPER_GPUS
# PAPER_UPDATE_FREQ UPDATE_FREQ GPUS LR WARMUP UPDATES DROPOUT SMOOTHING WEIGHT_DECAY PRECISION LOG_INTERVAL
set -euo pipefail
[[ $# -ge 7 ]] || { echo "usage: $0 DATA_BIN RUN_DIR ROW DATASET ARCH TASK METRIC [fairseq-train args...]" >&2; exit 2; }
BIN=$1; RUN=$2; ROW=$3; DATASET=$4; ARCH=$5; TASK=$6; METRIC=$7; shift 7
mkdir -p "$RUN"
[[ -f "$RUN/run.json" ]] || fairseq-hier-record run "$RUN" --name "$(basename "$RUN")" \
  --arch "$ARCH" --task "$TASK" --metric "$METRIC" > /dev/null
if [[ -f "$RUN/done" ]]; then echo "paper_train.sh: $RUN/done exists, skipping"; exit 0; fi
# $(...), not mapfile < <(...): a refused setting stops the recipe here
TEXT=$(fairseq-hier-settings "$ROW" --stage batch --dataset "$DATASET" ${BATCH:+--batch-size "$BATCH"} \
  ${MAX_TOKENS:+--max-tokens "$MAX_TOKENS"} ${PAPER_GPUS:+--paper-gpus "$PAPER_GPUS"} \
  ${PAPER_UPDATE_FREQ:+--paper-update-freq "$PAPER_UPDATE_FREQ"} \
  ${UPDATE_FREQ:+--update-freq "$UPDATE_FREQ"} ${GPUS:+--gpus "$GPUS"} --log "$RUN/train.log")
mapfile -t BATCHING <<< "$TEXT"
TEXT=$(fairseq-hier-settings "$ROW" --stage paper-train --dataset "$DATASET" -- \
  ${DROPOUT:+--dropout "$DROPOUT"} ${SMOOTHING:+--label-smoothing "$SMOOTHING"} \
  ${WEIGHT_DECAY:+--weight-decay "$WEIGHT_DECAY"} ${LR:+--lr "$LR"} \
  ${WARMUP:+--warmup-updates "$WARMUP"} ${UPDATES:+--total-num-update "$UPDATES" --max-update "$UPDATES"})
mapfile -t OPTIMISATION <<< "$TEXT"
PRECISION=${PRECISION-$(nvidia-smi -L > /dev/null 2>&1 && echo --fp16 || true)}
echo "paper_train.sh: $ARCH, ${BATCHING[*]}, ${OPTIMISATION[-1]} updates"
t0=$SECONDS
# shellcheck disable=SC2086  # PRECISION is empty or one flag
fairseq-train "$BIN" --user-dir "$(cd "$(dirname "$0")/../../fairseq_hier" && pwd)" \
  --task "$TASK" --arch "$ARCH" "${OPTIMISATION[@]}" "${BATCHING[@]}" --save-dir "$RUN" \
  --no-epoch-checkpoints --log-format simple --log-interval "${LOG_INTERVAL:-100}" $PRECISION "$@" \
  2>&1 | tee -a "$RUN/train.log"
echo "paper_train.sh: $(basename "$RUN") trained in $((SECONDS - t0)) s"
touch "$RUN/done"
