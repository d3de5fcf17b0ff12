#!/usr/bin/env bash
# ParsingSum on Multi-News (003 Table 2): see README.md. Flat systems (003's FT, Fabbri et al.'s
# OpenNMT scripts): sources cut to 500 pieces, decoding 200-300 pieces (their 500 / 200-300
# tokens). Our choice, not the paper's: the hierarchical cut 10 documents x 160 pieces.
# usage: DATA=DIR WORK=DIR run.sh prepare | train SYSTEM [args] | decode SYSTEM [args] | table | all
#   DATASET=multi_news_preprocessed reads the preprocessed (Hi-MAP) release instead of the raw one
set -euo pipefail
export DATASET=${DATASET:-multi_news} PAPER=multi_news
export MAX_PARAGRAPHS=${MAX_PARAGRAPHS:-10} MAX_PARAGRAPH_TOKENS=${MAX_PARAGRAPH_TOKENS:-160}
# the optimisation, batches and decoding (200-300 pieces): the table's (fairseq_hier/recipes/
# architectures.py, data set multi_news); MIN_LEN / MAX_LEN replace its lengths
export FLAT_POSITIONS=${FLAT_POSITIONS:-500} SETTINGS_DATASET=${SETTINGS_DATASET:-multi_news}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../mds_common/run.sh" "$@"
