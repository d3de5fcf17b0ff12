#!/usr/bin/env bash
# Step 2 (README.md): PHT (or --arch vht ...) with 000/001's settings.
# usage: train_pht.sh DATA_BIN RUN_DIR [fairseq-train args]; env GPUS
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
DATA=$1; SAVE=$2; shift 2
ARCH=pht  # the last --arch of the extra arguments wins, as in fairseq-train
PREVIOUS=
for ARG in "$@"; do
  [[ "$PREVIOUS" == --arch ]] && ARCH=$ARG
  [[ "$ARG" == --arch=* ]] && ARCH=${ARG#--arch=}
  PREVIOUS=$ARG
done
source "$(dirname "$0")/paper_settings.sh"
paper_settings pht "$ARCH" "$SAVE"
fairseq-train "$DATA" --user-dir "$ROOT/fairseq_hier" --task hierarchical_summarization \
  --max-paragraphs 30 --max-paragraph-tokens 100 --arch pht \
  "${OPTIMISATION[@]}" "${BATCHING[@]}" --save-dir "$SAVE" \
  --save-interval-updates 20000 --validate-interval-updates 20000 --keep-interval-updates 5 \
  --skip-invalid-size-inputs-valid-test "$@" 2>&1 | tee -a "$SAVE/train.log"
