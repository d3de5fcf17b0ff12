#!/usr/bin/env bash
# A small end-to-end run of the WMT20 document recipe on a made-up En-De corpus in the published
# layouts (fairseq-hier-doc-demo-corpus: word-by-word lexicon plus a pronoun whose German gender
# comes from the document's first sentence), both systems at small dims on the CPU: extract,
# tokenise, BPE, chunk, binarize, train, translate whole test documents, document-level BLEU with
# its signature, the paired bootstrap interval and p-value. About 5 minutes on 2 CPU cores.
#
# usage: demo.sh [WORK]   (default /tmp/fairseq-hier-doc-demo)
set -euo pipefail
WORK=${1:-/tmp/fairseq-hier-doc-demo}
HERE=$(cd "$(dirname "$0")" && pwd)
[[ -f "$WORK/data/news-commentary-v15.de-en.tsv" ]] || fairseq-hier-doc-demo-corpus "$WORK/data"
# the demo's updates, warm-up, lr and batch: the table's (fairseq_hier/recipes/architectures.py,
# hat_transformer_wmt_en_de's demo)
export BPE_CODES=${BPE_CODES:-300} MAX_CHUNK=${MAX_CHUNK:-64} SETTINGS_DATASET=demo UPDATE_FREQ=1 LOG_INTERVAL=200 PRECISION="" WORKERS=${WORKERS:-2}
SMALL=(--encoder-layers 2 --decoder-layers 2 --encoder-embed-dim 64 --decoder-embed-dim 64
       --encoder-ffn-embed-dim 128 --decoder-ffn-embed-dim 128 --encoder-attention-heads 4
       --decoder-attention-heads 4 --seed 1 --num-workers 0 --no-last-checkpoints)
for step in extract prepare; do bash "$HERE/recipe.sh" en-de "$step" "$WORK/data" "$WORK"; done
bash "$HERE/recipe.sh" en-de train "$WORK/data" "$WORK" "${SMALL[@]}"
bash "$HERE/recipe.sh" en-de decode "$WORK/data" "$WORK"
