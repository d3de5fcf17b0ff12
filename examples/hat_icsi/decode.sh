#!/usr/bin/env bash
# Decode the ICSI test meetings and score them with ROUGE-1.5.5 (settings: decoding.sh).
# usage: decode.sh WORK BART_DIR hat|plain [extra fairseq-generate args]
#   into the run folder WORK/checkpoints/KIND (train.sh's): generate-test.txt, test.hyp, test.ref,
#   test.rouge.txt (../hat_common/decode.sh)
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # BEAM LENPEN MIN_LEN MAX_LEN, also recorded by prepare.sh
MAX_SOURCE=${MAX_SOURCE:-3072} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" decode "$@"
