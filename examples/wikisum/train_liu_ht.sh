#!/usr/bin/env bash
# Liu & Lapata's HT with 002's settings (README.md, step 4), on the data-bin of TITLE_PLACEMENT=every.
# usage: train_liu_ht.sh DATA_BIN RUN_DIR [fairseq-train args, e.g. --paragraph-graph tfidf]
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
exec bash "$(dirname "$0")/train_002.sh" liu_ht "$@"
