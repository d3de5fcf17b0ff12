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
# usage: decode.sh WORK BART_DIR CHECKPOINT RUN_DIR [extra fairseq-generate args]
#   RUN_DIR: the run folder (recipe.sh: the checkpoint's, WORK/checkpoints/KIND); writes there
#   generate-SUBSET.txt (fairseq-generate's output, kept: a rerun rescores it), SUBSET.hyp.raw
#   (the detokenised hypotheses in example order), SUBSET.hyp and SUBSET.ref (PTB-tokenised
#   hypotheses and references: what ROUGE scores, the references' sentences separated by " <q> "
#   where the dataset marks them, which fairseq-hier-rouge splits at whatever -e; SUBSET.refs.jsonl
#   too when WORK/bpe has one,
#   several references per example), SUBSET.rouge.txt (ROUGE-1.5.5's report); run.json when the
#   folder has none (the checkpoint's run's arch)
# env: SUBSET (test) BEAM LENPEN MIN_LEN MAX_LEN (generation.sh; the paper's per dataset: its
#      decoding.sh) BATCH (16)
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 WORK BART_DIR CHECKPOINT RUN_DIR [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; BART=$2; CKPT=$3; OUT=$4; shift 4
SUBSET=${SUBSET:-test}
source "$(dirname "$0")/generation.sh"  # GENERATION: the options prepare.sh records
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
mkdir -p "$OUT"
fairseq-hier-run-json "$OUT" --inherit "$(dirname "$CKPT")" --task hat_summarization \
  --metric rouge > /dev/null
LOG="$OUT/generate-$SUBSET.txt"
if [[ ! -f "$LOG" ]]; then
  fairseq-generate "$WORK/data-bin" --user-dir "$USER_DIR" --task hat_summarization \
    --source-lang source --target-lang target --path "$CKPT" --gen-subset "$SUBSET" \
    "${GENERATION[@]}" --batch-size "${BATCH:-16}" --required-batch-size-multiple 1 \
    --bpe gpt2 --gpt2-encoder-json "$BART/encoder.json" --gpt2-vocab-bpe "$BART/vocab.bpe" \
    "$@" > "$LOG.tmp"
  mv "$LOG.tmp" "$LOG"
fi
N=$(wc -l < "$WORK/bpe/$SUBSET.ref")
fairseq-hier-hypotheses "$LOG" --expected "$N" --lines D -o "$OUT/$SUBSET.hyp.raw"
fairseq-hier-ptb-tokenize "$OUT/$SUBSET.hyp.raw" "$OUT/$SUBSET.hyp"
fairseq-hier-ptb-tokenize "$WORK/bpe/$SUBSET.ref" "$OUT/$SUBSET.ref"
REFS="$OUT/$SUBSET.ref"
rm -f "$OUT/$SUBSET.refs.jsonl"
if [[ -f "$WORK/bpe/$SUBSET.refs.jsonl" ]]; then
  # several references per example (--format jsonl): each PTB-tokenised, scored together
  REFS="$OUT/$SUBSET.refs.jsonl"
  python - "$WORK/bpe/$SUBSET.refs.jsonl" "$REFS" <<'PY'
import json, sys
from fairseq_hier.io import write_text
from fairseq_hier.preparation.ptb_tokenize import PTBTokenizer
from fairseq_hier.scoring.rouge import read_references
tokenize = PTBTokenizer()
write_text(sys.argv[2], "".join(json.dumps([tokenize(r) for r in refs], ensure_ascii=False) + "\n"
                                for refs in read_references([sys.argv[1]])))
PY
fi
fairseq-hier-rouge "$REFS" "$OUT/$SUBSET.hyp" -zs --also-rouge-score --saveto "$OUT/$SUBSET.rouge.txt"
