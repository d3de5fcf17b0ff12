#!/usr/bin/env bash
# Fine-tune hat_bart_large (hat) or the plain BART (plain; 1024 positions: BART's own table)
# from BART. 004 Sec. 4.1: 20000 updates of 64 articles, lr 3e-5 with linear decay (warmup: not
# stated; BART's CNN/DM recipe uses 500); 64 = BATCH x PAPER_UPDATE_FREQ x PAPER_GPUS (4 x 8 x 2).
# usage: train.sh WORK BART_DIR hat|plain [extra fairseq-train args]
set -euo pipefail
# The updates, warm-up and batch: the table's (fairseq_hier/recipes/architectures.py, HAT's cnndm).
SETTINGS_DATASET=${SETTINGS_DATASET:-cnndm} MAX_SOURCE=${MAX_SOURCE:-1024} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" train "$@"
