#!/usr/bin/env bash
# usage: bart_prepare.sh FORMAT WORK BART_DIR TRAIN VALID TEST: published splits -> BOS-marked
# GPT-2 BPE lines -> WORK/data-bin with BART's dictionary, sentence counts, speaker segments and
# the record (examples/hat_common/README.md, step 1). env: MAX_SOURCE (1024) MAX_TARGET (1024)
# SPEAKERS (0) SPEAKER_IDS FILLERS WORKERS (nproc) SETTINGS_DATASET BEAM LENPEN MIN_LEN MAX_LEN
set -euo pipefail
[[ $# -eq 6 ]] || { echo "usage: $0 FORMAT WORK BART_DIR TRAIN VALID TEST" >&2; exit 2; }
FORMAT=$1; WORK=$2; BPE=$3
declare -A INPUT=([train]=$4 [valid]=$5 [test]=$6)
MAX_SOURCE=${MAX_SOURCE:-1024}; SPEAKERS=${SPEAKERS:-0}; WORKERS=${WORKERS:-$(nproc)}
if [[ -f "$BPE/config.json" && -f "$BPE/vocab.json" ]]; then  # Hugging Face's layout
  [[ -f "$WORK/bart_files/dict.txt" ]] || fairseq-hier-bart files "$BPE" --output-dir "$WORK/bart_files"
  BPE="$WORK/bart_files"
fi
for f in dict.txt encoder.json vocab.bpe; do
  [[ -f "$BPE/$f" ]] || { echo "bart_prepare.sh: $BPE/$f not found (BART's files, given by path)" >&2; exit 1; }
done
EXTRA=()
[[ "$SPEAKERS" == 1 ]] && EXTRA+=(--speakers ${SPEAKER_IDS:+--speaker-ids "$SPEAKER_IDS"})
[[ -n "${FILLERS:-}" ]] && EXTRA+=(--filler-words "$FILLERS")
mkdir -p "$WORK/bpe"
for split in train valid test; do
  [[ -f "$WORK/bpe/$split.sentences" ]] || fairseq-hier-sentence-bos --format "$FORMAT" \
    --input "${INPUT[$split]}" --output-prefix "$WORK/bpe/$split" \
    --gpt2-encoder-json "$BPE/encoder.json" --gpt2-vocab-bpe "$BPE/vocab.bpe" \
    --max-source-positions "$MAX_SOURCE" --max-target-positions "${MAX_TARGET:-1024}" \
    --workers "$WORKERS" "${EXTRA[@]}" 2>&1 | tee "$WORK/bpe/$split.log"
done
if [[ ! -f "$WORK/data-bin/dict.source.txt" ]]; then
  rm -rf "$WORK/data-bin.tmp"
  fairseq-preprocess --source-lang source --target-lang target --trainpref "$WORK/bpe/train" \
    --validpref "$WORK/bpe/valid" --testpref "$WORK/bpe/test" --destdir "$WORK/data-bin.tmp" \
    --srcdict "$BPE/dict.txt" --tgtdict "$BPE/dict.txt" --workers "$WORKERS"
  cp "$WORK"/bpe/{train,valid,test}.sentences "$WORK/data-bin.tmp/"
  [[ "$SPEAKERS" == 1 ]] && cp "$WORK"/bpe/{train,valid,test}.segments "$WORK/data-bin.tmp/"
  mv "$WORK/data-bin.tmp" "$WORK/data-bin"
fi
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  source "$(dirname "$0")/paper_decoding.sh"
  paper_decoding hat_bart_large "${SETTINGS_DATASET:-other}"
  RECORD=(--option format="$FORMAT" --option max_source_positions="$MAX_SOURCE"
          --asset encoder.json="$BPE/encoder.json" --asset vocab.bpe="$BPE/vocab.bpe")
  # cohan and presumm were published lowercased: lowercasing raw text brings it to their case
  [[ "$FORMAT" == cohan || "$FORMAT" == presumm ]] && RECORD+=(--option lowercase=true)
  [[ -n "${FILLERS:-}" ]] && RECORD+=(--option filler_words=true --asset filler_words.txt="$FILLERS")
  fairseq-hier-record data "$WORK/data-bin" --task hat_summarization --pipeline sentence_bos \
    "${RECORD[@]}" --generation "${GENERATION[*]}"
fi
echo "bart_prepare.sh: $WORK/data-bin ready"
