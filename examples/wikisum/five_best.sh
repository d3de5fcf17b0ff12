#!/usr/bin/env bash
# 002's protocol (README.md, step 4): decode and score every checkpoint.best_*.pt of RUN_DIR into
# RUN_DIR/best/NAME/, then each one's ROUGE-1.5.5 F and the set's mean with its interval.
# usage: five_best.sh WORK_DIR RUN_DIR [decode.sh args]; env SUBSET BATCH
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
for CKPT in "${CKPTS[@]}"; do
  OUT="$DIR/best/$(basename "$CKPT" .pt)"
  [[ -f "$OUT/$SUBSET.rouge.txt" ]] || RUN="$OUT" SUBSET="$SUBSET" bash "$(dirname "$0")/decode.sh" "$WORK" "$CKPT" "$@"
  cp "$OUT/$SUBSET.hyp" "$OUT.hyp.tmp"
  mv "$OUT.hyp.tmp" "$OUT.hyp"
done
fairseq-hier-significance rouge "$DIR/best/$(basename "${CKPTS[0]}" .pt)/$SUBSET.ref" \
  "$(basename "$DIR")=$DIR/best" --eos "<q>" -o "$DIR/best/$SUBSET.best.json" \
  | tee "$DIR/best/$SUBSET.best.txt.tmp"
mv "$DIR/best/$SUBSET.best.txt.tmp" "$DIR/best/$SUBSET.best.txt"
