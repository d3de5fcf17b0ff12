#!/usr/bin/env bash
# ParsingSum on WCEP-100 (003 Table 3; README.md: the settings and which are ours).
# usage: DATA=DIR WORK=DIR run.sh prepare | train SYSTEM [args] | decode SYSTEM [args] | table | all
set -euo pipefail
export DATASET=wcep PAPER=wcep MAX_ARTICLES=${MAX_ARTICLES:-100} WITH_TITLES=${WITH_TITLES:-0}
export MAX_PARAGRAPHS=${MAX_PARAGRAPHS:-20} MAX_PARAGRAPH_TOKENS=${MAX_PARAGRAPH_TOKENS:-80}
export FLAT_POSITIONS=${FLAT_POSITIONS:-500} SETTINGS_DATASET=${SETTINGS_DATASET:-wcep}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../mds_common/run.sh" "$@"
