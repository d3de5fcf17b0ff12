#!/usr/bin/env bash
# Fine-tune a SAMSum model from a CNN/DM-trained one (004 Table 5: HAT from HAT-CNN/DM, the plain
# model from plain-CNN/DM), with speaker segment embeddings (new parts: random init), K = 1 + the
# largest speaker index of the data (SEGMENTS=K overrides). Updates, batch and warmup are not in
# the paper: 5000 updates of 32 dialogues, warmup 200, are our choice (tune on validation loss).
# usage: train.sh WORK INIT_CHECKPOINT hat|plain [extra fairseq-train args]
set -euo pipefail
# The updates, warm-up and batch: the table's (fairseq_hier/recipes/architectures.py, HAT's samsum).
SEGMENTS=${SEGMENTS:-auto} SETTINGS_DATASET=${SETTINGS_DATASET:-samsum} MAX_SOURCE=${MAX_SOURCE:-1024} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" train "$@"
