#!/usr/bin/env bash
# Fine-tune a SAMSum model from a CNN/DM-trained one (004 Table 5: HAT from HAT-CNN/DM, the plain
# model from plain-CNN/DM), with speaker segment embeddings (randomly initialised: new parts).
# Updates, batch and warmup are not given in the paper: ours (5000 updates of 32 dialogues,
# warmup 200) are a choice, to tune on the validation loss.
# usage: train.sh WORK INIT_CHECKPOINT hat|plain [extra fairseq-train args]
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 WORK INIT_CHECKPOINT hat|plain [fairseq-train args...]" >&2; exit 2; }
WORK=$1; INIT=$2; KIND=$3; shift 3
case "$KIND" in hat) ARCH=${ARCH:-hat_bart_large};; plain) ARCH=${ARCH:-long_bart_large};;
  *) echo "train.sh: KIND must be hat or plain" >&2; exit 2;; esac
SEGMENTS=${SEGMENTS:-$(bash "$(dirname "$0")/../hat_common/segments.sh" "$WORK")}
SEGMENTS=$SEGMENTS UPDATES=${UPDATES:-5000} WARMUP=${WARMUP:-200} UPDATE_FREQ=${UPDATE_FREQ:-4} \
  bash "$(dirname "$0")/../hat_common/train.sh" "$WORK" "$ARCH" "$INIT" \
  "$WORK/checkpoints/$KIND" --max-source-positions "${MAX_SOURCE:-1024}" "$@"
