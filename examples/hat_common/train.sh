#!/usr/bin/env bash
# HAT recipes, step 2 (shared by examples/hat_*): fine-tune ARCH from a pretrained checkpoint
# (BART's model.pt, a Hugging Face BART directory, or a CNN/DM-trained model for SAMSum/AMI,
# 004 Table 5) with fairseq's own --finetune-from-model: on the first launch it loads the weights
# by name (our upgrade_state_dict_named extends the position tables and keeps the fresh init of
# the new parts, logging every key; a Hugging Face directory is first checked against ARCH and
# mapped to fairseq's keys, fairseq_hier/models/hf_bart.py), resets optimizer/scheduler/meters; a
# relaunch resumes from checkpoint_last.
# 004 Sec. 4.1 settings: Adam (0.9, 0.999) eps 1e-8, weight decay 0.01, lr 3e-5 with linear warmup
# and decay, dropout 0.1 (attention too), label smoothing 0.1, mixed precision on GPUs; no
# gradient clipping (the paper states none). These settings, the updates, warm-up and batch are the
# table's (fairseq_hier/recipes/architectures.py, HAT's row; SETTINGS_DATASET: the data set's
# variant, set by each dataset's train.sh). The model's own defaults are the paper's
# (--position-init random, --hierarchical-layers 1); pass flags of yours after RUN_DIR.
#
# usage: train.sh WORK ARCH INIT RUN_DIR [extra fairseq-train args]
#   RUN_DIR: the run folder (fairseq-train's --save-dir; recipe.sh: WORK/checkpoints/KIND): run.json,
#   the checkpoints, train.log (fairseq-train's output, appended); decode.sh adds its files
# env: SETTINGS_DATASET (arxiv) and, replacing its values, UPDATES (arXiv: 30000) WARMUP (900) LR
#      (3e-5) BATCH (4 per GPU) PAPER_GPUS (2) PAPER_UPDATE_FREQ (16): the paper's batch, BATCH x
#      PAPER_UPDATE_FREQ x PAPER_GPUS articles per update, kept on
#      this machine's GPUs (GPUS, default: those torch sees) by fairseq-hier-settings --stage batch
#      (--update-freq, and the per-GPU batch with more GPUs than that); UPDATE_FREQ: yours instead
#      PRECISION (--fp16 on a GPU, empty on CPU) SEGMENTS (0: --segment-embeddings K for dialogues)
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 WORK ARCH INIT RUN_DIR [fairseq-train args...]" >&2; exit 2; }
WORK=$1; ARCH=$2; INIT=$3; SAVE=$4; shift 4
if [[ -f "$SAVE/done" ]]; then echo "train.sh: $SAVE/done exists, skipping"; exit 0; fi
[[ -f "$INIT" || -f "$INIT/config.json" ]] \
  || { echo "train.sh: $INIT not found (a checkpoint file or a Hugging Face BART directory)" >&2; exit 1; }
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
if [[ -z "${PRECISION+x}" ]]; then
  PRECISION=$(python -c 'import torch; print("--fp16" if torch.cuda.is_available() else "")')
fi
SEGMENT_FLAGS=()  # only for dialogue models: fairseq's own bart_* archs have no such option
[[ "${SEGMENTS:-0}" != 0 ]] && SEGMENT_FLAGS=(--segment-embeddings "$SEGMENTS")
mkdir -p "$SAVE"
# $(...), not mapfile < <(...): a refused setting stops the recipe here
DATASET=${SETTINGS_DATASET:-arxiv}
BATCHING_TEXT=$(fairseq-hier-settings hat_bart_large --stage batch --dataset "$DATASET" \
  ${BATCH:+--batch-size "$BATCH"} ${PAPER_GPUS:+--paper-gpus "$PAPER_GPUS"} \
  ${PAPER_UPDATE_FREQ:+--paper-update-freq "$PAPER_UPDATE_FREQ"} \
  ${UPDATE_FREQ:+--update-freq "$UPDATE_FREQ"} ${GPUS:+--gpus "$GPUS"} --log "$SAVE/train.log")
mapfile -t BATCHING <<< "$BATCHING_TEXT"
OPTIMISATION_TEXT=$(fairseq-hier-settings hat_bart_large --stage paper-train --dataset "$DATASET" \
  -- ${LR:+--lr "$LR"} ${WARMUP:+--warmup-updates "$WARMUP"} \
  ${UPDATES:+--total-num-update "$UPDATES" --max-update "$UPDATES"})
mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
fairseq-hier-run-json "$SAVE" --name "$(basename "$SAVE")" --arch "$ARCH" \
  --task hat_summarization --metric rouge > /dev/null
# shellcheck disable=SC2086  # PRECISION is empty or one flag
fairseq-train "$WORK/data-bin" --user-dir "$USER_DIR" --task hat_summarization \
  --source-lang source --target-lang target --arch "$ARCH" --finetune-from-model "$INIT" \
  "${SEGMENT_FLAGS[@]}" "${OPTIMISATION[@]}" "${BATCHING[@]}" \
  --save-dir "$SAVE" --no-epoch-checkpoints --log-format simple --log-interval "${LOG_INTERVAL:-100}" \
  $PRECISION "$@" 2>&1 | tee -a "$SAVE/train.log"
touch "$SAVE/done"
