#!/usr/bin/env bash
# CNN/DailyMail or XSum (004 Sec. 4.1): README.md; the steps: ../hat_common/recipe.sh. The
# prepare step reads DATA_DIR as fairseq's BART layout (source_target) or PreSumm's shards
# (presumm), found from its files by layout.py (LAYOUT chooses when both are there).
set -euo pipefail
export SETTINGS_DATASET=${SETTINGS_DATASET:-cnndm} MAX_SOURCE=${MAX_SOURCE:-1024} MAX_TARGET=${MAX_TARGET:-256}
if [[ "${1:-}" == prepare && $# -eq 4 ]]; then
  FOUND=$(python "$(dirname "$0")/layout.py" "$2")
  eval "$FOUND"
fi
FORMAT=${LAYOUT:-} FILES=${FILES:-} exec bash "$(dirname "$0")/../hat_common/recipe.sh" "$@"
