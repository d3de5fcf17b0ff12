#!/usr/bin/env bash
# Document translation, step 2: train the HAT Transformer (hat) or the plain fairseq Transformer
# baseline (plain) from scratch on the same chunks (004 Sec. 4.2: "All models are initialized
# randomly with the same training setup"): Adam (0.9, 0.98) eps 1e-6, label-smoothed cross
# entropy, linear warmup to LR then linear decay to 0 (polynomial_decay, power 1), shared joint
# embeddings, mixed precision on GPUs. A relaunch resumes from checkpoint_last.
# WORK/checkpoints/KIND is the system's run directory: fairseq-train's checkpoints, train.log,
# run.json ({"name": KIND, "arch": ARCH, "task": "document_translation", "metric": "bleu"}), and
# decode.sh's outputs per test set.
#
# usage: train.sh WORK SRC TGT hat|plain [extra fairseq-train args]
# env (defaults.sh): HAT_ARCH PLAIN_ARCH; SETTINGS_ARCH SETTINGS_DATASET: the table's row
#      (fairseq_hier/recipes/architectures.py; default the paper's WMT20 En-De, the dataset's
#      recipe sets its own), whose values UPDATES WARMUP LR MAX_TOKENS PAPER_GPUS
#      PAPER_UPDATE_FREQ DROPOUT SMOOTHING WEIGHT_DECAY replace; UPDATE_FREQ (per GPU; default
#      PAPER_GPUS x PAPER_UPDATE_FREQ / GPUs, so the paper's effective batch holds on any number
#      of GPUs) PRECISION (--fp16 on a GPU, empty on CPU) MAX_CHUNK (512) LOG_INTERVAL (100)
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 WORK SRC TGT hat|plain [fairseq-train args...]" >&2; exit 2; }
WORK=$1; SRC=$2; TGT=$3; KIND=$4; shift 4
source "$(dirname "$0")/defaults.sh"
case "$KIND" in hat) ARCH=$HAT_ARCH;; plain) ARCH=$PLAIN_ARCH;;
  *) echo "train.sh: the model kind must be hat or plain, got '$KIND'" >&2; exit 2;; esac
SAVE="$WORK/checkpoints/$KIND"
mkdir -p "$SAVE"
if [[ ! -f "$SAVE/run.json" ]]; then  # what fairseq-hier-report reads of the run
  fairseq-hier-run-json "$SAVE" --name "$KIND" --arch "$ARCH" --task document_translation \
    --metric bleu > /dev/null
fi
if [[ -f "$SAVE/done" ]]; then echo "train.sh: $SAVE/done exists, skipping"; exit 0; fi
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
# the paper's tokens per update on this machine's GPUs (GPUS: default those torch sees)
# $(...), not mapfile < <(...): a refused setting stops the recipe here
PAPER_BATCH=(--dataset "$SETTINGS_DATASET" ${MAX_TOKENS:+--max-tokens "$MAX_TOKENS"}
             ${PAPER_GPUS:+--paper-gpus "$PAPER_GPUS"}
             ${PAPER_UPDATE_FREQ:+--paper-update-freq "$PAPER_UPDATE_FREQ"})
BATCHING_TEXT=$(fairseq-hier-settings "$SETTINGS_ARCH" --stage batch "${PAPER_BATCH[@]}" \
  ${UPDATE_FREQ:+--update-freq "$UPDATE_FREQ"} ${GPUS:+--gpus "$GPUS"} --log "$SAVE/train.log")
mapfile -t BATCHING <<< "$BATCHING_TEXT"
OPTIMISATION_TEXT=$(fairseq-hier-settings "$SETTINGS_ARCH" --stage paper-train \
  --dataset "$SETTINGS_DATASET" -- ${DROPOUT:+--dropout "$DROPOUT"} \
  ${SMOOTHING:+--label-smoothing "$SMOOTHING"} ${WEIGHT_DECAY:+--weight-decay "$WEIGHT_DECAY"} \
  ${LR:+--lr "$LR"} ${WARMUP:+--warmup-updates "$WARMUP"} \
  ${UPDATES:+--total-num-update "$UPDATES" --max-update "$UPDATES"})
mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
# the paper's batch, as the log line of --stage batch names it
PAPER_TEXT=$(fairseq-hier-settings "$SETTINGS_ARCH" --stage paper-batch "${PAPER_BATCH[@]}")
mapfile -t PAPER <<< "$PAPER_TEXT"  # --max-tokens N --paper-gpus G --paper-update-freq F
if [[ -z "${PRECISION+x}" ]]; then
  PRECISION=$(python -c 'import torch; print("--fp16" if torch.cuda.is_available() else "")')
fi
echo "train.sh: $ARCH, ${BATCHING[*]}, ${OPTIMISATION[-1]} updates (the paper: ${PAPER[3]} GPUs x" \
  "${PAPER[1]} tokens x ${PAPER[5]})"
t0=$SECONDS
# shellcheck disable=SC2086  # PRECISION is empty or one flag
fairseq-train "$WORK/data-bin" --user-dir "$USER_DIR" --task document_translation \
  --source-lang "$SRC" --target-lang "$TGT" --max-chunk-tokens "$MAX_CHUNK" \
  --arch "$ARCH" --share-all-embeddings "${OPTIMISATION[@]}" "${BATCHING[@]}" --save-dir "$SAVE" \
  --no-epoch-checkpoints --log-format simple --log-interval "$LOG_INTERVAL" \
  $PRECISION "$@" 2>&1 | tee -a "$SAVE/train.log"
echo "train.sh: $KIND trained in $((SECONDS - t0)) s"
touch "$SAVE/done"
