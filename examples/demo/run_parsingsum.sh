#!/usr/bin/env bash
# The ParsingSum demo (docs/results.md): examples/multi_news end to end on the demo corpus written in
# Multi-News's layout, four systems, their table and report. env: WORK (demo_parsingsum) TRAIN
# (2000) UPDATES (600) VOCAB (400)
set -euo pipefail
source "$(dirname "$0")/../common/env.sh"
WORK=${WORK:-$ROOT/demo_parsingsum}
UPDATES=${UPDATES:-600}
START=$SECONDS
if [[ ! -f "$WORK/multi_news/test.tgt" ]]; then
  fairseq-hier-demo corpus --output-dir "$WORK/corpus" --seed 1 --train "${TRAIN:-2000}" \
    --valid 100 --test 100 > /dev/null
  mkdir -p "$WORK/multi_news"
  for split in train valid test; do
    name=$split; [[ $split == valid ]] && name=val
    python examples/demo/layouts.py multi-news "$WORK/corpus/$split.src" "$WORK/multi_news/$name.src"
    sed 's/^/– /' "$WORK/corpus/$split.tgt" > "$WORK/multi_news/$name.tgt"
  done
fi
# the demo's settings of the table (data set parsingsum_demo) and small widths
export DATA="$WORK/multi_news" WORK="$WORK/recipe" VOCAB=${VOCAB:-400} WORKERS=1
export MAX_PARAGRAPHS=12 MAX_PARAGRAPH_TOKENS=40 FLAT_POSITIONS=480 SETTINGS_DATASET=parsingsum_demo
RECIPE=examples/multi_news/run.sh
bash "$RECIPE" prepare
SMALL=(--encoder-embed-dim 128 --decoder-embed-dim 128 --encoder-ffn-embed-dim 256
       --decoder-ffn-embed-dim 256 --encoder-attention-heads 4 --decoder-attention-heads 4
       --decoder-layers 2 --dropout 0 --max-epoch 1000 --num-workers 0)
for SYSTEM in transformer parsingsum_ft liu_ht parsingsum_ht; do
  SHAPE=(--encoder-layers 3 --global-layers 2 --global-heads 4)
  [[ $SYSTEM == *_ft || $SYSTEM == transformer ]] && SHAPE=(--encoder-layers 2)
  T0=$SECONDS
  MAX_TOKENS=4000 MAX_UPDATE=$UPDATES SAVE_INTERVAL=$UPDATES \
    bash "$RECIPE" train "$SYSTEM" "${SMALL[@]}" "${SHAPE[@]}" > "$WORK/train_$SYSTEM.out" 2>&1 \
    || { tail -20 "$WORK/train_$SYSTEM.out" >&2; exit 1; }
  echo "trained $SYSTEM in $((SECONDS - T0)) s"
  CHECKPOINT="$WORK/runs/$SYSTEM/checkpoint_last.pt" bash "$RECIPE" decode "$SYSTEM" \
    > "$WORK/decode_$SYSTEM.out" 2>&1 || { tail -20 "$WORK/decode_$SYSTEM.out" >&2; exit 1; }
done
bash "$RECIPE" table
fairseq-hier-report "$WORK"/runs/* --title "ParsingSum demo" --baseline transformer \
  --output-dir "$WORK/report" 2> "$WORK/report.log" || { tail -3 "$WORK/report.log" >&2; exit 1; }
echo "demo done in $((SECONDS - START)) s"
