#!/usr/bin/env bash
# ParsingSum on WCEP-100 (003 Table 3): see README.md. WCEP-100 = the first 100 articles of each
# cluster. Flat systems: sources cut to 500 pieces (Fabbri et al.'s scripts, as on Multi-News).
# Our choices, not the paper's: the hierarchical cut 20 articles x 80 pieces, decoding 20-80
# pieces (gold summaries average 32 words, ~40 pieces; 003 gives no WCEP lengths).
# usage: DATA=DIR WORK=DIR run.sh prepare | train SYSTEM [args] | decode SYSTEM [args] | table | all
#   MAX_ARTICLES=10 for WCEP-10; WITH_TITLES=1 puts each article's title before its text
set -euo pipefail
export DATASET=wcep PAPER=wcep MAX_ARTICLES=${MAX_ARTICLES:-100} WITH_TITLES=${WITH_TITLES:-0}
export MAX_PARAGRAPHS=${MAX_PARAGRAPHS:-20} MAX_PARAGRAPH_TOKENS=${MAX_PARAGRAPH_TOKENS:-80}
# the optimisation, batches and decoding (20-80 pieces): the table's (fairseq_hier/recipes/
# architectures.py, data set wcep); MIN_LEN / MAX_LEN replace its lengths
export FLAT_POSITIONS=${FLAT_POSITIONS:-500} SETTINGS_DATASET=${SETTINGS_DATASET:-wcep}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../mds_common/run.sh" "$@"
