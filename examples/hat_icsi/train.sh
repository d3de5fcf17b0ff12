#!/usr/bin/env bash
# Fine-tune an ICSI model from a CNN/DM-trained one (004 Table 6, as AMI), with speaker segment
# embeddings (K = 1 + the largest appearance index of the data); the 1024-row position tables
# grow to 3072 on load (--position-init random). Updates and batch are not in the paper: 500
# updates of 8 meetings (~90 epochs of ~43 meetings, as many epochs as AMI's; BATCH 1 x
# PAPER_UPDATE_FREQ 8 x PAPER_GPUS 1, kept on any number of GPUs), warmup 50.
# usage: train.sh WORK INIT_CHECKPOINT hat|plain [extra fairseq-train args]
set -euo pipefail
# The updates, warm-up and batch: the table's (fairseq_hier/recipes/architectures.py, HAT's icsi).
SEGMENTS=${SEGMENTS:-auto} SETTINGS_DATASET=${SETTINGS_DATASET:-icsi} MAX_SOURCE=${MAX_SOURCE:-3072} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" train "$@"
