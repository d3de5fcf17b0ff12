#!/usr/bin/env bash
# Step 3 (README.md): decode SUBSET with the rules the data-bin records for the checkpoint's
# architecture, on the data-bin of its title placement, and score it as hiersumm does.
# usage: decode.sh WORK_DIR CHECKPOINT [fairseq-generate args]; env SUBSET RUN BATCH DATA_BIN
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 WORK_DIR CHECKPOINT [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; CKPT=$2; shift 2
ARCH=$(fairseq-hier-record data --print-arch "$CKPT")
LAYOUT=
if [[ "$ARCH" == liu_ht ]]; then LAYOUT=-every; fi
DATA=${DATA_BIN:-$WORK/data-bin$LAYOUT}
if [[ ! -d "$DATA" ]]; then
  echo "decode.sh: error: $DATA not found (a $ARCH checkpoint reads it: run prepare.sh with" \
       "TITLE_PLACEMENT=${LAYOUT:+every}${LAYOUT:-first}, or set DATA_BIN)" >&2
  exit 1
fi
exec bash "$(dirname "$0")/../common/decode.sh" "${RUN:-$(dirname "$CKPT")}" "--protocol hiersumm" \
  --data "$DATA" --references "$WORK/raw$LAYOUT/${SUBSET:-test}.ref" --checkpoint "$CKPT" \
  --task-args="--max-paragraphs 30 --max-paragraph-tokens 100" --batch-size "${BATCH:-32}" \
  -- --post-process sentencepiece "$@"
