#!/usr/bin/env bash
# HAT recipes, step 1 (shared by examples/hat_*): a published split -> BOS-marked GPT-2 BPE lines
# (fairseq-hier-sentence-bos) -> fairseq-preprocess with BART's dict.txt -> WORK/data-bin, with
# the sentence counts (and speaker segments) copied beside the binarized data, where
# --task hat_summarization checks them before training, and the preprocessing record
# (fairseq-hier-record: format, source limit, BART's BPE files and the decode step's
# fairseq-generate options, generation.sh) that lets checkpoints summarise raw documents
# (fairseq-hier-summarize). Skips every step whose output exists.
#
# usage: prepare.sh FORMAT WORK BART_DIR TRAIN VALID TEST
#   FORMAT    cohan | source_target | presumm | samsum | qmsum (fairseq_hier/readers/layouts.py)
#   BART_DIR  fairseq's BART files: dict.txt, encoder.json, vocab.bpe; or a Hugging Face BART
#             directory (config.json, vocab.json, merges.txt, ...), whose fairseq files are derived
#             once into WORK/bart_files (fairseq-hier-bart-files: its tokenizer's ids). No download
#   TRAIN ... the published files of each split (source_target: the prefix of .source/.target;
#             presumm: the prefix of the json shards, e.g. DATA/cnndm.train)
# env: MAX_SOURCE (1024) MAX_TARGET (1024) SPEAKERS (0; 1 writes .segments) SPEAKER_IDS (roles |
#      appearance: their numbering; unset: the format's default, roles for qmsum) FILLERS (qmsum lexicon)
#      WORKERS (nproc) BEAM LENPEN MIN_LEN MAX_LEN (recorded: the dataset's decoding.sh)
set -euo pipefail
[[ $# -eq 6 ]] || { echo "usage: $0 FORMAT WORK BART_DIR TRAIN VALID TEST" >&2; exit 2; }
FORMAT=$1; WORK=$2; BART=$3
declare -A INPUT=([train]=$4 [valid]=$5 [test]=$6)
MAX_SOURCE=${MAX_SOURCE:-1024}; MAX_TARGET=${MAX_TARGET:-1024}; SPEAKERS=${SPEAKERS:-0}
WORKERS=${WORKERS:-$(nproc)}
if [[ -f "$BART/config.json" && -f "$BART/vocab.json" ]]; then
  BPE="$WORK/bart_files"  # Hugging Face layout: fairseq's files derived from vocab.json, merges.txt
  [[ -f "$BPE/dict.txt" ]] || fairseq-hier-bart-files "$BART" "$BPE"
else
  BPE=$BART
fi
for f in dict.txt encoder.json vocab.bpe; do
  [[ -f "$BPE/$f" ]] || { echo "prepare.sh: $BPE/$f not found (BART's files, given by path)" >&2; exit 1; }
done
EXTRA=()
[[ "$SPEAKERS" == 1 ]] && EXTRA+=(--speakers ${SPEAKER_IDS:+--speaker-ids "$SPEAKER_IDS"})
[[ -n "${FILLERS:-}" ]] && EXTRA+=(--filler-words "$FILLERS")
mkdir -p "$WORK/bpe"
for split in train valid test; do
  if [[ ! -f "$WORK/bpe/$split.sentences" ]]; then
    fairseq-hier-sentence-bos --format "$FORMAT" --input "${INPUT[$split]}" \
      --output-prefix "$WORK/bpe/$split" --gpt2-encoder-json "$BPE/encoder.json" \
      --gpt2-vocab-bpe "$BPE/vocab.bpe" --max-source-positions "$MAX_SOURCE" \
      --max-target-positions "$MAX_TARGET" --workers "$WORKERS" "${EXTRA[@]}" \
      2>&1 | tee "$WORK/bpe/$split.log"
  fi
done
if [[ ! -f "$WORK/data-bin/dict.source.txt" ]]; then
  rm -rf "$WORK/data-bin.tmp"
  fairseq-preprocess --source-lang source --target-lang target --trainpref "$WORK/bpe/train" \
    --validpref "$WORK/bpe/valid" --testpref "$WORK/bpe/test" --destdir "$WORK/data-bin.tmp" \
    --srcdict "$BPE/dict.txt" --tgtdict "$BPE/dict.txt" --workers "$WORKERS"
  for split in train valid test; do
    cp "$WORK/bpe/$split.sentences" "$WORK/data-bin.tmp/"
    [[ "$SPEAKERS" == 1 ]] && cp "$WORK/bpe/$split.segments" "$WORK/data-bin.tmp/"
  done
  mv "$WORK/data-bin.tmp" "$WORK/data-bin"
fi
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  source "$(dirname "$0")/generation.sh"
  RECORD=(--option format="$FORMAT" --option max_source_positions="$MAX_SOURCE"
          --asset encoder.json="$BPE/encoder.json" --asset vocab.bpe="$BPE/vocab.bpe")
  # arXiv/PubMed and PreSumm's CNN/DM were published lowercased: lowercasing raw text brings it
  # to their case (and changes nothing on their own data)
  [[ "$FORMAT" == cohan || "$FORMAT" == presumm ]] && RECORD+=(--option lowercase=true)
  [[ -n "${FILLERS:-}" ]] && RECORD+=(--option filler_words=true --asset filler_words.txt="$FILLERS")
  fairseq-hier-record "$WORK/data-bin" --task hat_summarization --pipeline sentence_bos \
    "${RECORD[@]}" --generation "${GENERATION[*]}"
fi
echo "prepare.sh: $WORK/data-bin ready"
