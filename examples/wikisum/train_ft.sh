#!/usr/bin/env bash
# 002's Flat Transformer (README.md, step 4). usage: train_ft.sh DATA_BIN RUN_DIR [fairseq-train args]
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
exec bash "$(dirname "$0")/train_002.sh" transformer "$1" "$2" --max-source-positions 800 \
  --encoder-layers 6 --decoder-layers 6 --encoder-embed-dim 256 --decoder-embed-dim 256 \
  --encoder-ffn-embed-dim 1024 --decoder-ffn-embed-dim 1024 --encoder-attention-heads 8 \
  --decoder-attention-heads 8 --share-all-embeddings --dropout 0.1 --attention-dropout 0.1 \
  --activation-dropout 0.1 \
  "${@:3}"
