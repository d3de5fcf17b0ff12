#!/usr/bin/env bash
# Decode the SAMSum test split and score it with ROUGE-1.5.5. The paper gives no decoding
# settings for SAMSum: beam 4, length penalty 1, 5 to 100 tokens are ours.
# usage: decode.sh WORK BART_DIR hat|plain [extra fairseq-generate args]
set -euo pipefail
MAX_SOURCE=${MAX_SOURCE:-1024} BEAM=${BEAM:-4} LENPEN=${LENPEN:-1.0} MIN_LEN=${MIN_LEN:-5} MAX_LEN=${MAX_LEN:-100} \
  exec bash "$(dirname "$0")/../hat_common/recipe.sh" decode "$@"
