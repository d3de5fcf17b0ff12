#!/usr/bin/env bash
# usage: parse_prepare.sh RAW OUT: RAW/{split}.{src,tgt} -> spaCy's tokens and parse
# (OUT/parsed/SPLIT.SIDE.{tok,conllu}) -> sentencepiece (spm.sh: OUT/spm, OUT/pieces) -> OUT/bpe
# (training and validation targets cut to TARGET_PIECES) -> OUT/data-bin with the parse projected
# onto the pieces (SPLIT.parse.spacy). env: VOCAB WORKERS TARGET_PIECES (300)
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 RAW OUT" >&2; exit 2; }
RAW=$1; OUT=$2; HERE=$(dirname "$0")
mkdir -p "$OUT/parsed" "$OUT/bpe"
for file in {train,valid,test}.{src,tgt}; do
  [[ -f "$OUT/parsed/$file.tok" ]] || fairseq-hier-parse spacy --input "$RAW/$file" \
    --output-prefix "$OUT/parsed/$file" --workers "${WORKERS:-$(nproc)}"
done
bash "$HERE/spm.sh" "$OUT/parsed/%s.tok" "$OUT"
for file in {train,valid,test}.{src,tgt}; do
  [[ -f "$OUT/bpe/$file" ]] && continue
  if [[ "$file" == test.* || "$file" == *.src ]]; then cp "$OUT/pieces/$file" "$OUT/bpe/$file.tmp"
  else awk -v n="${TARGET_PIECES:-300}" '{ if (NF > n) NF = n; print }' "$OUT/pieces/$file" \
         > "$OUT/bpe/$file.tmp"; fi
  mv "$OUT/bpe/$file.tmp" "$OUT/bpe/$file"
done
bash "$HERE/binarize.sh" "$OUT/bpe" "$OUT/data-bin"
for split in train valid test; do
  [[ -f "$OUT/data-bin/$split.parse.spacy.idx" ]] || fairseq-hier-parse project \
    --conllu "$OUT/parsed/$split.src.conllu" --source "$OUT/bpe/$split.src" \
    --subword sentencepiece --output-prefix "$OUT/data-bin/$split.parse.spacy"
done
