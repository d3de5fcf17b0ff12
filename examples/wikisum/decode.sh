#!/usr/bin/env bash
# Step 3: decode the test set with the rules of the checkpoint's architecture, then score it with
# official ROUGE-1.5.5 (score.sh).
# The rules come from the data-bin's preprocessing record (fairseq-hier-record --print-generation,
# written by prepare.sh from generation.sh): PHT/VHT (000, 001): beam 5, average length
# normalisation, at most 200 tokens, trigram blocking, no repeat of the two previous tokens except
# the comma ('▁,'); liu_ht and FT (002, hiersumm's evaluation): beam 5, Wu et al.'s length
# penalty (alpha 0.4), at most 400 tokens, at least 20, the search ends when its top beam ends,
# no blocking, 24 paragraphs x 500 tokens. Extra args come after them (the last one given wins).
# The data-bin: the one the architecture reads (liu_ht: WORK_DIR/data-bin-every, the title in
# every paragraph; the others: WORK_DIR/data-bin); DATA_BIN overrides it.
# Attention alignment: pass its options as extra args (examples/attention_alignment/README.md).
# usage: decode.sh WORK_DIR CHECKPOINT [extra fairseq-generate args]
# Writes into the run folder RUN (default: the checkpoint's folder, the training run's):
# generate-SUBSET.txt (fairseq-generate's output), then score.sh's SUBSET.hyp.raw, SUBSET.hyp,
# SUBSET.ref (the references used) and SUBSET.rouge.txt; and run.json when RUN has none (a
# second decoding of a trained run, e.g. RUN=work/wikisum/checkpoints/liu_ht_3000: its arch
# from the checkpoint folder's run.json).
# env: SUBSET (test; valid decodes the validation split, whose files sit beside), RUN, BATCH (32),
#      DATA_BIN
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 WORK_DIR CHECKPOINT [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; CKPT=$2; shift 2
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
SUBSET=${SUBSET:-test}
RUN=${RUN:-$(dirname "$CKPT")}
ARCH=$(fairseq-hier-record --print-arch "$CKPT")
LAYOUT=
if [[ "$ARCH" == liu_ht ]]; then LAYOUT=-every; fi
DATA=${DATA_BIN:-$WORK/data-bin$LAYOUT}
if [[ ! -d "$DATA" ]]; then
  echo "decode.sh: error: $DATA not found (a $ARCH checkpoint reads it: run prepare.sh with" \
       "TITLE_PLACEMENT=${LAYOUT:+every}${LAYOUT:-first}, or set DATA_BIN)" >&2
  exit 1
fi
REFS="$WORK/raw$LAYOUT/$SUBSET.ref"
GENERATION_TEXT=$(fairseq-hier-record "$DATA" --print-generation "$ARCH")
GENERATION=()
if [[ -n "$GENERATION_TEXT" ]]; then mapfile -t GENERATION <<< "$GENERATION_TEXT"; fi
mkdir -p "$RUN"
fairseq-hier-run-json "$RUN" --inherit "$(dirname "$CKPT")" --task hierarchical_summarization \
  --metric rouge > /dev/null
echo "decode.sh: $ARCH checkpoint on $DATA with ${GENERATION[*]} $*"
fairseq-generate "$DATA" --user-dir "$USER_DIR" --task hierarchical_summarization \
  --max-paragraphs 30 --max-paragraph-tokens 100 --path "$CKPT" --gen-subset "$SUBSET" \
  "${GENERATION[@]}" \
  --post-process sentencepiece --batch-size "${BATCH:-32}" --required-batch-size-multiple 1 \
  "$@" > "$RUN/generate-$SUBSET.txt.tmp"
mv "$RUN/generate-$SUBSET.txt.tmp" "$RUN/generate-$SUBSET.txt"
SUBSET=$SUBSET bash "$(dirname "$0")/score.sh" "$REFS" "$RUN/generate-$SUBSET.txt" "$RUN"
