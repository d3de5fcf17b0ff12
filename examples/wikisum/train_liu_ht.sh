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
# 002's optimisation, batch and checkpoints: train_002.sh.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
exec bash "$(dirname "$0")/train_002.sh" liu_ht "$@"
