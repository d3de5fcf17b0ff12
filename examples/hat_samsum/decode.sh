#!/usr/bin/env bash
# Decode the SAMSum test split and score it with ROUGE-1.5.5. The paper gives no decoding
# settings for SAMSum: beam 4, length penalty 1, 5 to 100 tokens are ours.
# usage: decode.sh WORK BART_DIR hat|plain [extra fairseq-generate args]
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 WORK BART_DIR hat|plain [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; BART=$2; KIND=$3; shift 3
BEAM=${BEAM:-4} LENPEN=${LENPEN:-1.0} MIN_LEN=${MIN_LEN:-5} MAX_LEN=${MAX_LEN:-100} \
  bash "$(dirname "$0")/../hat_common/decode.sh" "$WORK" "$BART" \
  "$WORK/checkpoints/$KIND/checkpoint_best.pt" "$WORK/decode/$KIND" "$@"
