#!/usr/bin/env bash
# The extractive baselines of 002 Table 2 on the test split, scored like the models (score.sh's
# normalisation, official ROUGE-1.5.5 and rouge-score's F1 beside it):
# - Lead: the title and the ranked paragraphs, first K tokens, K = the reference's length
#   (fairseq-hier-lead);
# - LexRank: paragraphs as nodes, tf-idf cosine edges, PageRank, paragraphs taken by score until
#   the reference's length is reached (fairseq-hier-lexrank).
# K counts sentencepiece pieces of raw/test.tgt (the sources are in pieces too); the outputs are
# decoded to text (pieces joined, '▁' -> space) before scoring.
# usage: baselines.sh WORK_DIR
#   writes one run folder per baseline beside the trained ones, WORK_DIR/checkpoints/{lead,lexrank}/:
#   run.json, test.pieces, test.hyp.raw, test.hyp, test.ref (the references used), test.rouge.txt
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 WORK_DIR" >&2; exit 2; }
WORK=$1; RAW="$WORK/raw"; HERE=$(dirname "$0")
for SYSTEM in lead lexrank; do
  OUT="$WORK/checkpoints/$SYSTEM"
  fairseq-hier-run-json "$OUT" --name "$SYSTEM" --arch "$SYSTEM" \
    --task hierarchical_summarization --metric rouge > /dev/null
  "fairseq-hier-$SYSTEM" --source "$RAW/test.src" --reference "$RAW/test.tgt" --output "$OUT/test.pieces"
  python -c 'import sys
for line in sys.stdin:
    print("".join(line.split()).replace("\u2581", " ").strip())' < "$OUT/test.pieces" > "$OUT/test.hyp.raw"
  python "$HERE/postprocess.py" < "$OUT/test.hyp.raw" > "$OUT/test.hyp.tmp"
  mv "$OUT/test.hyp.tmp" "$OUT/test.hyp"
  cp "$RAW/test.ref" "$OUT/test.ref.tmp"
  mv "$OUT/test.ref.tmp" "$OUT/test.ref"
  echo "== $SYSTEM"
  fairseq-hier-rouge "$OUT/test.ref" "$OUT/test.hyp" -e "<q>" -zs --also-rouge-score \
    --saveto "$OUT/test.rouge.txt"
done
