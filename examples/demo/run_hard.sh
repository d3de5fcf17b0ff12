#!/usr/bin/env bash
# The demo's hard tier (`make demo TIER=hard`, docs/results.md): per seed, run_demo.sh on the hard
# corpus, attention alignment and the ranker; then the systems compared over the seeds.
# env: WORK (demo_hard) SEEDS ("1 2") UPDATES (800) HARD_CORPUS
set -euo pipefail
source "$(dirname "$0")/../common/env.sh"
WORK=${WORK:-$ROOT/demo_hard}
SEEDS=${SEEDS:-1 2}
HARD_CORPUS=${HARD_CORPUS:---other-entities 3 --mentions 2 --max-facts-per-paragraph 1 --min-facts 3}
START=$SECONDS
DIRS=()
for SEED in $SEEDS; do
  W="$WORK/seed$SEED"
  echo "=== hard tier, seed $SEED ($W)"
  WORK="$W" SEED="$SEED" UPDATES="${UPDATES:-800}" CORPUS_ARGS="$HARD_CORPUS" ANALYSES=0 \
    bash examples/demo/run_demo.sh
  WORK="$W" SEED="$SEED" STRATEGIES="vanilla attalign" bash examples/attention_alignment/run_demo.sh
  WORK="$W" SEED="$SEED" bash examples/demo/run_ranker.sh
  DIRS+=(--seed-dir "$W")
done
echo
echo "=== hard tier over seeds $SEEDS: mean over seeds [95% interval], per seed, and orderings"
fairseq-hier-demo facts seeds "${DIRS[@]}" \
  transformer=runs/transformer pht=runs/pht vht=runs/vht \
  liu_ht=runs/liu_ht pht+vanilla=runs/pht_vanilla pht+attAlign=runs/pht_attalign \
  --compare transformer,pht,vht,liu_ht --compare pht+vanilla,pht+attAlign \
  -o "$WORK/seeds.json" | tee "$WORK/seeds.txt"
for SEED in $SEEDS; do
  echo "=== paragraph ranking, seed $SEED (ROUGE-L recall x100 of the top-L paragraphs [95% interval])"
  grep -v "^{" "$WORK/seed$SEED/ranker/table1.txt"
done
echo "=== hard tier took $((SECONDS - START)) s"
