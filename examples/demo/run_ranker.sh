#!/usr/bin/env bash
# Liu & Lapata's paragraph ranker on the demo corpus and 002 Table 1's measure (docs/results.md).
# Needs run_demo.sh's corpus. env: WORK (demo_work) SEED (1) RANKER_UPDATES (600)
set -euo pipefail
source "$(dirname "$0")/../common/env.sh"
WORK=${WORK:-$ROOT/demo_work}
SEED=${SEED:-1}
RAW="$WORK/raw"; R="$WORK/ranker"; CK="$WORK/runs/paragraph_ranker"
[[ -f "$RAW/test.src" ]] || { echo "run_ranker.sh: $RAW/test.src not found: run examples/demo/run_demo.sh first" >&2; exit 1; }
mkdir -p "$R/raw"
START=$SECONDS
for SPLIT in train valid test; do  # the "original order": each example's paragraphs shuffled
  [[ -f "$R/raw/$SPLIT.tgt" ]] && continue
  python examples/demo/layouts.py shuffle "$RAW/$SPLIT.src" "$R/raw/$SPLIT.src" --seed "$SEED"
  cp "$RAW/$SPLIT.tgt" "$R/raw/$SPLIT.tgt"
done
if [[ ! -f "$R/data-bin/valid.labels" ]]; then
  fairseq-preprocess --only-source --source-lang src --trainpref "$R/raw/train" \
    --validpref "$R/raw/valid" --destdir "$R/data-bin" --workers 2 > "$R/preprocess.log" 2>&1 \
    || { cat "$R/preprocess.log" >&2; exit 1; }
  for SPLIT in train valid; do
    fairseq-hier-rank labels --source "$R/raw/$SPLIT.src" --target "$R/raw/$SPLIT.tgt" \
      -o "$R/data-bin/$SPLIT.labels" --no-progress-bar
  done
fi
if [[ ! -f "$CK/checkpoint_last.pt" ]] || ! grep -q "done training" "$CK/train.log" 2>/dev/null; then
  mkdir -p "$CK"
  echo "== training the paragraph ranker (${RANKER_UPDATES:-600} updates of 32 examples; Adagrad, lr 0.15 as in 002)"
  OPTIMISATION_TEXT=$(fairseq-hier-settings paragraph_ranker --stage paper-train)
  mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
  fairseq-train "$R/data-bin" --user-dir "$ROOT/fairseq_hier" --task paragraph_ranking \
    --arch paragraph_ranker --criterion paragraph_ranking --embed-dim 64 --hidden-size 64 \
    --feature-dim 64 "${OPTIMISATION[@]}" --batch-size 32 --max-update "${RANKER_UPDATES:-600}" \
    --save-dir "$CK" --no-epoch-checkpoints --log-interval 100 --seed "$SEED" --num-workers 0 \
    --no-progress-bar 2>&1 | tee "$CK/train.log" | grep -E "\| (train|valid) \||done training" \
    || { tail -3 "$CK/train.log" >&2; exit 1; }
fi
fairseq-hier-rank apply --path "$CK/checkpoint_best.pt" -i "$R/raw/test.src" \
  -o "$R/test.ranked.src" --scores --cpu --no-progress-bar
echo
echo "== 002 Table 1's measure on the $(wc -l < "$R/raw/test.src") demo test examples: ROUGE-L recall (x100) of the top-L paragraphs against the summary"
fairseq-hier-rank eval --source "$R/raw/test.src" --target "$R/raw/test.tgt" \
  --ranked ranker="$R/test.ranked.src" generator-noisy-rank="$RAW/test.src" --L 1 2 3 5 10 \
  --no-progress-bar | tee "$R/table1.txt"
echo "== ranker demo took $((SECONDS - START)) s"
