#!/usr/bin/env bash
# Steps 1-5 (README.md): the published files in DATA -> WORK/raw -> spaCy's parse, sentencepiece,
# WORK/data-bin with the parse beside the source (examples/common/parse_prepare.sh) -> the record.
# usage: DATA=DIR WORK=DIR prepare.sh DATASET [fairseq-hier-to-raw args]; env VOCAB TARGET_PIECES WORKERS
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: DATA=DIR WORK=DIR $0 DATASET [reader args...]" >&2; exit 2; }
DATASET=$1; shift
: "${DATA:?set DATA to the folder of the published files}"
: "${WORK:?set WORK to the output folder}"
HERE=$(dirname "$0")
MISSING=()
for split in train valid test; do [[ -f "$WORK/raw/$split.tgt" ]] || MISSING+=("$split"); done
[[ ${#MISSING[@]} -eq 0 ]] || fairseq-hier-to-raw --format "$DATASET" --input-dir "$DATA" \
  --output-dir "$WORK/raw" --splits "$(IFS=,; echo "${MISSING[*]}")" "$@"
bash "$HERE/../common/parse_prepare.sh" "$WORK/raw" "$WORK"
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  source "$HERE/generation.sh"
  fairseq-hier-record data "$WORK/data-bin" --task hierarchical_summarization \
    --pipeline paragraphs --option title=false --option paragraphs=documents \
    --option tokenizer=spacy --option subword=sentencepiece --option post_process=sentencepiece \
    --asset spm.model="$WORK/spm/spm.model" --generation "${GENERATION[*]}" \
    --generation-for liu_ht="${GENERATION_HIER[*]}" \
    --generation-for parsingsum_ht="${GENERATION_HIER[*]}"
fi
echo "prepare.sh: $WORK/data-bin ready"
