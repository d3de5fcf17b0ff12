#!/usr/bin/env bash
# Fine-tune hat_bart_large (or plain bart_large, 1024 positions: BART's own table) from BART.
# 004 Sec. 4.1: 20000 updates of 64 articles, lr 3e-5 with linear decay (warmup: not stated;
# BART's CNN/DM recipe uses 500); 64 = BATCH x UPDATE_FREQ x GPUs (default 4 x 8 x 2 GPUs).
# usage: train.sh WORK BART_DIR hat|plain [extra fairseq-train args]
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 WORK BART_DIR hat|plain [fairseq-train args...]" >&2; exit 2; }
WORK=$1; BART=$2; KIND=$3; shift 3
case "$KIND" in hat) ARCH=${ARCH:-hat_bart_large};; plain) ARCH=${ARCH:-long_bart_large};;
  *) echo "train.sh: KIND must be hat or plain" >&2; exit 2;; esac
UPDATES=${UPDATES:-20000} WARMUP=${WARMUP:-500} UPDATE_FREQ=${UPDATE_FREQ:-8} \
  bash "$(dirname "$0")/../hat_common/train.sh" "$WORK" "$ARCH" "$BART/model.pt" \
  "$WORK/checkpoints/$KIND" --max-source-positions "${MAX_SOURCE:-1024}" "$@"
