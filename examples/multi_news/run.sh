#!/usr/bin/env bash
# ParsingSum on Multi-News (003 Table 2): see README.md. Our choices, not the paper's: the
# hierarchical cut 10 documents x 160 pieces (flat systems: the same paragraphs cut to 1,600
# pieces), decoding 200-400 pieces (gold summaries average 264 words, ~300-340 pieces).
# usage: DATA=DIR WORK=DIR run.sh prepare | train SYSTEM [args] | decode SYSTEM [args] | table | all
#   DATASET=multi_news_preprocessed reads the preprocessed (Hi-MAP) release instead of the raw one
set -euo pipefail
export DATASET=${DATASET:-multi_news} PAPER=multi_news
export MAX_PARAGRAPHS=${MAX_PARAGRAPHS:-10} MAX_PARAGRAPH_TOKENS=${MAX_PARAGRAPH_TOKENS:-160}
export FLAT_POSITIONS=${FLAT_POSITIONS:-1600} MIN_LEN=${MIN_LEN:-200} MAX_LEN=${MAX_LEN:-400}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../mds_common/run.sh" "$@"
