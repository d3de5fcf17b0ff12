#!/usr/bin/env bash
# Fine-tune hat_bart_large (hat) or the plain long_bart_large (plain: same BART init, same
# 3072 positions, same data) from BART. 004 Sec. 4.1: 30000 updates of 128 articles, warmup 900
# to lr 3e-5 then linear decay; 128 = BATCH x PAPER_UPDATE_FREQ x PAPER_GPUS (4 x 16 x 2).
# usage: train.sh WORK BART_DIR hat|plain [extra fairseq-train args]
set -euo pipefail
# The updates, warm-up and batch: the table's (fairseq_hier/recipes/architectures.py, HAT's arxiv).
SETTINGS_DATASET=${SETTINGS_DATASET:-arxiv} MAX_SOURCE=${MAX_SOURCE:-3072} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" train "$@"
