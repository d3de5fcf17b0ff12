#!/usr/bin/env bash
# The extractive baselines of 002 Table 2 (README.md, step 4), each a run folder
# WORK_DIR/runs/{lead,lexrank}, scored as the models are. usage: baselines.sh WORK_DIR
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 WORK_DIR" >&2; exit 2; }
RAW="$1/raw"
for SYSTEM in lead lexrank; do
  OUT="$1/runs/$SYSTEM"
  fairseq-hier-record run "$OUT" --name "$SYSTEM" --arch "$SYSTEM" \
    --task hierarchical_summarization --metric rouge > /dev/null
  fairseq-hier-baseline "$SYSTEM" --source "$RAW/test.src" --reference "$RAW/test.tgt" \
    -o "$OUT/test.pieces"
  # sentencepiece pieces -> text, as fairseq-generate --post-process sentencepiece writes it
  sed -e 's/ //g' -e 's/\xe2\x96\x81/ /g' -e 's/^ *//' -e 's/ *$//' "$OUT/test.pieces" > "$OUT/test.hyp.raw"
  echo "== $SYSTEM"
  fairseq-hier-score "$OUT" --protocol hiersumm --references "$RAW/test.ref"
done
