#!/usr/bin/env bash
# arXiv / PubMed (004 Sec. 4.1): README.md; the steps: ../hat_common/recipe.sh
export SETTINGS_DATASET=${SETTINGS_DATASET:-arxiv} MAX_SOURCE=${MAX_SOURCE:-3072} MAX_TARGET=${MAX_TARGET:-512}
FORMAT=cohan FILES="train.txt val.txt test.txt" exec bash "$(dirname "$0")/../hat_common/recipe.sh" "$@"
