#!/usr/bin/env bash
# AMI meetings as in QMSum (004 Sec. 4.1, Table 6): README.md; the steps: ../hat_common/recipe.sh
export SETTINGS_DATASET=${SETTINGS_DATASET:-ami} MAX_SOURCE=${MAX_SOURCE:-3072} MAX_TARGET=${MAX_TARGET:-512}
export SPEAKERS=1 SPEAKER_IDS=${SPEAKER_IDS:-roles} SEGMENTS=${SEGMENTS:-4}
export FILLERS=${FILLERS:-$(cd "$(dirname "$0")" && pwd)/fillers.txt}
FORMAT=qmsum FILES="train.jsonl val.jsonl test.jsonl" exec bash "$(dirname "$0")/../hat_common/recipe.sh" "$@"
