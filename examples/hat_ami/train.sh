#!/usr/bin/env bash
# Fine-tune an AMI model from a CNN/DM-trained one (004 Table 6, as SAMSum: HAT from HAT-CNN/DM,
# plain from plain-CNN/DM), with speaker segment embeddings; the 1024-row position tables are
# extended to 3072 on load. Updates and batch are not given in the paper: 1000 updates of 8
# meetings (about 80 epochs of QMSum's ~100 training meetings), warmup 50, are our choice.
# usage: train.sh WORK INIT_CHECKPOINT hat|plain [extra fairseq-train args]
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 WORK INIT_CHECKPOINT hat|plain [fairseq-train args...]" >&2; exit 2; }
WORK=$1; INIT=$2; KIND=$3; shift 3
case "$KIND" in hat) ARCH=${ARCH:-hat_bart_large};; plain) ARCH=${ARCH:-long_bart_large};;
  *) echo "train.sh: KIND must be hat or plain" >&2; exit 2;; esac
SEGMENTS=${SEGMENTS:-$(bash "$(dirname "$0")/../hat_common/segments.sh" "$WORK")}
SEGMENTS=$SEGMENTS UPDATES=${UPDATES:-1000} WARMUP=${WARMUP:-50} BATCH=${BATCH:-1} \
  UPDATE_FREQ=${UPDATE_FREQ:-8} \
  bash "$(dirname "$0")/../hat_common/train.sh" "$WORK" "$ARCH" "$INIT" \
  "$WORK/checkpoints/$KIND" --max-source-positions "${MAX_SOURCE:-3072}" "$@"
