#!/usr/bin/env bash
# Step 3: decode the test set with the papers' rules, then score it with official ROUGE-1.5.5
# (score.sh).
# Beam 5, average length normalisation (score / |y|: fairseq's default with --lenpen 1), at most
# 200 tokens, trigram blocking, no repeat of the two previous tokens except the comma ('▁,').
# Attention alignment: pass its options as extra args (examples/attention_alignment/README.md).
# usage: decode.sh WORK_DIR CHECKPOINT [extra fairseq-generate args]
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 WORK_DIR CHECKPOINT [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; CKPT=$2; shift 2
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
OUT=${OUT:-$WORK/decode}  # one folder per system: OUT=work/wikisum/decode_liu_ht ...
mkdir -p "$OUT"
# shellcheck source=generation.sh
source "$(dirname "$0")/generation.sh"
fairseq-generate "$WORK/data-bin" --user-dir "$USER_DIR" --task hierarchical_summarization \
  --max-paragraphs 30 --max-paragraph-tokens 100 --path "$CKPT" --gen-subset test \
  "${GENERATION[@]}" \
  --post-process sentencepiece --batch-size "${BATCH:-32}" --required-batch-size-multiple 1 \
  "$@" > "$OUT/generate.log"
bash "$(dirname "$0")/score.sh" "$WORK/raw/test.ref" "$OUT/generate.log" "$OUT"
