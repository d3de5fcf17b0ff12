#!/usr/bin/env bash
# Train Liu & Lapata's Hierarchical Transformer (liu_ht) with 002's settings (Sec. 4): 5 local + 2
# global encoder layers (global = layers 5,6), d=256, FFN 1024, 8 heads, 6 decoder layers (as
# hiersumm's released checkpoint), dropout 0.1, label smoothing 0.1, Adam (0.9, 0.998) with
# Noam's schedule (lr factor 2, 8,000 warm-up steps: peak 2 * 256^-0.5 * 8000^-0.5 = 1.3975e-3,
# which fairseq's inverse_sqrt reproduces exactly: linear warm-up from 0, then 1/sqrt decay),
# the title + top 24 paragraphs (~1,600 tokens; each paragraph cut at 500 tokens, hiersumm's
# -trunc_src_ntoken default), 500k updates. 002 trains on 4 GPUs with gradient accumulation
# (hiersumm's README: batches of 10,500 source tokens x 4 GPUs x 4 accumulations); here
# --max-tokens counts source (P x L) tokens per GPU and --update-freq accumulates.
# Graph-informed attention (002 Eq. 24): write the graphs first (fairseq-hier-graph, see the
# README) and append --paragraph-graph tfidf (or adg).
# The 5 checkpoints of lowest validation loss are kept (checkpoint.best_loss_X.pt): 002 reports
# the test scores averaged over its 5 best validation checkpoints (five_best.sh).
# DATA_BIN: prepare.sh's data-bin with TITLE_PLACEMENT=every (work/wikisum/data-bin-every): every
# paragraph opens with 'title <T>', as in hiersumm's shards, since the local layers read each
# paragraph alone.
# usage: train_liu_ht.sh DATA_BIN RUN_DIR [extra fairseq-train args]
#   RUN_DIR (--save-dir), e.g. work/wikisum/checkpoints/liu_ht: checkpoints, train.log, run.json
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
ARCH=liu_ht
# the run folder: checkpoints, train.log and run.json (what fairseq-hier-report reads)
fairseq-hier-run-json "$SAVE" --name "$(basename "$SAVE")" --arch "$ARCH" \
  --task hierarchical_summarization --metric rouge > /dev/null
fairseq-train "$DATA" --user-dir "$USER_DIR" --task hierarchical_summarization \
  --max-paragraphs 24 --max-paragraph-tokens 500 --arch liu_ht \
  --optimizer adam --adam-betas '(0.9, 0.998)' --adam-eps 1e-9 --lr 1.3975e-3 \
  --lr-scheduler inverse_sqrt --warmup-updates 8000 --warmup-init-lr 0 \
  --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
  "${BATCHING[@]}" --max-update 500000 \
  --save-dir "$SAVE" --save-interval-updates 5000 --validate-interval-updates 5000 \
  --keep-interval-updates 5 --keep-best-checkpoints 5 --skip-invalid-size-inputs-valid-test "$@" \
  2>&1 | tee -a "$SAVE/train.log"
