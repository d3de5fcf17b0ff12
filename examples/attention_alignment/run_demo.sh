#!/usr/bin/env bash
# Attention alignment on the demo corpus (README.md, "The demo"): labels, the predictor, then
# PHT decoded with each strategy of 001 Table 2 into the run folder WORK/runs/pht_NAME, and their
# table in WORK/alignment.
# Reuses examples/demo/run_demo.sh's PHT (runs it first if missing). env: WORK STRATEGIES SEED
set -euo pipefail
source "$(dirname "$0")/../common/env.sh"
START=$SECONDS
WORK=${WORK:-$ROOT/demo_work}
STRATEGIES=${STRATEGIES:-vanilla strcov extprob attalign attalign_live attalign_top5}
PHT="$WORK/runs/pht/checkpoint_last.pt"
LABELS="$WORK/attention_labels"
PRED="$WORK/runs/attention_predictor"
OUT="$WORK/alignment"
[[ -f "$PHT" ]] || WORK="$WORK" bash examples/demo/run_demo.sh
mkdir -p "$OUT"
# 1. labels: teacher-forced PHT paragraph attention (eta) and paragraph embeddings (Phi)
if [[ ! -f "$LABELS/meta.json" ]]; then
  fairseq-hier-extract-attention "$WORK/data-bin" --path "$PHT" --output-dir "$LABELS" \
    --splits train valid test --batch-size 64 2>&1 | grep -E "examples ->"
fi
# 2. the attention-prediction model (001 Sec. 4.2.1), the table's optimiser
if [[ ! -f "$PRED/checkpoint_best.pt" ]] || ! grep -q "done training" "$PRED/train.log" 2>/dev/null; then
  mkdir -p "$PRED"
  OPTIMISATION_TEXT=$(fairseq-hier-settings attention_predictor --stage paper-train)
  mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
  fairseq-train "$LABELS" --user-dir "$ROOT/fairseq_hier" --task attention_prediction \
    --arch attention_predictor --criterion attention_mse --input-dim 128 \
    --encoder-ffn-embed-dim 512 --encoder-attention-heads 4 "${OPTIMISATION[@]}" \
    --batch-size 32 --max-epoch 12 --save-dir "$PRED" --no-epoch-checkpoints --num-workers 0 \
    --log-interval 100 --seed "${SEED:-1}" --no-progress-bar 2>&1 | tee "$PRED/train.log" \
    | grep -E "\| valid \||done training"
fi
fairseq-validate "$LABELS" --user-dir "$ROOT/fairseq_hier" --task attention_prediction \
  --path "$PRED/checkpoint_best.pt" --valid-subset test --batch-size 64 --num-workers 0 2>&1 \
  | grep -E "\| test \|" | sed 's/.*valid on/predictor     valid on/' | tee "$OUT/predictor_test.txt"
python examples/attention_alignment/predictor_baselines.py "$LABELS" --split test \
  | tee -a "$OUT/predictor_test.txt"
python examples/attention_alignment/tfidf_ranker_scores.py "$WORK/raw/test.src" > "$OUT/test.scores"
# 3. the test set decoded with each strategy, the table's rules otherwise (pht's alignment_demo)
DECODING=$(fairseq-hier-settings pht --stage paper-decode --dataset alignment_demo)
mapfile -t RULES <<< "$DECODING"
ALIGN="--attention-alignment --align-beta 0.8"
declare -A STRATEGY=(
  [vanilla]=""
  [attalign]="$ALIGN --align-predictor $PRED/checkpoint_best.pt"
  [strcov]="$ALIGN --align-strategy strcov"
  [extprob]="$ALIGN --align-strategy extprob --align-ranker-scores $OUT/test.scores"
  [attalign_live]="$ALIGN --align-predictor $PRED/checkpoint_best.pt --align-live-beams"
  [attalign_top5]="$ALIGN --align-predictor $PRED/checkpoint_best.pt --align-keep-paragraphs 5"
)
declare -A LABEL=([vanilla]=vanilla [attalign]=attAlign [strcov]=strCov [extprob]=extProb
                  [attalign_live]=attAlign,live [attalign_top5]=attAlign,top-5)
SYSTEMS=()
for NAME in $STRATEGIES; do
  RUN="$WORK/runs/pht_$NAME"
  SYSTEMS+=("${LABEL[$NAME]}=$RUN/test.hyp")
  [[ -f "$RUN/test.rouge.txt" ]] && continue
  echo "== decoding: $NAME"
  # shellcheck disable=SC2086
  bash examples/common/decode.sh "$RUN" "--protocol plain" --data "$WORK/data-bin" \
    --references "$WORK/raw/test.tgt" --checkpoint "$PHT" --name "pht+${LABEL[$NAME]}" --arch pht \
    --task-args="--max-paragraphs 30 --max-paragraph-tokens 100 --max-source-positions 1024" \
    --generation="${RULES[*]}" --batch-size 50 -- --num-workers 0 ${STRATEGY[$NAME]} \
    > "$OUT/$NAME.log" 2>&1 || { tail -5 "$OUT/$NAME.log" >&2; exit 1; }
done
echo
echo "== PHT decoding strategies on the $(wc -l < "$WORK/raw/test.tgt") test examples: fact accuracy and ROUGE-1.5.5 F1, x100 [95% interval]"
python examples/demo/score_table.py --facts "$WORK/raw/test.facts.jsonl" "$WORK/raw/test.tgt" \
  "${SYSTEMS[@]}" | tee "$OUT/table.txt"
echo "== paired bootstrap of ROUGE against vanilla beam search (1000 resamples)"
fairseq-hier-significance rouge "$WORK/raw/test.tgt" "${SYSTEMS[@]}" \
  -o "$OUT/significance.json" | grep -v '^{' | tee "$OUT/significance.txt"
echo "== demo part 2 took $((SECONDS - START)) s"
