#!/usr/bin/env bash
# Fine-tune an AMI model from a CNN/DM-trained one (004 Table 6, as SAMSum), with one segment
# embedding per role (SEGMENTS=4: prepare.sh's role ids 0-3; SEGMENTS=auto for data prepared with
# SPEAKER_IDS=appearance); the 1024-row position tables grow to 3072 on load (--position-init
# random). Updates and batch are not in the paper: 1000 updates of 8 meetings (~80 epochs of ~100
# meetings; BATCH 1 x PAPER_UPDATE_FREQ 8 x PAPER_GPUS 1, kept on any number of GPUs), warmup 50.
# usage: train.sh WORK INIT_CHECKPOINT hat|plain [extra fairseq-train args]
set -euo pipefail
SEGMENTS=${SEGMENTS:-4} UPDATES=${UPDATES:-1000} WARMUP=${WARMUP:-50} BATCH=${BATCH:-1} PAPER_UPDATE_FREQ=${PAPER_UPDATE_FREQ:-8} PAPER_GPUS=${PAPER_GPUS:-1} MAX_SOURCE=${MAX_SOURCE:-3072} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" train "$@"
