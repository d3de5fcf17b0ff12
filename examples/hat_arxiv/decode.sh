#!/usr/bin/env bash
# Decode the test split and score it with ROUGE-1.5.5. 004 Sec. 4.1: beam 2, length penalty 1,
# min 72 and max 966 tokens.
# usage: decode.sh WORK BART_DIR hat|plain [extra fairseq-generate args]
set -euo pipefail
MAX_SOURCE=${MAX_SOURCE:-3072} BEAM=${BEAM:-2} LENPEN=${LENPEN:-1.0} MIN_LEN=${MIN_LEN:-72} MAX_LEN=${MAX_LEN:-966} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" decode "$@"
