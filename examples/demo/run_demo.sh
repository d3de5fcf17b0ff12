#!/usr/bin/env bash
# The fairseq-hier demo (docs/results.md): a generated corpus with ground-truth facts -> four models ->
# fact accuracy and ROUGE-1.5.5 beside three baselines, the attention cosines, the efficiency
# table, fairseq-hier-summarize on raw documents. Steps whose outputs exist are skipped.
# env: WORK (demo_work) SEED (1) TRAIN (6000) UPDATES (1000) ARCHS CORPUS_ARGS ANALYSES (1)
set -euo pipefail
source "$(dirname "$0")/../common/env.sh"
WORK=${WORK:-$ROOT/demo_work}
SEED=${SEED:-1}
UPDATES=${UPDATES:-1000}
ARCHS=${ARCHS:-transformer pht vht liu_ht}
RAW="$WORK/raw"
START=$SECONDS
if [[ ! -f "$RAW/test.facts.jsonl" ]]; then
  # shellcheck disable=SC2086
  fairseq-hier-demo corpus --output-dir "$RAW" --seed "$SEED" --train "${TRAIN:-6000}" \
    --valid 200 --test 200 ${CORPUS_ARGS:-}
fi
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  WORKERS=2 bash examples/common/binarize.sh "$RAW" "$WORK/data-bin" > "$WORK/preprocess.log" 2>&1 \
    || { cat "$WORK/preprocess.log" >&2; exit 1; }
  DECODING=$(fairseq-hier-settings pht --stage paper-decode --dataset demo)
  mapfile -t GENERATION <<< "$DECODING"
  fairseq-hier-record data "$WORK/data-bin" --task hierarchical_summarization \
    --pipeline paragraphs --generation "${GENERATION[*]}"
fi
# the same data-bin, widths, layers and seed for every model; no dropout (docs/results.md)
MODEL=(--encoder-layers 2 --decoder-layers 2 --encoder-embed-dim 128 --decoder-embed-dim 128
       --encoder-ffn-embed-dim 256 --decoder-ffn-embed-dim 256 --encoder-attention-heads 4
       --decoder-attention-heads 4 --dropout 0 --attention-dropout 0 --activation-dropout 0)
TASK="--max-paragraphs 30 --max-paragraph-tokens 100 --max-source-positions 1024"
for ARCH in $ARCHS; do
  CK="$WORK/runs/$ARCH"
  fairseq-hier-record run "$CK" --name "$ARCH" --arch "$ARCH" \
    --task hierarchical_summarization --metric rouge > /dev/null
  if [[ ! -f "$CK/checkpoint_last.pt" ]] || ! grep -q "done training" "$CK/train.log" 2>/dev/null; then
    EXTRA=()
    [[ "$ARCH" == transformer ]] && EXTRA=(--share-all-embeddings)
    [[ "$ARCH" == liu_ht ]] && EXTRA=(--global-layers 1 --global-heads 4)  # the top layer global
    echo "== training $ARCH ($UPDATES updates of 32 examples, seed $SEED)"
    OPTIMISATION_TEXT=$(fairseq-hier-settings "$ARCH" --stage paper-train --dataset demo \
      -- --max-update "$UPDATES")
    mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
    T0=$SECONDS
    # shellcheck disable=SC2086
    fairseq-train "$WORK/data-bin" --user-dir "$ROOT/fairseq_hier" --task hierarchical_summarization \
      $TASK --arch "$ARCH" "${MODEL[@]}" "${EXTRA[@]}" "${OPTIMISATION[@]}" --batch-size 32 \
      --save-dir "$CK" --no-epoch-checkpoints --validate-interval-updates 100 \
      --save-interval-updates "$UPDATES" --keep-interval-updates 1 --log-interval 100 \
      --seed "$SEED" --num-workers 0 --no-progress-bar 2>&1 | tee "$CK/train.log" \
      | grep -E "\| train \||done training" || { tail -3 "$CK/train.log" >&2; exit 1; }
    echo "   trained in $((SECONDS - T0)) s"
  fi
  if [[ ! -f "$CK/test.rouge.txt" ]]; then
    echo "== decoding $ARCH"
    bash examples/common/decode.sh "$CK" "--protocol plain" --data "$WORK/data-bin" \
      --references "$RAW/test.tgt" --checkpoint "$CK/checkpoint_last.pt" --task-args="$TASK" \
      --batch-size 50 -- --num-workers 0 > "$CK/decode.log" 2>&1 \
      || { tail -5 "$CK/decode.log" >&2; exit 1; }
  fi
  if [[ ! -f "$CK/attention.json" ]]; then
    echo "== paragraph-attention cosine of $ARCH (000 Table 1)"
    fairseq-hier-analyse attention-cosine "$WORK/data-bin" --path "$CK/checkpoint_last.pt" \
      --generate-log "$CK/generate-test.txt" --subset test --heatmaps 3 --cpu \
      -o "$CK/attention.json" 2> "$CK/attention.log" | tail -1 \
      || { tail -3 "$CK/attention.log" >&2; exit 1; }
  fi
