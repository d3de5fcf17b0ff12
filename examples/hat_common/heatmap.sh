#!/usr/bin/env bash
# Which source sentences the decoder looked at (004 Sec. 6, Figures 2-3): README.md, step 4.
# usage: heatmap.sh WORK BART_DIR CHECKPOINT OUT_DIR [ID]
# env: LAYER (-1) SHARDS (200) MAX_SOURCE (1024) SETTINGS_DATASET BEAM LENPEN MIN_LEN MAX_LEN
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 WORK BART_DIR CHECKPOINT OUT_DIR [ID]" >&2; exit 2; }
WORK=$1; BART=$2; CKPT=$3; OUT=$4; ID=${5:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[[ -f "$BART/config.json" ]] && BART="$WORK/bart_files"
source "$ROOT/examples/common/paper_decoding.sh"
paper_decoding hat_bart_large "${SETTINGS_DATASET:-other}"
mkdir -p "$OUT"
fairseq-generate "$WORK/data-bin" --user-dir "$ROOT/fairseq_hier" --task hat_summarization \
  --source-lang source --target-lang target --path "$CKPT" --gen-subset test --batch-size 1 \
  --max-source-positions "${MAX_SOURCE:-1024}" --num-shards "${SHARDS:-200}" --shard-id 0 \
  --print-sentence-attention --sentence-attention-layer "${LAYER:--1}" "${GENERATION[@]}" \
  > "$OUT/attention.log"
[[ -n "$ID" ]] || ID=$(grep -m1 -oP '^A-\K[0-9]+' "$OUT/attention.log")
fairseq-hier-analyse heatmap "$OUT/attention.log" --id "$ID" --top-k 16 \
  --gpt2-encoder-json "$BART/encoder.json" -o "$OUT/heatmap-$ID.png"
