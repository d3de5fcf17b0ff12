#!/usr/bin/env bash
# The WMT20 recipe end to end on a made-up En-De corpus at small dims on the CPU, about 5 minutes
# on 2 cores (README.md, "A small run you can do now").
# usage: demo.sh [WORK]   (default /tmp/fairseq-hier-doc-demo)
set -euo pipefail
WORK=${1:-/tmp/fairseq-hier-doc-demo}
RECIPE="$(dirname "$0")/recipe.sh"
[[ -f "$WORK/data/news-commentary-v15.de-en.tsv" ]] || fairseq-hier-demo doc-corpus --output-dir "$WORK/data"
# the demo's updates, warm-up, lr and batch: the table's (hat_transformer_wmt_en_de's demo)
export BPE_CODES=${BPE_CODES:-300} MAX_CHUNK=${MAX_CHUNK:-64} SETTINGS_DATASET=demo UPDATE_FREQ=1 \
  LOG_INTERVAL=200 PRECISION="" WORKERS=${WORKERS:-2}
bash "$RECIPE" en-de extract "$WORK/data" "$WORK"
bash "$RECIPE" en-de prepare "$WORK/data" "$WORK"
bash "$RECIPE" en-de train "$WORK/data" "$WORK" --encoder-layers 2 --decoder-layers 2 \
  --encoder-embed-dim 64 --decoder-embed-dim 64 --encoder-ffn-embed-dim 128 \
  --decoder-ffn-embed-dim 128 --encoder-attention-heads 4 --decoder-attention-heads 4 --seed 1 \
  --num-workers 0 --no-last-checkpoints
bash "$RECIPE" en-de decode "$WORK/data" "$WORK"
