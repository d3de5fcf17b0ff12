#!/usr/bin/env bash
# usage: spm.sh PATTERN OUT: a sentencepiece model trained on the train split's sources and
# targets (PATTERN with %s for SPLIT.SIDE, e.g. WORK/raw/%s), OUT/spm/spm.model, and every split
# and side encoded with it (<P> kept as one token) -> OUT/pieces/SPLIT.SIDE
# env: VOCAB (32000 pieces) SPM_TYPE (unigram, or bpe) WORKERS (nproc)
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 PATTERN OUT" >&2; exit 2; }
PATTERN=$1; OUT=$2
mkdir -p "$OUT/spm" "$OUT/pieces"
printf -v SRC "$PATTERN" train.src; printf -v TGT "$PATTERN" train.tgt
[[ -f "$OUT/spm/spm.model" ]] || fairseq-hier-spm train --input "$SRC" "$TGT" \
  --output-prefix "$OUT/spm/spm" --vocab-size "${VOCAB:-32000}" --model-type "${SPM_TYPE:-unigram}" \
  --threads "${WORKERS:-$(nproc)}"
for file in {train,valid,test}.{src,tgt}; do
  printf -v INPUT "$PATTERN" "$file"
  [[ -f "$OUT/pieces/$file" ]] || fairseq-hier-spm encode --model "$OUT/spm/spm.model" \
    --input "$INPUT" --output "$OUT/pieces/$file"
done
