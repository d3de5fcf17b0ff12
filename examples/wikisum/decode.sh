#!/usr/bin/env bash
# Step 3: decode the test set with the papers' rules, then score it with official ROUGE-1.5.5
# (score.sh).
# Beam 5, average length normalisation (score / |y|: fairseq's default with --lenpen 1), at most
# 200 tokens, trigram blocking, no repeat of the two previous tokens except the comma ('▁,').
# Attention alignment: pass its options as extra args (examples/attention_alignment/README.md).
# usage: decode.sh WORK_DIR CHECKPOINT [extra fairseq-generate args]
# Writes into the run folder RUN (default: the checkpoint's folder, the training run's):
# generate-SUBSET.txt (fairseq-generate's output), then score.sh's SUBSET.hyp.raw, SUBSET.hyp,
# SUBSET.ref (the references used) and SUBSET.rouge.txt; and run.json when RUN has none (a
# second decoding of a trained run, e.g. RUN=work/wikisum/checkpoints/liu_ht_3000: its arch
# from the checkpoint folder's run.json).
# env: SUBSET (test; valid decodes the validation split, whose files sit beside), RUN, BATCH (32)
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 WORK_DIR CHECKPOINT [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; CKPT=$2; shift 2
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
SUBSET=${SUBSET:-test}
RUN=${RUN:-$(dirname "$CKPT")}
mkdir -p "$RUN"
fairseq-hier-run-json "$RUN" --inherit "$(dirname "$CKPT")" --task hierarchical_summarization \
  --metric rouge > /dev/null
# shellcheck source=generation.sh
source "$(dirname "$0")/generation.sh"
fairseq-generate "$WORK/data-bin" --user-dir "$USER_DIR" --task hierarchical_summarization \
  --max-paragraphs 30 --max-paragraph-tokens 100 --path "$CKPT" --gen-subset "$SUBSET" \
  "${GENERATION[@]}" \
  --post-process sentencepiece --batch-size "${BATCH:-32}" --required-batch-size-multiple 1 \
  "$@" > "$RUN/generate-$SUBSET.txt.tmp"
mv "$RUN/generate-$SUBSET.txt.tmp" "$RUN/generate-$SUBSET.txt"
SUBSET=$SUBSET bash "$(dirname "$0")/score.sh" "$WORK/raw/$SUBSET.ref" "$RUN/generate-$SUBSET.txt" "$RUN"
