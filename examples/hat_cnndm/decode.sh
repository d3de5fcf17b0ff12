#!/usr/bin/env bash
# Decode the test split and score it with ROUGE-1.5.5. 004 Sec. 4.1 (CNN/DM): beam 1, no length
# penalty, min 40 and max 120 tokens. XSum (the paper gives no XSum decoding settings): set
# BEAM=6 MIN_LEN=10 MAX_LEN=60, fairseq's BART XSum settings.
# usage: decode.sh WORK BART_DIR hat|plain [extra fairseq-generate args]
set -euo pipefail
MAX_SOURCE=${MAX_SOURCE:-1024} BEAM=${BEAM:-1} LENPEN=${LENPEN:-1.0} MIN_LEN=${MIN_LEN:-40} MAX_LEN=${MAX_LEN:-120} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" decode "$@"
