#!/usr/bin/env bash
# The fairseq-hier demo: generated multi-document corpus with ground-truth facts ->
# fairseq-preprocess -> fairseq-train (transformer, pht, vht, liu_ht with the same layers and widths,
# the same seed and the same data-bin) -> fairseq-generate -> table of fact accuracy and ROUGE-1.5.5,
# each with its 95% interval, next to the Lead / most-frequent-values / first-stated-values
# baselines; then the paragraph-attention cosine of every model (000 Table 1), the efficiency table
# (000 Table 4), fairseq-hier-summarize on raw documents, and the report (scores with paired-
# bootstrap significance, efficiency, training / validation curves, heatmaps) in $WORK/report.
# About 20 minutes on 2 CPU cores. Steps whose outputs exist are skipped; delete $WORK (default
# demo_work/) to start over.
#
# Every model's run folder is $WORK/checkpoints/ARCH (fairseq-train's --save-dir): run.json,
# checkpoint_last.pt, train.log, generate-test.txt (fairseq-generate's output), test.hyp (the
# summaries in example order), test.ref (the references, raw/test.tgt), test.rouge.txt
# (fairseq-hier-rouge's report), attention.json and efficiency.json: what fairseq-hier-report
# reads (examples/demo/report.sh).
#
# Training: no dropout and no label smoothing, for every model: on this corpus a model first
# learns to copy any value of the right attribute (~40-50% of the facts) and only later to bind
# values to the title's place; dropout delayed that transition by hundreds of updates in our runs.
#
# Environment: WORK, SEED (corpus and training seed, 1), TRAIN (training examples, 6000),
# UPDATES (per model, 1000), ARCHS ("transformer pht vht liu_ht"), CORPUS_ARGS (extra corpus options),
# ANALYSES (1; 0 stops after the score table and the attention cosines: no efficiency table and
# no raw-text summarisation, as the hard tier, examples/demo/run_hard.sh, runs it).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
VENV=${VIRTUAL_ENV:-${CONDA_PREFIX:-$ROOT/.venv}}
export PATH="$VENV/bin:$PATH"
WORK=${WORK:-$ROOT/demo_work}
SEED=${SEED:-1}
TRAIN=${TRAIN:-6000}
UPDATES=${UPDATES:-1000}
ARCHS=${ARCHS:-transformer pht vht liu_ht}
ANALYSES=${ANALYSES:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
mkdir -p "$WORK"
START=$SECONDS

if [[ ! -f "$WORK/raw/test.facts.jsonl" ]]; then
  # shellcheck disable=SC2086
  python -m fairseq_hier.cli.make_demo_corpus --out-dir "$WORK/raw" --seed "$SEED" \
    --train "$TRAIN" --valid 200 --test 200 ${CORPUS_ARGS:-}
fi
if [[ ! -f "$WORK/data-bin/dict.src.txt" ]]; then
  fairseq-preprocess --source-lang src --target-lang tgt --trainpref "$WORK/raw/train" \
    --validpref "$WORK/raw/valid" --testpref "$WORK/raw/test" --destdir "$WORK/data-bin" \
    --joined-dictionary --workers 2 > "$WORK/preprocess.log" 2>&1 \
    || { cat "$WORK/preprocess.log" >&2; exit 1; }
fi
# decoding options, used below and recorded with the data-bin's preprocessing (the corpus's raw
# lines are whitespace tokens, paragraphs in input order): every checkpoint trained on it then
# summarises raw documents with fairseq-hier-summarize CHECKPOINT_DIR ... The demo's decoding
# and optimisation are the table's (fairseq_hier/recipes/architectures.py, data set demo): beam 5,
# trigram blocking, at most 80 tokens; Adam at 2e-3 after 100 warm-up updates.
DECODING=$(fairseq-hier-settings pht --stage paper-decode --dataset demo)
mapfile -t GENERATION <<< "$DECODING"
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  fairseq-hier-record "$WORK/data-bin" --task hierarchical_summarization --pipeline paragraphs \
    --generation "${GENERATION[*]}"
fi

# same data-bin, same widths and layers, same seed for every model; small enough for CPU minutes
MODEL=(--encoder-layers 2 --decoder-layers 2 --encoder-embed-dim 128 --decoder-embed-dim 128
       --encoder-ffn-embed-dim 256 --decoder-ffn-embed-dim 256 --encoder-attention-heads 4
       --decoder-attention-heads 4 --dropout 0 --attention-dropout 0 --activation-dropout 0)
TASK=(--user-dir "$ROOT/fairseq_hier" --task hierarchical_summarization --max-paragraphs 30
      --max-paragraph-tokens 100 --max-source-positions 1024)
N_TEST=$(wc -l < "$WORK/raw/test.tgt")
for ARCH in $ARCHS; do
  CK="$WORK/checkpoints/$ARCH"
  fairseq-hier-run-json "$CK" --name "$ARCH" --arch "$ARCH" \
    --task hierarchical_summarization --metric rouge > /dev/null
  if [[ ! -f "$CK/checkpoint_last.pt" ]] || ! grep -q "done training" "$CK/train.log" 2>/dev/null; then
    mkdir -p "$CK"
    EXTRA=()
    [[ "$ARCH" == transformer ]] && EXTRA=(--share-all-embeddings)
    # liu_ht: of its 2 encoder layers the top one is global (002: the top 2 of 7)
    [[ "$ARCH" == liu_ht ]] && EXTRA=(--global-layers 1 --global-heads 4)
    echo "== training $ARCH ($UPDATES updates of 32 examples, seed $SEED)"
    OPTIMISATION_TEXT=$(fairseq-hier-settings "$ARCH" --stage paper-train --dataset demo \
      -- --max-update "$UPDATES")
    mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
    T0=$SECONDS
    if ! fairseq-train "$WORK/data-bin" "${TASK[@]}" --arch "$ARCH" "${MODEL[@]}" "${EXTRA[@]}" \
      "${OPTIMISATION[@]}" --batch-size 32 --save-dir "$CK" --no-epoch-checkpoints \
      --validate-interval-updates 100 --save-interval-updates "$UPDATES" --keep-interval-updates 1 \
      --log-interval 100 --seed "$SEED" --num-workers 0 --no-progress-bar 2>&1 \
      | tee "$CK/train.log" | grep -E "\| train \||done training"; then
      tail -3 "$CK/train.log" >&2
      exit 1
    fi
    echo "   trained in $((SECONDS - T0)) s"
  fi
  if [[ ! -f "$CK/test.rouge.txt" || ! -f "$CK/generate-test.txt" ]]; then
    echo "== decoding $ARCH"
    fairseq-generate "$WORK/data-bin" "${TASK[@]}" --path "$CK/checkpoint_last.pt" \
      "${GENERATION[@]}" --batch-size 50 \
      --required-batch-size-multiple 1 --num-workers 0 > "$CK/generate-test.txt.tmp" 2>&1 \
      || { tail -5 "$CK/generate-test.txt.tmp" >&2; exit 1; }
    mv "$CK/generate-test.txt.tmp" "$CK/generate-test.txt"
    python -m fairseq_hier.cli.hypotheses "$CK/generate-test.txt" --expected "$N_TEST" \
      -o "$CK/test.hyp"
    # the rest of the run folder: the references scored and ROUGE-1.5.5's report
    cp "$WORK/raw/test.tgt" "$CK/test.ref"
    fairseq-hier-rouge "$CK/test.ref" "$CK/test.hyp" -zs --saveto "$CK/test.rouge.txt" > /dev/null
  fi
  if [[ ! -f "$CK/attention.json" ]]; then
    echo "== paragraph-attention cosine of $ARCH (000 Table 1)"
    fairseq-hier-attention-cosine "$WORK/data-bin" --path "$CK/checkpoint_last.pt" \
      --generate-log "$CK/generate-test.txt" --subset test --heatmaps 3 --cpu \
      --output "$CK/attention.json" 2> "$CK/attention.log" | tail -1 \
      || { tail -3 "$CK/attention.log" >&2; exit 1; }
  fi
done

RAW="$WORK/raw"
python -m fairseq_hier.cli.lead --source "$RAW/test.src" --reference "$RAW/test.tgt" \
  --output "$WORK/lead.hyp"
python -m fairseq_hier.cli.demo_facts baseline frequent --facts "$RAW/test.facts.jsonl" \
  --train-facts "$RAW/train.facts.jsonl" --output "$WORK/frequent.hyp"
python -m fairseq_hier.cli.demo_facts baseline first --facts "$RAW/test.facts.jsonl" \
  --source "$RAW/test.src" --output "$WORK/first.hyp"
SYSTEMS=(Lead="$WORK/lead.hyp" most-frequent="$WORK/frequent.hyp" first-stated="$WORK/first.hyp")
for ARCH in $ARCHS; do SYSTEMS+=("$ARCH=$WORK/checkpoints/$ARCH/test.hyp"); done
echo
echo "== $N_TEST test examples: fact accuracy (ground truth of the corpus generator) and ROUGE-1.5.5 F1, x100 [95% interval]"
python examples/demo/score_table.py --facts "$RAW/test.facts.jsonl" "$RAW/test.tgt" "${SYSTEMS[@]}" \
  | tee "$WORK/table.txt"

if [[ "$ANALYSES" == 0 ]]; then
  echo "== demo part 1 took $((SECONDS - START)) s (ANALYSES=0: no efficiency table, no raw-text summarisation)"
  exit 0
fi
# the efficiency table of 000 Table 4 at the demo's widths and dictionary, validation timed on
# the demo's valid split (CPU: the largest batch is searched on measured peak allocations under a
# 2 GiB budget), copied into every run directory
if [[ ! -f "$WORK/efficiency.json" ]]; then
  echo "== efficiency at 1600 source tokens (000 Table 4)"
  # shellcheck disable=SC2086
  fairseq-hier-efficiency --archs $ARCHS --tokens 1600 --layers 2 --embed-dim 128 --heads 4 \
    --data "$WORK/data-bin" --memory-budget-gib 2 --cpu --threads 2 \
    --output "$WORK/efficiency.json" 2> "$WORK/efficiency.log" | grep -v '^{' \
    || { tail -3 "$WORK/efficiency.log" >&2; exit 1; }
fi
# a checkpoint directory as a summarizer of raw documents: the first 5 test examples written back
# as raw clusters (title + one document per paragraph), summarised by fairseq-hier-summarize with
# the recorded preprocessing and decoding options, must give fairseq-generate's summaries
SUMMARIZE_ARCH=${ARCHS%% *}
if python - "$WORK/checkpoints/$SUMMARIZE_ARCH/checkpoint_last.pt" <<'PY'
import sys, torch
state = torch.load(sys.argv[1], map_location="cpu", weights_only=False)
sys.exit(0 if "hier_preprocess" in state.get("task_state", {}) else 1)
PY
then
  echo "== fairseq-hier-summarize $SUMMARIZE_ARCH on 5 raw test clusters"
  head -5 "$RAW/test.src" | python -c '
import json, sys
for line in sys.stdin:
    title, *paragraphs = [p.strip() for p in line.split("<P>")]
    print(json.dumps({"title": title, "documents": paragraphs}))' > "$WORK/raw_clusters.jsonl"
  fairseq-hier-summarize "$WORK/checkpoints/$SUMMARIZE_ARCH" "$WORK/raw_clusters.jsonl" --cpu \
    --checkpoint-file checkpoint_last.pt \
    --no-progress-bar -o "$WORK/raw_clusters.summaries" 2> "$WORK/summarize.log" \
    || { tail -3 "$WORK/summarize.log" >&2; exit 1; }
  SAME=$(paste -d '\t' "$WORK/raw_clusters.summaries" \
    <(head -5 "$WORK/checkpoints/$SUMMARIZE_ARCH/test.hyp") \
    | awk -F '\t' '$1 == $2' | wc -l)
  echo "   $SAME of 5 equal to fairseq-generate's; first: $(head -1 "$WORK/raw_clusters.summaries")"
else
  echo "== (skipping fairseq-hier-summarize: $SUMMARIZE_ARCH was trained before data-bin had its record)"
fi

for ARCH in $ARCHS; do cp "$WORK/efficiency.json" "$WORK/checkpoints/$ARCH/efficiency.json"; done
echo "== demo part 1 took $((SECONDS - START)) s (the report: bash examples/demo/report.sh, which make demo runs last)"
