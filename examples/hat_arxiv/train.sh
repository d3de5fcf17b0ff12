#!/usr/bin/env bash
# Fine-tune hat_bart_large (or the plain long_bart_large baseline: same BART init, same 3072
# positions, same data) from BART. 004 Sec. 4.1: 30000 updates of 128 articles, warmup 900 to
# lr 3e-5 then linear decay; 128 = BATCH x UPDATE_FREQ x GPUs (default 4 x 16 x 2 GPUs).
# usage: train.sh WORK BART_DIR hat|plain [extra fairseq-train args]
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 WORK BART_DIR hat|plain [fairseq-train args...]" >&2; exit 2; }
WORK=$1; BART=$2; KIND=$3; shift 3
case "$KIND" in hat) ARCH=${ARCH:-hat_bart_large};; plain) ARCH=${ARCH:-long_bart_large};;
  *) echo "train.sh: KIND must be hat or plain" >&2; exit 2;; esac
UPDATES=${UPDATES:-30000} WARMUP=${WARMUP:-900} \
  bash "$(dirname "$0")/../hat_common/train.sh" "$WORK" "$ARCH" "$BART/model.pt" \
  "$WORK/checkpoints/$KIND" --max-source-positions "${MAX_SOURCE:-3072}" "$@"
