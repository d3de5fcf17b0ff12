#!/usr/bin/env bash
# The ParsingSum demo: the Multi-News recipe (examples/multi_news) end to end on a small
# generated corpus written in Multi-News's published layout (documents joined by "|||||",
# targets opening with "– "): reader -> spaCy parse -> sentencepiece -> fairseq-preprocess ->
# fairseq-hier-deps -> fairseq-train of the four systems of 003 Tables 2-3 (transformer = 003's
# FT, transformer_copy with copy attention; parsingsum_ft, liu_ht, parsingsum_ht; small widths,
# same seed and data) -> fairseq-generate with each family's decoding ->
# ROUGE-1.5.5 table -> the report of the four run folders (recipe/checkpoints/SYSTEM: run.json,
# checkpoints, train.log, generate-test.txt, test.hyp, test.ref, test.rouge.txt,
# test.rouge_whole.txt), read as they are, in recipe/report. The corpus is the main demo's
# (fairseq-hier-demo-corpus: places and their facts, stated in English sentences that spaCy
# parses); its title becomes a one-sentence first document. Measured: 27 min on 2 CPU cores shared with two other training runs (each system 2-4 min
# alone); steps whose outputs exist are skipped.
#
# Environment: WORK (default demo_parsingsum/), TRAIN (training examples, 2000), UPDATES (per
# system, 600).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
VENV=${VIRTUAL_ENV:-${CONDA_PREFIX:-$ROOT/.venv}}
export PATH="$VENV/bin:$PATH"
WORK=${WORK:-$ROOT/demo_parsingsum}
TRAIN=${TRAIN:-2000}
UPDATES=${UPDATES:-600}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
mkdir -p "$WORK"
START=$SECONDS

if [[ ! -f "$WORK/multi_news/test.tgt" ]]; then
  python -m fairseq_hier.cli.make_demo_corpus --out-dir "$WORK/corpus" --seed 1 \
    --train "$TRAIN" --valid 100 --test 100 > /dev/null
  mkdir -p "$WORK/multi_news"
  for split in train valid test; do
    name=$split; [[ $split == valid ]] && name=val
    # "title <P> doc <P> doc" -> "Title. ||||| doc ||||| doc |||||" (Multi-News's raw layout)
    python - "$WORK/corpus/$split.src" "$WORK/multi_news/$name.src" <<'PY'
import sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        title, *docs = [p.strip() for p in line.split("<P>")]
        docs = [f"{title.capitalize()} is a place ."] + [d for d in docs if d]
        out.write(" |||||".join(f" {d}" if i else d for i, d in enumerate(docs)) + " |||||\n")
PY
    sed 's/^/– /' "$WORK/corpus/$split.tgt" > "$WORK/multi_news/$name.tgt"
  done
fi

export DATA="$WORK/multi_news" WORK="$WORK/recipe" VOCAB=${VOCAB:-400} WORKERS=1
# the demo's warm-up (100), no decay and 5-60 pieces: the table's (fairseq_hier/recipes/
# architectures.py, data set parsingsum_demo)
export MAX_PARAGRAPHS=12 MAX_PARAGRAPH_TOKENS=40 FLAT_POSITIONS=480 SETTINGS_DATASET=parsingsum_demo
RECIPE=examples/multi_news/run.sh
bash "$RECIPE" prepare
SMALL=(--encoder-embed-dim 128 --decoder-embed-dim 128 --encoder-ffn-embed-dim 256
       --decoder-ffn-embed-dim 256 --encoder-attention-heads 4 --decoder-attention-heads 4
       --decoder-layers 2 --dropout 0 --max-epoch 1000 --num-workers 0)
for SYSTEM in transformer parsingsum_ft liu_ht parsingsum_ht; do
  case $SYSTEM in
    transformer|parsingsum_ft) SHAPE=(--encoder-layers 2) ;;
    *) SHAPE=(--encoder-layers 3 --global-layers 2 --global-heads 4) ;;
  esac
  T0=$SECONDS
  MAX_TOKENS=4000 MAX_UPDATE=$UPDATES SAVE_INTERVAL=$UPDATES \
    bash "$RECIPE" train "$SYSTEM" "${SMALL[@]}" "${SHAPE[@]}" > "$WORK/train_$SYSTEM.out" 2>&1 \
    || { tail -20 "$WORK/train_$SYSTEM.out" >&2; exit 1; }
  echo "trained $SYSTEM in $((SECONDS - T0)) s"
  CHECKPOINT="$WORK/checkpoints/$SYSTEM/checkpoint_last.pt" bash "$RECIPE" decode "$SYSTEM" \
    > "$WORK/decode_$SYSTEM.out" 2>&1 || { tail -20 "$WORK/decode_$SYSTEM.out" >&2; exit 1; }
done
bash "$RECIPE" table
fairseq-hier-report "$WORK"/checkpoints/* --title "ParsingSum demo" --baseline transformer \
  --output-dir "$WORK/report" 2> "$WORK/report.log" || { tail -3 "$WORK/report.log" >&2; exit 1; }
echo "demo done in $((SECONDS - START)) s"
