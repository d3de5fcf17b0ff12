#!/usr/bin/env bash
# Step 3b: score a fairseq-generate log against the converter's references with official
# ROUGE-1.5.5: hypotheses in example order (every id 0..N-1 exactly once), normalised like the
# references (postprocess.py: lowercase, <Q> -> " <q> ", <unk> -> UNK as hiersumm does), then
# `fairseq-hier-rouge -e "<q>"` (sentences split for summary-level ROUGE-L) with -zs: an empty
# hypothesis scores 0 on every metric and stays in the average (never dropped).
# --also-rouge-score adds Google's rouge-score F1 (rouge1/2/L/Lsum, stemmed, rougeLsum on the
# same sentences, '<q>' dropped) under the report: a different scorer, not comparable with
# ROUGE-1.5.5.
# usage: score.sh REFS GENERATE_LOG RUN_DIR
#   writes RUN_DIR/SUBSET.hyp.raw, SUBSET.hyp, SUBSET.ref (a copy of REFS: the references used)
#   and SUBSET.rouge.txt (ROUGE-1.5.5's report); env SUBSET (test)
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 REFS GENERATE_LOG RUN_DIR" >&2; exit 2; }
REF=$1; LOG=$2; OUT=$3; SUBSET=${SUBSET:-test}
mkdir -p "$OUT"
N=$(wc -l < "$REF")
python -m fairseq_hier.cli.hypotheses "$LOG" --expected "$N" -o "$OUT/$SUBSET.hyp.raw"
python "$(dirname "$0")/postprocess.py" < "$OUT/$SUBSET.hyp.raw" > "$OUT/$SUBSET.hyp.tmp"
mv "$OUT/$SUBSET.hyp.tmp" "$OUT/$SUBSET.hyp"
if [[ ! "$REF" -ef "$OUT/$SUBSET.ref" ]]; then
  cp "$REF" "$OUT/$SUBSET.ref.tmp"
  mv "$OUT/$SUBSET.ref.tmp" "$OUT/$SUBSET.ref"
fi
fairseq-hier-rouge "$OUT/$SUBSET.ref" "$OUT/$SUBSET.hyp" -e "<q>" -zs --also-rouge-score \
  --saveto "$OUT/$SUBSET.rouge.txt"
