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
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
DATA=$1; SAVE=$2; shift 2
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
mkdir -p "$SAVE"
# 002's batch, 10,500 tokens x 16 accumulated per update, on any number of GPUs (GPUS: default
# those torch sees); MAX_TOKENS and UPDATE_FREQ: yours instead
mapfile -t BATCHING < <(fairseq-hier-settings --stage batch --max-tokens "${MAX_TOKENS:-10500}" \
  --paper-update-freq 16 ${UPDATE_FREQ:+--update-freq "$UPDATE_FREQ"} ${GPUS:+--gpus "$GPUS"} \
  --log "$SAVE/train.log")
ARCH=transformer
# the run folder: checkpoints, train.log and run.json (what fairseq-hier-report reads)
fairseq-hier-run-json "$SAVE" --name "$(basename "$SAVE")" --arch "$ARCH" \
  --task hierarchical_summarization --metric rouge > /dev/null
fairseq-train "$DATA" --user-dir "$USER_DIR" --task hierarchical_summarization \
  --max-paragraphs 24 --max-paragraph-tokens 500 --max-source-positions 800 --arch transformer \
  --encoder-layers 6 --decoder-layers 6 --encoder-embed-dim 256 --decoder-embed-dim 256 \
  --encoder-ffn-embed-dim 1024 --decoder-ffn-embed-dim 1024 --encoder-attention-heads 8 \
  --decoder-attention-heads 8 --share-all-embeddings --dropout 0.1 --attention-dropout 0.1 \
  --activation-dropout 0.1 \
  --optimizer adam --adam-betas '(0.9, 0.998)' --adam-eps 1e-9 --lr 1.3975e-3 \
  --lr-scheduler inverse_sqrt --warmup-updates 8000 --warmup-init-lr 0 \
  --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
  "${BATCHING[@]}" --max-update 500000 \
  --save-dir "$SAVE" --save-interval-updates 5000 --validate-interval-updates 5000 \
  --keep-interval-updates 5 --keep-best-checkpoints 5 --skip-invalid-size-inputs-valid-test "$@" \
  2>&1 | tee -a "$SAVE/train.log"
