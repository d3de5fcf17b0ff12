#!/usr/bin/env bash
# IWSLT17 TED Zh-En document-level translation (004 Sec. 4.2): files, steps and outputs in README.md.
# usage: recipe.sh extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]
# env: the shared steps' settings (../doc_mt_common/README.md)
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]" >&2; exit 2; }
STEP=$1; DATA=$2; WORK=$3; shift 3
SRC=zh; TGT=en
export SETTINGS_ARCH=${SETTINGS_ARCH:-hat_transformer_iwslt_zh_en} SETTINGS_DATASET=${SETTINGS_DATASET:-ted_zh_en}
export HAT_ARCH=${HAT_ARCH:-hat_transformer_iwslt_zh_en} PLAIN_ARCH=${PLAIN_ARCH:-transformer_iwslt_zh_en}

extract() {  # the published files: README.md
  fairseq-hier-doc extract --dataset iwslt17-ted-zh-en --input-dir "$DATA" --output-dir "$WORK/raw"
}

source "$(dirname "$0")/../doc_mt_common/steps.sh"
run_step "$STEP" "$@"
