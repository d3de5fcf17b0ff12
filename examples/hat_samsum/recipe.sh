#!/usr/bin/env bash
# SAMSum (004 Sec. 4.1, Table 5): README.md; the steps: ../hat_common/recipe.sh
export SETTINGS_DATASET=${SETTINGS_DATASET:-samsum} MAX_SOURCE=${MAX_SOURCE:-1024} MAX_TARGET=${MAX_TARGET:-256}
export SPEAKERS=1 SEGMENTS=${SEGMENTS:-auto}
FORMAT=samsum FILES="train.json val.json test.json" exec bash "$(dirname "$0")/../hat_common/recipe.sh" "$@"
