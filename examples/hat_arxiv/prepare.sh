#!/usr/bin/env bash
# arXiv or PubMed (Cohan et al. 2018: DATA_DIR/{train,val,test}.txt, one JSON article per line)
# -> WORK/data-bin. 004 Sec. 4.1: a BOS at every sentence of `article_text` (the dataset's own
# segmentation), 3072 source / 512 target tokens, GPT-2 BPE, BART's dictionary.
# usage: prepare.sh DATA_DIR WORK BART_DIR
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # recorded in the data-bin for fairseq-hier-summarize
[[ $# -eq 3 ]] || { echo "usage: $0 DATA_DIR WORK BART_DIR" >&2; exit 2; }
D=$1
MAX_SOURCE=${MAX_SOURCE:-3072} MAX_TARGET=${MAX_TARGET:-512} \
  bash "$(dirname "$0")/../hat_common/prepare.sh" cohan "$2" "$3" "$D/train.txt" "$D/val.txt" "$D/test.txt"
