#!/usr/bin/env bash
# HAT recipes: which source sentences the decoder looked at (004 Sec. 6, Figures 2-3). Decodes a
# few test examples (one per batch, every SHARDS-th batch: fairseq-generate --num-shards) with
# --print-sentence-attention, then draws example ID (default: the first decoded) with
# fairseq-hier-heatmap: target tokens down, sentence numbers across, top-16 sentences per token
# as the paper shows them (our weights are already averaged over heads).
#
# usage: heatmap.sh WORK BART_DIR CHECKPOINT OUT_DIR [ID]
#   BART_DIR: fairseq's BART files, or a Hugging Face BART directory (then prepare.sh's derived
#   files in WORK/bart_files are read)
# env: LAYER (-1: last decoder layer) SHARDS (200) MAX_SOURCE (the model's: 3072 for arXiv/AMI)
#      SETTINGS_DATASET BEAM LENPEN MIN_LEN MAX_LEN as decode.sh (generation.sh)
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 WORK BART_DIR CHECKPOINT OUT_DIR [ID]" >&2; exit 2; }
WORK=$1; BART=$2; CKPT=$3; OUT=$4; ID=${5:-}
[[ -f "$BART/config.json" ]] && BART="$WORK/bart_files"
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
mkdir -p "$OUT"
source "$(dirname "$0")/generation.sh"  # GENERATION: the table's decoding options
fairseq-generate "$WORK/data-bin" --user-dir "$USER_DIR" --task hat_summarization \
  --source-lang source --target-lang target --path "$CKPT" --gen-subset test --batch-size 1 \
  --max-source-positions "${MAX_SOURCE:-1024}" \
  --num-shards "${SHARDS:-200}" --shard-id 0 --print-sentence-attention \
  --sentence-attention-layer "${LAYER:--1}" "${GENERATION[@]}" > "$OUT/attention.log"
if [[ -z "$ID" ]]; then
  ID=$(grep -m1 -oP '^A-\K[0-9]+' "$OUT/attention.log")
fi
fairseq-hier-heatmap "$OUT/attention.log" --id "$ID" --top-k 16 \
  --gpt2-encoder-json "$BART/encoder.json" --out "$OUT/heatmap-$ID.png"
