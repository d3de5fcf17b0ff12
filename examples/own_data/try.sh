#!/usr/bin/env bash
# The first run (`make try`, about 4 minutes on 2 CPU cores): a small generated JSON-lines set
# through this recipe's stages (run.sh prepare / train / decode / score), a tiny PHT trained on
# the CPU, then fairseq-hier summarize on new text. Prints each stage, the scores and the files.
# env: WORK (try_work) UPDATES (600) SEED (1) TRAIN (2000 examples) TEST (100, and as many to validate)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../common/env.sh"  # the repository root, this environment's commands first
export WORK=${WORK:-try_work} UPDATES=${UPDATES:-600} SEED=${SEED:-1}
export DATA="$WORK/data" VOCAB=400 SPM_TYPE=bpe GPUS=1 LOG_INTERVAL=100 BATCH=50
START=$SECONDS
step() { echo; echo "== $* ($((SECONDS - START)) s)"; }
quiet() {  # run a stage into its log; on failure, the log's last lines
  local log=$1; shift
  "$@" > "$log" 2>&1 || { tail -5 "$log" >&2; echo "try.sh: failed, the whole log: $log" >&2; exit 1; }
}
mkdir -p "$WORK"

step "1/5 a generated corpus: $DATA/{train,valid,test}.jsonl, one example a line"
[[ -f "$DATA/test.jsonl" ]] || fairseq-hier demo corpus --format jsonl --output-dir "$DATA" \
  --seed "$SEED" --train "${TRAIN:-2000}" --valid "${TEST:-100}" --test "${TEST:-100}" --other-entities 1
echo "   each example: a place's title, ~8 short documents about it and one other place, a summary of its facts"

step "2/5 prepare: JSON lines -> $WORK/raw -> sentencepiece -> $WORK/spm/data-bin"
quiet "$WORK/prepare.log" bash "$HERE/run.sh" prepare pht

step "3/5 train a small PHT ($UPDATES updates of 32 examples, 2+2 layers of 128) on the CPU"
mapfile -t OPTIMISATION < <(fairseq-hier settings pht --stage paper-train --dataset demo)
quiet "$WORK/train.log" bash "$HERE/run.sh" train pht "${OPTIMISATION[@]}" --max-update "$UPDATES" \
  --seed "$SEED" --encoder-layers 2 --decoder-layers 2 --encoder-embed-dim 128 \
  --decoder-embed-dim 128 --encoder-ffn-embed-dim 256 --decoder-ffn-embed-dim 256 \
  --encoder-attention-heads 4 --decoder-attention-heads 4 --dropout 0 --batch-size 32 \
  --update-freq 1 --num-workers 0 --save-interval-updates 0 --validate-interval-updates 0
grep -E "\| valid \|" "$WORK/train.log" | tail -1 | grep -oE "epoch [0-9]+ .*\| loss [0-9.]+" \
  | sed 's/^/   validation: /'

step "4/5 decode the test split (beam 5) and score it with official ROUGE-1.5.5"
quiet "$WORK/decode.log" bash "$HERE/run.sh" decode pht
bash "$HERE/run.sh" score pht 2>&1 | tee "$WORK/score.log" | sed 's/^/   /'
echo "   expected: ROUGE-1 99-100 after 600 updates (seeds 1-3); below ~90 the model states the"
echo "   summary template with other places' facts: it has not learnt to bind them yet (more UPDATES)"

step "5/5 summarise new text with the run folder"
printf '%s\n' '{"title": "lamon", "documents": ["lamon : lamon lies within veshevia .", "lamon : traders praise the pottery made at lamon ."]}' \
  > "$WORK/new.jsonl"
quiet "$WORK/summarize.log" fairseq-hier-summarize "$WORK/runs/pht" "$WORK/new.jsonl" --cpu \
  -o "$WORK/new.summaries"
echo "   input: $(cat "$WORK/new.jsonl")"
echo "   summary: $(cat "$WORK/new.summaries")"
echo "   (the corpus's summaries always state five facts: those the input lacks are made up)"

step "done; the files"
row() { printf '   %-36s %s\n' "$1" "$2"; }
row "$DATA/{train,valid,test}.jsonl" "the examples (docs/data-formats.md: the JSON-lines schema)"
row "$WORK/raw/" "raw text: SPLIT.src (title <P> document <P> ...), SPLIT.tgt"
row "$WORK/spm/" "sentencepiece model, pieces, data-bin/ (+ hier_preprocess.json)"
row "$WORK/runs/pht/" "the run folder: checkpoint_best.pt, train.log, settings.log,"
row "" "generate-test.txt, test.hyp, test.ref, test.rouge.txt"
row "$WORK/new.summaries" "the summary of $WORK/new.jsonl"
row "$WORK/*.log" "each stage's log"
echo "Next: your own data through the same stages, README.md (\"Your own data with the recipe\")."
