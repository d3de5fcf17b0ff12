#!/usr/bin/env bash
# WMT20 document-level En-De / En-Cs (004 Sec. 4.2): files, steps and outputs in README.md.
# usage: recipe.sh en-de|en-cs extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]
# env: TEST_SUITE=DIR (the next free testN), SKIP_BAD, the shared steps' (../doc_mt_common/README.md)
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 en-de|en-cs extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]" >&2; exit 2; }
PAIR=$1; STEP=$2; DATA=$3; WORK=$4; shift 4
SRC=en; TGT=${PAIR#en-}
case "$PAIR" in en-de|en-cs) ;; *) echo "recipe.sh: the pair must be en-de or en-cs, got '$PAIR'" >&2; exit 2;; esac
export SETTINGS_ARCH=${SETTINGS_ARCH:-hat_transformer_wmt_en_de} SETTINGS_DATASET=${SETTINGS_DATASET:-wmt20_${PAIR/-/_}}
export HAT_ARCH=${HAT_ARCH:-hat_transformer_wmt_en_de} PLAIN_ARCH=${PLAIN_ARCH:-transformer_wmt_en_de_big}

extract() {  # the published files: README.md
  fairseq-hier-doc extract --dataset "wmt20-$PAIR" --input-dir "$DATA" --output-dir "$WORK/raw" \
    ${TEST_SUITE:+--test-suite "$TEST_SUITE"} ${SKIP_BAD:+--skip-bad}
}

source "$(dirname "$0")/../doc_mt_common/steps.sh"
run_step "$STEP" "$@"
