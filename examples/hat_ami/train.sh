#!/usr/bin/env bash
# Fine-tune an AMI model from a CNN/DM-trained one (004 Table 6, as SAMSum), with one segment
# embedding per role (SEGMENTS=4: prepare.sh's role ids 0-3; SEGMENTS=auto for data prepared with
# SPEAKER_IDS=appearance); the 1024-row position tables grow to 3072 on load (--position-init
# random). Updates and batch are not in the paper: 1000 updates of 8 meetings (~80 epochs of ~100
# meetings; BATCH 1 x PAPER_UPDATE_FREQ 8 x PAPER_GPUS 1, kept on any number of GPUs), warmup 50.
# usage: train.sh WORK INIT_CHECKPOINT hat|plain [extra fairseq-train args]
set -euo pipefail
# The updates, warm-up and batch: the table's (fairseq_hier/recipes/architectures.py, HAT's ami).
SEGMENTS=${SEGMENTS:-4} SETTINGS_DATASET=${SETTINGS_DATASET:-ami} MAX_SOURCE=${MAX_SOURCE:-3072} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" train "$@"
