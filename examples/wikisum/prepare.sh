#!/usr/bin/env bash
# Steps 1-2 (README.md): ranked WikiSum shards -> raw text -> data-bin with its record.
# usage: prepare.sh DATA_PREFIX SPM_MODEL WORK_DIR; env TITLE_PLACEMENT (first | every) WORKERS
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 DATA_PREFIX SPM_MODEL WORK_DIR" >&2; exit 2; }
PREFIX=$1; SPM=$2; WORK=$3
case "${TITLE_PLACEMENT:=first}" in
  first) LAYOUT= ;;
  every) LAYOUT=-every ;;
  *) echo "prepare.sh: error: TITLE_PLACEMENT must be first or every, not '$TITLE_PLACEMENT'" >&2; exit 2 ;;
esac
RAW="$WORK/raw$LAYOUT"; BIN="$WORK/data-bin$LAYOUT"
mkdir -p "$WORK"
[[ -f "$RAW/test.ref" ]] || fairseq-hier-to-raw --format wikisum --input-prefix "$PREFIX" \
  --spm "$SPM" --output-dir "$RAW" --title-placement "$TITLE_PLACEMENT"
bash "$(dirname "$0")/../common/binarize.sh" "$RAW" "$BIN" --srcdict "$RAW/dict.txt"
if [[ ! -f "$BIN/hier_preprocess.json" ]]; then
  source "$(dirname "$0")/generation.sh"
  fairseq-hier-record data "$BIN" --task hierarchical_summarization --pipeline paragraphs \
    --option lowercase=true --option subword=sentencepiece --option post_process=sentencepiece \
    --option title_placement="$TITLE_PLACEMENT" \
    --asset spm.model="$SPM" --generation "${GENERATION[*]}" \
    --generation-for liu_ht="${LIU_GENERATION[*]}" --generation-for transformer="${FT_GENERATION[*]}"
fi
