#!/usr/bin/env bash
# Document translation, step 1 (shared by examples/wmt20_doc and examples/ted_zh_en): raw
# documents -> tokenised -> joint fastBPE codes -> chunks with BOS markers -> fairseq-preprocess
# --joined-dictionary -> WORK/data-bin, with the chunk maps copied beside the binarized data
# (004 Sec. 4.2), and the preprocessing record (fairseq-hier-record: languages, chunk limit, the
# tokenizers, the BPE codes and the decode step's fairseq-generate options, generation.sh) that
# lets checkpoints translate raw documents (fairseq-hier-summarize). Any language pair: SRC and
# TGT are any language codes (a code without tokenizer rules gets a stated fallback). Skips every
# step whose output exists; prints each step's measured time.
#
# usage: prepare.sh WORK SRC TGT
#   WORK/raw/{train,valid,test[,test1,...]}.{SRC,TGT,docids}: written by the dataset's
#   extract step (fairseq-hier-doc-extract, e.g. --format jsonl for one's own documents); the
#   test sets are named test, test1, ... (as fairseq-preprocess names the parts of --testpref),
#   WORK/raw/testN.name says which is which
# env (defaults.sh): BPE_CODES (40000 merges, the paper's) MAX_CHUNK (512) WORKERS (nproc)
#      TOKENIZER (auto) SRC_TOKENIZER TGT_TOKENIZER (default TOKENIZER; kept in
#      WORK/tok/tokenizers and recorded) BEAM MAX_LEN_A MAX_LEN_B (recorded: generation.sh)
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 WORK SRC TGT" >&2; exit 2; }
WORK=$1; SRC=$2; TGT=$3
source "$(dirname "$0")/defaults.sh"
SPLITS=(train valid)
[[ -f "$WORK/raw/test.docids" ]] || { echo "prepare.sh: no $WORK/raw/test.docids (run the extract step)" >&2; exit 1; }
SPLITS+=(test)
i=1; while [[ -f "$WORK/raw/test$i.docids" ]]; do SPLITS+=("test$i"); i=$((i + 1)); done
step() {  # step NAME OUTPUT COMMAND...: run unless OUTPUT exists, and time it
  local name=$1 out=$2; shift 2
  if [[ -e "$out" ]]; then echo "prepare.sh: $name: $out exists, skipped"; return; fi
  local t0=$EPOCHREALTIME
  "$@"
  echo "prepare.sh: $name took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}') s"
}
TOKENIZERS="$SRC_TOKENIZER $TGT_TOKENIZER"  # the record must say what WORK/tok holds
if [[ -f "$WORK/tok/tokenizers" && "$(cat "$WORK/tok/tokenizers")" != "$TOKENIZERS" ]] \
   && compgen -G "$WORK/tok/*.docids" > /dev/null; then
  echo "prepare.sh: $WORK/tok was tokenised with source and target tokenizers $(cat "$WORK/tok/tokenizers"), not $TOKENIZERS: set SRC_TOKENIZER/TGT_TOKENIZER back, or remove $WORK/tok, $WORK/bpe.codes, $WORK/chunks and $WORK/data-bin to prepare anew" >&2
  exit 1
fi
mkdir -p "$WORK/tok"
echo "$TOKENIZERS" > "$WORK/tok/tokenizers"
for split in "${SPLITS[@]}"; do
  step "tokenise $split" "$WORK/tok/$split.docids" fairseq-hier-doc-tokenize \
    --input "$WORK/raw/$split" --output "$WORK/tok/$split" --src-lang "$SRC" --tgt-lang "$TGT" \
    --src-tokenizer "$SRC_TOKENIZER" --tgt-tokenizer "$TGT_TOKENIZER" --workers "$WORKERS"
done
learn_bpe() {
  fastbpe learnbpe "$BPE_CODES" "$WORK/tok/train.$SRC" "$WORK/tok/train.$TGT" > "$WORK/bpe.codes.tmp"
  mv "$WORK/bpe.codes.tmp" "$WORK/bpe.codes"
}
step "learn $BPE_CODES joint BPE merges" "$WORK/bpe.codes" learn_bpe
for split in "${SPLITS[@]}"; do
  step "chunk $split" "$WORK/chunks/$split.chunks" fairseq-hier-doc-chunk \
    --input "$WORK/tok/$split" --output "$WORK/chunks/$split" --src-lang "$SRC" --tgt-lang "$TGT" \
    --codes "$WORK/bpe.codes" --max-chunk-tokens "$MAX_CHUNK"
done
binarize() {
  local tests
  tests=$(printf "$WORK/chunks/%s," "${SPLITS[@]:2}")
  rm -rf "$WORK/data-bin.tmp"
  fairseq-preprocess --source-lang "$SRC" --target-lang "$TGT" --joined-dictionary \
    --trainpref "$WORK/chunks/train" --validpref "$WORK/chunks/valid" --testpref "${tests%,}" \
    --destdir "$WORK/data-bin.tmp" --workers "$WORKERS"
  local split
  for split in "${SPLITS[@]}"; do cp "$WORK/chunks/$split.chunks" "$WORK/data-bin.tmp/"; done
  mv "$WORK/data-bin.tmp" "$WORK/data-bin"
}
step "binarize" "$WORK/data-bin/dict.$SRC.txt" binarize
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  source "$(dirname "$0")/generation.sh"
  fairseq-hier-record "$WORK/data-bin" --task document_translation --pipeline doc_chunks \
    --option src_lang="$SRC" --option tgt_lang="$TGT" --option max_chunk_tokens="$MAX_CHUNK" \
    --option src_tokenizer="$SRC_TOKENIZER" --option tgt_tokenizer="$TGT_TOKENIZER" \
    --asset bpe.codes="$WORK/bpe.codes" --generation "${GENERATION[*]}"
fi
echo "prepare.sh: $WORK/data-bin ready ($(wc -l < "$WORK/data-bin/dict.$SRC.txt") joint dictionary entries)"
