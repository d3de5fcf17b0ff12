#!/usr/bin/env bash
# CNN/DailyMail or XSum as fairseq's BART recipe has them (DATA_DIR/{train,val,test}.source and
# .target, untokenised, one article / summary per line) -> WORK/data-bin. No sentence
# segmentation is published: pysbd splits the articles. 004 Sec. 4.1: 1024 source / 256 target.
# usage: prepare.sh DATA_DIR WORK BART_DIR
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # recorded in the data-bin for fairseq-hier-summarize
[[ $# -eq 3 ]] || { echo "usage: $0 DATA_DIR WORK BART_DIR" >&2; exit 2; }
D=$1
MAX_SOURCE=${MAX_SOURCE:-1024} MAX_TARGET=${MAX_TARGET:-256} \
  bash "$(dirname "$0")/../hat_common/prepare.sh" source_target "$2" "$3" "$D/train" "$D/val" "$D/test"
