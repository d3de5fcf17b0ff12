#!/usr/bin/env bash
# Liu & Lapata's paragraph ranker (002 Sec. 3.1) on the demo corpus, and 002 Table 1's measure.
#
# The demo's sources come "ranked with noise" by the corpus generator. Here each example's
# paragraphs are first shuffled (seeded; the title stays first): that is the "original order" of
# a crawl. The ranker is trained on the shuffled training split (labels: ROUGE-2 recall of each
# paragraph against the summary), ranks the shuffled test split, and fairseq-hier-rank-eval prints
# the ROUGE-L recall of the top-L paragraphs against the summary for the original order, tf-idf
# similarity to the title (Liu et al. 2018's ranking), the trained ranker, and the generator's
# noisy ranking. L = 1, 2, 3, 5, 10: a demo example has ~12 paragraphs (002's L = 20, 40 would
# take them all). Needs examples/demo/run_demo.sh's corpus ($WORK/raw). About 2 minutes on 2 CPU
# cores. Environment: WORK (demo_work), SEED (1), RANKER_UPDATES (600).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
VENV=${VIRTUAL_ENV:-${CONDA_PREFIX:-$ROOT/.venv}}
export PATH="$VENV/bin:$PATH"
WORK=${WORK:-$ROOT/demo_work}
SEED=${SEED:-1}
UPDATES=${RANKER_UPDATES:-600}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
RAW="$WORK/raw"; R="$WORK/ranker"
[[ -f "$RAW/test.src" ]] || { echo "run_ranker.sh: $RAW/test.src not found: run examples/demo/run_demo.sh first" >&2; exit 1; }
mkdir -p "$R/raw"
START=$SECONDS

if [[ ! -f "$R/raw/test.tgt" ]]; then
  for SPLIT in train valid test; do
    python - "$RAW/$SPLIT.src" "$R/raw/$SPLIT.src" "$SEED" <<'PY'
import random, sys
src, out, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as g:
    for i, line in enumerate(f):
        title, *paragraphs = line.rstrip("\n").split(" <P> ")
        random.Random(seed * 1_000_003 + i).shuffle(paragraphs)  # one stream per example
        g.write(" <P> ".join([title] + paragraphs) + "\n")
PY
    cp "$RAW/$SPLIT.tgt" "$R/raw/$SPLIT.tgt"
  done
fi
if [[ ! -f "$R/data-bin/valid.labels" ]]; then
  fairseq-preprocess --only-source --source-lang src --trainpref "$R/raw/train" \
    --validpref "$R/raw/valid" --destdir "$R/data-bin" --workers 2 > "$R/preprocess.log" 2>&1 \
    || { cat "$R/preprocess.log" >&2; exit 1; }
  for SPLIT in train valid; do
    fairseq-hier-rank-labels --source "$R/raw/$SPLIT.src" --target "$R/raw/$SPLIT.tgt" \
      --output "$R/data-bin/$SPLIT.labels" --no-progress-bar
  done
fi
CK="$R/checkpoints"
if [[ ! -f "$CK/checkpoint_last.pt" ]] || ! grep -q "done training" "$CK/train.log" 2>/dev/null; then
  mkdir -p "$CK"
  echo "== training the paragraph ranker ($UPDATES updates of 32 examples; Adagrad, lr 0.15 as in 002)"
  # 002's LSTMs have 256 hidden units; 64 here (a 160-word corpus), dropout 0.2 as in 002; 002's
  # Adagrad at 0.15 (the table's: fairseq_hier/recipes/architectures.py)
  OPTIMISATION_TEXT=$(fairseq-hier-settings paragraph_ranker --stage paper-train)
  mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
  fairseq-train "$R/data-bin" --user-dir "$ROOT/fairseq_hier" --task paragraph_ranking \
    --arch paragraph_ranker --criterion paragraph_ranking --embed-dim 64 --hidden-size 64 \
    --feature-dim 64 "${OPTIMISATION[@]}" --batch-size 32 --max-update "$UPDATES" \
    --save-dir "$CK" --no-epoch-checkpoints --log-interval 100 --seed "$SEED" --num-workers 0 \
    --no-progress-bar 2>&1 | tee "$CK/train.log" | grep -E "\| (train|valid) \||done training" \
    || { tail -3 "$CK/train.log" >&2; exit 1; }
fi
fairseq-hier-rank --path "$CK/checkpoint_best.pt" --source "$R/raw/test.src" \
  --output "$R/test.ranked.src" --scores-out "$R/test.scores" --cpu --no-progress-bar
echo
echo "== 002 Table 1's measure on the $(wc -l < "$R/raw/test.src") demo test examples: ROUGE-L recall (x100) of the top-L paragraphs against the summary"
fairseq-hier-rank-eval --source "$R/raw/test.src" --target "$R/raw/test.tgt" \
  --ranked ranker="$R/test.ranked.src" generator-noisy-rank="$RAW/test.src" --L 1 2 3 5 10 \
  --no-progress-bar | tee "$R/table1.txt"
echo "== ranker demo took $((SECONDS - START)) s"