done
fairseq-hier-baseline lead --source "$RAW/test.src" --reference "$RAW/test.tgt" -o "$WORK/lead.hyp"
fairseq-hier-demo facts baseline frequent --facts "$RAW/test.facts.jsonl" \
  --train-facts "$RAW/train.facts.jsonl" -o "$WORK/frequent.hyp"
fairseq-hier-demo facts baseline first --facts "$RAW/test.facts.jsonl" \
  --source "$RAW/test.src" -o "$WORK/first.hyp"
SYSTEMS=(Lead="$WORK/lead.hyp" most-frequent="$WORK/frequent.hyp" first-stated="$WORK/first.hyp")
for ARCH in $ARCHS; do SYSTEMS+=("$ARCH=$WORK/runs/$ARCH/test.hyp"); done
echo
echo "== $(wc -l < "$RAW/test.tgt") test examples: fact accuracy (ground truth of the corpus generator) and ROUGE-1.5.5 F1, x100 [95% interval]"
python examples/demo/score_table.py --facts "$RAW/test.facts.jsonl" "$RAW/test.tgt" "${SYSTEMS[@]}" \
  | tee "$WORK/table.txt"
if [[ "${ANALYSES:-1}" == 0 ]]; then
  echo "== demo part 1 took $((SECONDS - START)) s (ANALYSES=0: no efficiency table, no raw-text summarisation)"
  exit 0
fi
if [[ ! -f "$WORK/efficiency.json" ]]; then
  echo "== efficiency at 1600 source tokens (000 Table 4)"
  # shellcheck disable=SC2086
  fairseq-hier-analyse efficiency --archs $ARCHS --tokens 1600 --layers 2 --embed-dim 128 --heads 4 \
    --data "$WORK/data-bin" --memory-budget-gib 2 --cpu --threads 2 \
    -o "$WORK/efficiency.json" 2> "$WORK/efficiency.log" | grep -v '^{' \
    || { tail -3 "$WORK/efficiency.log" >&2; exit 1; }
fi
# the first checkpoint as a summarizer of raw documents: 5 test examples written back as raw
# clusters must give fairseq-generate's summaries
SUMMARIZE=$WORK/runs/${ARCHS%% *}
echo "== fairseq-hier-summarize ${ARCHS%% *} on 5 raw test clusters"
python examples/demo/layouts.py clusters "$RAW/test.src" "$WORK/raw_clusters.jsonl" --count 5
fairseq-hier-summarize "$SUMMARIZE" "$WORK/raw_clusters.jsonl" --cpu --checkpoint-file \
  checkpoint_last.pt --no-progress-bar -o "$WORK/raw_clusters.summaries" 2> "$WORK/summarize.log" \
  || { tail -3 "$WORK/summarize.log" >&2; exit 1; }
SAME=$(paste -d '\t' "$WORK/raw_clusters.summaries" <(head -5 "$SUMMARIZE/test.hyp") \
  | awk -F '\t' '$1 == $2' | wc -l)
echo "   $SAME of 5 equal to fairseq-generate's; first: $(head -1 "$WORK/raw_clusters.summaries")"
for ARCH in $ARCHS; do cp "$WORK/efficiency.json" "$WORK/runs/$ARCH/efficiency.json"; done
echo "== demo part 1 took $((SECONDS - START)) s (the report: bash examples/demo/report.sh, which make demo runs last)"
