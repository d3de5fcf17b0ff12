#!/usr/bin/env bash
# HAT recipes, step 3 (shared by examples/hat_*): decode the test split with fairseq-generate
# (GPT-2 BPE decoded by fairseq's --bpe gpt2, files given by path), take the detokenised
# hypotheses in example order (every id exactly once), PTB-tokenise hypotheses and references
# (fairseq-hier-ptb-tokenize: pysbd + NLTK's Treebank tokenizer, in place of the CoreNLP step of
# fairseq's BART recipe) and score with official ROUGE-1.5.5 (`fairseq-hier-rouge`, files2rouge's
# interface; -zs: an empty summary scores 0 and stays in the average). --also-rouge-score adds
# Google's rouge-score F1 (rouge1/2/L/Lsum, stemmed, sentences on newlines) under ROUGE-1.5.5's
# report: the scorer of PEGASUS-X / PRIMERA / LongT5, a different one, not comparable with
# ROUGE-1.5.5.
#
# usage: decode.sh WORK BART_DIR CHECKPOINT OUT_DIR [extra fairseq-generate args]
# env: BEAM LENPEN MIN_LEN MAX_LEN (generation.sh; the paper's per dataset: its decoding.sh)
#      BATCH (16)
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 WORK BART_DIR CHECKPOINT OUT_DIR [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; BART=$2; CKPT=$3; OUT=$4; shift 4
source "$(dirname "$0")/generation.sh"  # GENERATION: the options prepare.sh records
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
mkdir -p "$OUT"
if [[ ! -f "$OUT/generate.log" ]]; then
  fairseq-generate "$WORK/data-bin" --user-dir "$USER_DIR" --task hat_summarization \
    --source-lang source --target-lang target --path "$CKPT" --gen-subset test \
    "${GENERATION[@]}" --batch-size "${BATCH:-16}" --required-batch-size-multiple 1 \
    --bpe gpt2 --gpt2-encoder-json "$BART/encoder.json" --gpt2-vocab-bpe "$BART/vocab.bpe" \
    "$@" > "$OUT/generate.log.tmp"
  mv "$OUT/generate.log.tmp" "$OUT/generate.log"
fi
N=$(wc -l < "$WORK/bpe/test.ref")
fairseq-hier-hypotheses "$OUT/generate.log" --expected "$N" --lines D -o "$OUT/test.hyp"
fairseq-hier-ptb-tokenize "$OUT/test.hyp" "$OUT/test.hyp.tok"
fairseq-hier-ptb-tokenize "$WORK/bpe/test.ref" "$OUT/test.ref.tok"
fairseq-hier-rouge "$OUT/test.ref.tok" "$OUT/test.hyp.tok" -zs --also-rouge-score | tee "$OUT/rouge.txt"
