#!/usr/bin/env bash
# Train 002's Flat Transformer baseline (FT) on the SAME data-bin as pht, vht and liu_ht: fairseq's
# transformer, 6+6 layers, d=256, FFN 1024, 8 heads (002: "All transformer-based models had 256
# hidden units; the feed-forward hidden size was 1,024"; "We used a 6-layer transformer"), the
# title and ranked paragraphs concatenated and cut to 800 tokens (FT's best length in 002 Table 2),
# dropout 0.1, label smoothing 0.1, the same Adam / Noam schedule as train_liu_ht.sh.
# The 5 checkpoints of lowest validation loss are kept (checkpoint.best_loss_X.pt): 002 reports
# the test scores averaged over its 5 best validation checkpoints (five_best.sh).
# usage: train_ft.sh DATA_BIN RUN_DIR [extra fairseq-train args, e.g. --max-source-positions 600]
#   RUN_DIR (--save-dir), e.g. work/wikisum/checkpoints/ft: checkpoints, train.log, run.json
# 002's optimisation, batch and checkpoints: train_002.sh.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
exec bash "$(dirname "$0")/train_002.sh" transformer "$1" "$2" --max-source-positions 800 \
  --encoder-layers 6 --decoder-layers 6 --encoder-embed-dim 256 --decoder-embed-dim 256 \
  --encoder-ffn-embed-dim 1024 --decoder-ffn-embed-dim 1024 --encoder-attention-heads 8 \
  --decoder-attention-heads 8 --share-all-embeddings --dropout 0.1 --attention-dropout 0.1 \
  --activation-dropout 0.1 \
  "${@:3}"
