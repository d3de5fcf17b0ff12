#!/usr/bin/env bash
# ParsingSum recipes, step 7 (shared by examples/multi_news and examples/wcep): decode one trained
# system on the test (or valid) split and score it with official ROUGE-1.5.5
# (`fairseq-hier-rouge`).
# Decoding (generation.sh): the flat systems as Fabbri et al.'s OpenNMT scripts (003's FT: beam
# 5, Wu's length penalty 0.9, stepwise summary coverage 5, trigram blocking), the hierarchical
# ones as Liu & Lapata's code (beam 5, Wu's length penalty 0.4); lengths in sentencepiece pieces,
# the table's per data set (SETTINGS_DATASET, set by the dataset's run.sh; MIN_LEN / MAX_LEN
# replace them). The task's cut (flat systems: whole
# documents concatenated and cut to FLAT_POSITIONS) is the training one, passed again here.
# Scoring: the hypotheses in example order (fairseq-hier-hypotheses: every id exactly once),
# references = the split's targets tokenised by the parse step ($WORK/parsed/SPLIT.tgt.tok), so
# both sides are spaCy tokens; '<unk>' -> 'UNK' and '<'/'>' -> ' ' on both sides (ROUGE-1.5.5
# reads a sentence only up to its first '<'; it drops non-alphanumerics itself, so nothing else
# changes). Two runs of `fairseq-hier-rouge -zs` (an empty hypothesis scores 0 and stays in the
# average):
#   SUBSET.rouge.txt        sentences split on ' .': ROUGE-L is ROUGE-1.5.5's summary-level
#                           (union-LCS); under it, --also-rouge-score's block: Google's rouge-score
#                           F1 (rouge1/2/L/Lsum, stemmed, rougeLsum on the same sentences), a
#                           different scorer, not comparable with ROUGE-1.5.5
#   SUBSET.rouge_whole.txt  each summary one sequence (-e '<nosplit>', a marker that never
#                           occurs): ROUGE-L over whole summaries, the scale of 003's R-L (~20 on
#                           Multi-News); fairseq-hier-rouge warns that no summary has a sentence
#                           break: that is the point
# ROUGE-1 and ROUGE-2 are the same in both.
# Everything goes into the run folder $WORK/checkpoints/$RUN (train.sh's), named by SUBSET so
# that the test and valid decodes sit side by side: generate-SUBSET.txt (fairseq-generate's
# output, kept: a rerun rescores it), SUBSET.hyp.raw, SUBSET.hyp, SUBSET.ref (the references
# used), the two reports above; run.json when the folder has none (CHECKPOINT from elsewhere).
#
# usage: WORK=DIR decode.sh SYSTEM [extra fairseq-generate args]
# env: WORK; MAX_PARAGRAPHS MAX_PARAGRAPH_TOKENS FLAT_POSITIONS SETTINGS_DATASET (the dataset's);
#      MIN_LEN MAX_LEN (yours);
#      RUN (SYSTEM) CHECKPOINT ($WORK/checkpoints/$RUN/checkpoint_best.pt) SUBSET (test; valid
#      for 003 Tables 4 and 6) BATCH (32)
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: WORK=DIR $0 SYSTEM [fairseq-generate args...]" >&2; exit 2; }
SYSTEM=$1; shift
: "${WORK:?set WORK to the output folder of the recipe}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
RUN=${RUN:-$SYSTEM}; SUBSET=${SUBSET:-test}
CKPT=${CHECKPOINT:-$WORK/checkpoints/$RUN/checkpoint_best.pt}
OUT="$WORK/checkpoints/$RUN"
REF="$WORK/parsed/$SUBSET.tgt.tok"

HIER=(--max-paragraphs "${MAX_PARAGRAPHS:-10}"
      --max-paragraph-tokens "${MAX_PARAGRAPH_TOKENS:-160}")
# flat: documents are not cut one by one, the concatenation is (Fabbri's -src_seq_length_trunc)
FLAT=(--max-paragraphs "${MAX_PARAGRAPHS:-10}" --max-paragraph-tokens "${FLAT_POSITIONS:-500}"
      --max-source-positions "${FLAT_POSITIONS:-500}")
case "$SYSTEM" in
  parsingsum_ft) TASK=(--dependency-parse spacy "${FLAT[@]}"); KIND=flat ;;
  transformer)   TASK=("${FLAT[@]}"); KIND=flat ;;
  parsingsum_ht) TASK=(--dependency-parse spacy "${HIER[@]}"); KIND=hier ;;
  liu_ht)        TASK=("${HIER[@]}"); KIND=hier ;;
  *) echo "decode.sh: unknown SYSTEM $SYSTEM (parsingsum_ft, transformer, parsingsum_ht," \
          "liu_ht)" >&2
     exit 2 ;;
esac
[[ -f "$CKPT" ]] || { echo "decode.sh: $CKPT not found (train $RUN first)" >&2; exit 1; }

mkdir -p "$OUT"
if [[ ! -f "$OUT/run.json" ]]; then  # trained elsewhere (CHECKPOINT): this run is SYSTEM's
  fairseq-hier-run-json "$OUT" --name "$RUN" --arch "$SYSTEM" \
    --task hierarchical_summarization --metric rouge > /dev/null
fi
# shellcheck source=generation.sh
source "$ROOT/examples/mds_common/generation.sh"
if [[ "$KIND" == hier ]]; then GENERATION=("${GENERATION_HIER[@]}"); fi
LOG="$OUT/generate-$SUBSET.txt"
if [[ ! -f "$LOG" ]]; then
  fairseq-generate "$WORK/data-bin" --user-dir "$ROOT/fairseq_hier" \
    --task hierarchical_summarization "${TASK[@]}" --path "$CKPT" --gen-subset "$SUBSET" \
    "${GENERATION[@]}" --post-process sentencepiece \
    --batch-size "${BATCH:-32}" --required-batch-size-multiple 1 "$@" > "$LOG.tmp"
  mv "$LOG.tmp" "$LOG"
fi
python -m fairseq_hier.cli.hypotheses "$LOG" --expected "$(wc -l < "$REF")" \
  -o "$OUT/$SUBSET.hyp.raw"
sed -e 's/<unk>/UNK/g' -e 's/[<>]/ /g' "$OUT/$SUBSET.hyp.raw" > "$OUT/$SUBSET.hyp.tmp"
mv "$OUT/$SUBSET.hyp.tmp" "$OUT/$SUBSET.hyp"
sed -e 's/[<>]/ /g' "$REF" > "$OUT/$SUBSET.ref.tmp"
mv "$OUT/$SUBSET.ref.tmp" "$OUT/$SUBSET.ref"
fairseq-hier-rouge "$OUT/$SUBSET.ref" "$OUT/$SUBSET.hyp" -zs --also-rouge-score \
  --saveto "$OUT/$SUBSET.rouge.txt"
fairseq-hier-rouge "$OUT/$SUBSET.ref" "$OUT/$SUBSET.hyp" -zs -e "<nosplit>" \
  --saveto "$OUT/$SUBSET.rouge_whole.txt" > /dev/null
echo "decode.sh: $OUT/$SUBSET.rouge.txt, $OUT/$SUBSET.rouge_whole.txt"
