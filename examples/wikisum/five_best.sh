#!/usr/bin/env bash
# 002's protocol (Sec. 4): "We selected the 5 best checkpoints based on performance on the
# validation set and report averaged results on the test set." Decodes and scores every
# checkpoint.best_*.pt of a run folder (fairseq-train --keep-best-checkpoints 5 keeps the 5 of
# lowest validation loss; train_liu_ht.sh and train_ft.sh ask for them) with decode.sh, each into
# RUN_DIR/best/NAME/ (generate-test.txt, test.hyp, test.rouge.txt), then prints each one's
# ROUGE-1.5.5 F, their mean, and the plain mean of the per-document F averaged over the set with
# its 95% percentile bootstrap interval over test documents (fairseq-hier-significance on the
# set: the checkpoints are held fixed, so the interval covers the choice of test documents, not
# training-run variance).
# usage: five_best.sh WORK_DIR RUN_DIR [extra decode.sh args]
#   writes RUN_DIR/best/NAME.hyp (one per checkpoint), RUN_DIR/best/SUBSET.best.txt (the table)
#   and RUN_DIR/best/SUBSET.best.json; env SUBSET (test), BATCH (decode.sh's)
# A set is compared with another system by fairseq-hier-significance too, e.g.
#   fairseq-hier-significance rouge RUN_DIR/best/NAME/test.ref --eos "<q>" \
#     lead=work/wikisum/checkpoints/lead/test.hyp liu_ht=RUN_DIR/best
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 WORK_DIR RUN_DIR [decode.sh args...]" >&2; exit 2; }
WORK=$1; DIR=$2; shift 2
SUBSET=${SUBSET:-test}
shopt -s nullglob
CKPTS=("$DIR"/checkpoint.best_*.pt)
[[ ${#CKPTS[@]} -gt 0 ]] || {
  echo "five_best.sh: error: no $DIR/checkpoint.best_*.pt (train with --keep-best-checkpoints 5)" >&2
  exit 1
}
if [[ ${#CKPTS[@]} -ne 5 ]]; then
  echo "five_best.sh: note: ${#CKPTS[@]} best checkpoint(s) in $DIR, not 002's 5"
fi
mkdir -p "$DIR/best"
for CKPT in "${CKPTS[@]}"; do
  NAME=$(basename "$CKPT" .pt)
  OUT="$DIR/best/$NAME"
  if [[ ! -f "$OUT/$SUBSET.rouge.txt" ]]; then
    RUN="$OUT" SUBSET="$SUBSET" bash "$(dirname "$0")/decode.sh" "$WORK" "$CKPT" "$@"
  fi
  cp "$OUT/$SUBSET.hyp" "$DIR/best/$NAME.hyp.tmp"
  mv "$DIR/best/$NAME.hyp.tmp" "$DIR/best/$NAME.hyp"
done
REF="$DIR/best/$(basename "${CKPTS[0]}" .pt)/$SUBSET.ref"
fairseq-hier-significance rouge "$REF" "$(basename "$DIR")=$DIR/best" --eos "<q>" \
  --json "$DIR/best/$SUBSET.best.json" | tee "$DIR/best/$SUBSET.best.txt.tmp"
mv "$DIR/best/$SUBSET.best.txt.tmp" "$DIR/best/$SUBSET.best.txt"
