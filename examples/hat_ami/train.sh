#!/usr/bin/env bash
# Fine-tune an AMI model from a CNN/DM-trained one (004 Table 6, as SAMSum), with speaker
# segment embeddings; the 1024-row position tables are tiled to 3072 on load. Updates and batch
# are not in the paper: 1000 updates of 8 meetings (~80 epochs of ~100 meetings), warmup 50.
# usage: train.sh WORK INIT_CHECKPOINT hat|plain [extra fairseq-train args]
set -euo pipefail
SEGMENTS=${SEGMENTS:-auto} UPDATES=${UPDATES:-1000} WARMUP=${WARMUP:-50} BATCH=${BATCH:-1} PAPER_UPDATE_FREQ=${PAPER_UPDATE_FREQ:-8} MAX_SOURCE=${MAX_SOURCE:-3072} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" train "$@"
