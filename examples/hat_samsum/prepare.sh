#!/usr/bin/env bash
# SAMSum (DATA_DIR/{train,val,test}.json) -> WORK/data-bin. 004 Sec. 4.1: each turn is the role
# string + its utterance with a BOS before it; the speaker index of every turn is written as
# SPLIT.segments for the segment embeddings. 1024 source / 256 target tokens.
# usage: prepare.sh DATA_DIR WORK BART_DIR
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # recorded in the data-bin for fairseq-hier-summarize
[[ $# -eq 3 ]] || { echo "usage: $0 DATA_DIR WORK BART_DIR" >&2; exit 2; }
D=$1
SPEAKERS=1 MAX_SOURCE=${MAX_SOURCE:-1024} MAX_TARGET=${MAX_TARGET:-256} \
  bash "$(dirname "$0")/../hat_common/prepare.sh" samsum "$2" "$3" "$D/train.json" "$D/val.json" "$D/test.json"
