#!/usr/bin/env bash
# Attention alignment on the demo corpus (the three steps of README.md, then a ROUGE table of the
# decoding strategies of 001 Table 2). Reuses the PHT of examples/demo/run_demo.sh (runs it first
# if its checkpoint is missing). Steps whose outputs exist are skipped.
# Each strategy is a run folder of its own, $WORK/alignment/NAME (PHT's checkpoint decoded
# another way): run.json (named pht+STRATEGY, arch pht), generate-test.txt, test.hyp, test.ref
# (raw/test.tgt) and test.rouge.txt, what fairseq-hier-report reads (examples/demo/report.sh);
# the predictor's training is $WORK/checkpoints/attention_predictor (train.log, checkpoints).
# STRATEGIES (default: all six, in the table's order) chooses the decodings, e.g.
# STRATEGIES="vanilla attalign" for the hard tier (examples/demo/run_hard.sh).
set -euo pipefail
START=$SECONDS
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
VENV=${VIRTUAL_ENV:-${CONDA_PREFIX:-$ROOT/.venv}}
export PATH="$VENV/bin:$PATH"
WORK=${WORK:-$ROOT/demo_work}
STRATEGIES=${STRATEGIES:-vanilla strcov extprob attalign attalign_live attalign_top5}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
PHT="$WORK/checkpoints/pht/checkpoint_last.pt"
LABELS="$WORK/attention_labels"
PRED="$WORK/checkpoints/attention_predictor"
OUT="$WORK/alignment"
TASK=(--user-dir "$ROOT/fairseq_hier" --task hierarchical_summarization --max-paragraphs 30
      --max-paragraph-tokens 100 --max-source-positions 1024)
[[ -f "$PHT" ]] || WORK="$WORK" bash examples/demo/run_demo.sh
mkdir -p "$OUT"

# 1. labels: teacher-forced PHT paragraph attention (eta) and paragraph embeddings (Phi)
if [[ ! -f "$LABELS/meta.json" ]]; then
  fairseq-hier-extract-attention "$WORK/data-bin" --path "$PHT" --destdir "$LABELS" \
    --splits train valid test --batch-size 64 2>&1 | grep -E "examples ->"
fi
# 2. the attention-prediction model (001 Sec. 4.2.1: 2 layers, dropout 0.5, MSE); its optimiser:
# the table's (fairseq_hier/recipes/architectures.py)
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

# 3. decode the test set with each strategy; identical rules otherwise (000/001 Sec. 4.2/5.2: beam
# 5, trigram blocking, no repeat of the two previous tokens, at most 80 tokens here; the table's,
# fairseq_hier/recipes/architectures.py, pht's alignment_demo)
DECODING=$(fairseq-hier-settings pht --stage paper-decode --dataset alignment_demo)
mapfile -t RULES <<< "$DECODING"
RULES+=(--batch-size 50 --required-batch-size-multiple 1 --num-workers 0)
declare -A STRATEGY=(
  [vanilla]=""
  [attalign]="--attention-alignment --align-beta 0.8 --align-predictor $PRED/checkpoint_best.pt"
  [strcov]="--attention-alignment --align-strategy strcov --align-beta 0.8"
  [extprob]="--attention-alignment --align-strategy extprob --align-beta 0.8 --align-ranker-scores $OUT/test.scores"
  [attalign_live]="--attention-alignment --align-beta 0.8 --align-predictor $PRED/checkpoint_best.pt --align-live-beams"
  [attalign_top5]="--attention-alignment --align-beta 0.8 --align-predictor $PRED/checkpoint_best.pt --align-keep-paragraphs 5"
)
declare -A LABEL=([vanilla]=vanilla [attalign]=attAlign [strcov]=strCov [extprob]=extProb
                  [attalign_live]=attAlign,live [attalign_top5]=attAlign,top-5)
N_TEST=$(wc -l < "$WORK/raw/test.tgt")
for NAME in $STRATEGIES; do
  RUN="$OUT/$NAME"
  if [[ ! -f "$RUN/test.rouge.txt" ]]; then
    echo "== decoding: $NAME"
    fairseq-hier-run-json "$RUN" --name "pht+${LABEL[$NAME]}" --arch pht \
      --task hierarchical_summarization --metric rouge > /dev/null
    # shellcheck disable=SC2086
    fairseq-generate "$WORK/data-bin" "${TASK[@]}" --path "$PHT" "${RULES[@]}" ${STRATEGY[$NAME]} \
      > "$RUN/generate-test.txt.tmp" 2>&1 || { tail -5 "$RUN/generate-test.txt.tmp" >&2; exit 1; }
    mv "$RUN/generate-test.txt.tmp" "$RUN/generate-test.txt"
    python -m fairseq_hier.cli.hypotheses "$RUN/generate-test.txt" --expected "$N_TEST" \
      -o "$RUN/test.hyp"
    cp "$WORK/raw/test.tgt" "$RUN/test.ref"
    fairseq-hier-rouge "$RUN/test.ref" "$RUN/test.hyp" -zs --saveto "$RUN/test.rouge.txt" > /dev/null
  fi
done
SYSTEMS=()
for NAME in $STRATEGIES; do
  SYSTEMS+=("${LABEL[$NAME]}=$OUT/$NAME/test.hyp")
done
echo
echo "== PHT decoding strategies on the $N_TEST test examples: fact accuracy and ROUGE-1.5.5 F1, x100 [95% interval]"
python examples/demo/score_table.py --facts "$WORK/raw/test.facts.jsonl" "$WORK/raw/test.tgt" \
  "${SYSTEMS[@]}" | tee "$OUT/table.txt"
# is a strategy's ROUGE gain over vanilla beam search more than resampling noise? paired
# bootstrap over the test documents (one-sided p; *: p < 0.05)
echo "== paired bootstrap of ROUGE against vanilla beam search (1000 resamples)"
fairseq-hier-significance rouge "$WORK/raw/test.tgt" "${SYSTEMS[@]}" \
  --json "$OUT/significance.json" | grep -v '^{' | tee "$OUT/significance.txt"
echo "== demo part 2 took $((SECONDS - START)) s"
