#!/usr/bin/env bash
# usage: doc_mt_prepare.sh WORK SRC TGT: WORK/raw -> tokenised -> joint fastBPE -> chunks -> WORK/data-bin
# with the chunk maps and the record (examples/doc_mt_common/README.md, step 1). env: BPE_CODES
# (40000) MAX_CHUNK (512) WORKERS (nproc) TOKENIZER (auto) SRC_TOKENIZER TGT_TOKENIZER
# SETTINGS_ARCH SETTINGS_DATASET BEAM MAX_LEN_A MAX_LEN_B
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 WORK SRC TGT" >&2; exit 2; }
WORK=$1; SRC=$2; TGT=$3
BPE_CODES=${BPE_CODES:-40000}; MAX_CHUNK=${MAX_CHUNK:-512}; WORKERS=${WORKERS:-$(nproc)}
SRC_TOKENIZER=${SRC_TOKENIZER:-${TOKENIZER:-auto}}; TGT_TOKENIZER=${TGT_TOKENIZER:-${TOKENIZER:-auto}}
[[ -f "$WORK/raw/test.docids" ]] || { echo "doc_mt_prepare.sh: no $WORK/raw/test.docids (run the extract step)" >&2; exit 1; }
SPLITS=(train valid test)
i=1; while [[ -f "$WORK/raw/test$i.docids" ]]; do SPLITS+=("test$i"); i=$((i + 1)); done
step() {  # step NAME OUTPUT COMMAND...: run unless OUTPUT exists, and time it
  local name=$1 out=$2 t0=$EPOCHREALTIME; shift 2
  if [[ -e "$out" ]]; then echo "doc_mt_prepare.sh: $name: $out exists, skipped"; return; fi
  "$@"
  echo "doc_mt_prepare.sh: $name took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}') s"
}
TOKENIZERS="$SRC_TOKENIZER $TGT_TOKENIZER"  # the record must say what WORK/tok holds
if [[ -f "$WORK/tok/tokenizers" && "$(cat "$WORK/tok/tokenizers")" != "$TOKENIZERS" ]] && compgen -G "$WORK/tok/*.docids" > /dev/null; then
  echo "doc_mt_prepare.sh: $WORK/tok was tokenised with source and target tokenizers $(cat "$WORK/tok/tokenizers"), not $TOKENIZERS: set SRC_TOKENIZER/TGT_TOKENIZER back, or remove $WORK/tok, $WORK/bpe.codes, $WORK/chunks and $WORK/data-bin to prepare anew" >&2; exit 1
fi
mkdir -p "$WORK/tok"
echo "$TOKENIZERS" > "$WORK/tok/tokenizers"
for split in "${SPLITS[@]}"; do
  step "tokenise $split" "$WORK/tok/$split.docids" fairseq-hier-doc tokenize \
    --input-prefix "$WORK/raw/$split" --output-prefix "$WORK/tok/$split" --src-lang "$SRC" --tgt-lang "$TGT" \
    --src-tokenizer "$SRC_TOKENIZER" --tgt-tokenizer "$TGT_TOKENIZER" --workers "$WORKERS"
done
learn_bpe() {
  fastbpe learnbpe "$BPE_CODES" "$WORK/tok/train.$SRC" "$WORK/tok/train.$TGT" > "$WORK/bpe.codes.tmp"
  mv "$WORK/bpe.codes.tmp" "$WORK/bpe.codes"
}
step "learn $BPE_CODES joint BPE merges" "$WORK/bpe.codes" learn_bpe
for split in "${SPLITS[@]}"; do
  step "chunk $split" "$WORK/chunks/$split.chunks" fairseq-hier-doc chunk \
    --input-prefix "$WORK/tok/$split" --output-prefix "$WORK/chunks/$split" --src-lang "$SRC" --tgt-lang "$TGT" \
    --codes "$WORK/bpe.codes" --max-chunk-tokens "$MAX_CHUNK"
done
binarize() {
  local tests split
  tests=$(printf "$WORK/chunks/%s," "${SPLITS[@]:2}")
  rm -rf "$WORK/data-bin.tmp"
  fairseq-preprocess --source-lang "$SRC" --target-lang "$TGT" --joined-dictionary \
    --trainpref "$WORK/chunks/train" --validpref "$WORK/chunks/valid" --testpref "${tests%,}" \
    --destdir "$WORK/data-bin.tmp" --workers "$WORKERS"
  for split in "${SPLITS[@]}"; do cp "$WORK/chunks/$split.chunks" "$WORK/data-bin.tmp/"; done
  mv "$WORK/data-bin.tmp" "$WORK/data-bin"
}
step "binarize" "$WORK/data-bin/dict.$SRC.txt" binarize
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  source "$(dirname "$0")/paper_decoding.sh"
  paper_decoding "${SETTINGS_ARCH:-hat_transformer_wmt_en_de}" "${SETTINGS_DATASET:-wmt20_en_de}"
  fairseq-hier-record data "$WORK/data-bin" --task document_translation --pipeline doc_chunks \
    --option src_lang="$SRC" --option tgt_lang="$TGT" --option max_chunk_tokens="$MAX_CHUNK" \
    --option src_tokenizer="$SRC_TOKENIZER" --option tgt_tokenizer="$TGT_TOKENIZER" \
    --asset bpe.codes="$WORK/bpe.codes" --generation "${GENERATION[*]}"
fi
echo "doc_mt_prepare.sh: $WORK/data-bin ready ($(wc -l < "$WORK/data-bin/dict.$SRC.txt") joint dictionary entries)"
