#!/usr/bin/env bash
# ParsingSum on Multi-News (003 Table 2; README.md: the settings and which are ours).
# usage: DATA=DIR WORK=DIR run.sh prepare | train SYSTEM [args] | decode SYSTEM [args] | table | all
set -euo pipefail
export DATASET=${DATASET:-multi_news} PAPER=multi_news
export MAX_PARAGRAPHS=${MAX_PARAGRAPHS:-10} MAX_PARAGRAPH_TOKENS=${MAX_PARAGRAPH_TOKENS:-160}
export FLAT_POSITIONS=${FLAT_POSITIONS:-500} SETTINGS_DATASET=${SETTINGS_DATASET:-multi_news}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../mds_common/run.sh" "$@"
