#!/usr/bin/env bash
# usage: doc_mt_train.sh WORK SRC TGT hat|plain [fairseq-train args]: the HAT or the plain Transformer
# from scratch into WORK/runs/KIND (examples/doc_mt_common/README.md, step 2). env: HAT_ARCH
# PLAIN_ARCH SETTINGS_ARCH SETTINGS_DATASET MAX_CHUNK (512) and paper_train.sh's
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 WORK SRC TGT hat|plain [fairseq-train args...]" >&2; exit 2; }
WORK=$1; SRC=$2; TGT=$3; KIND=$4; shift 4
case "$KIND" in hat) ARCH=${HAT_ARCH:-hat_transformer_wmt_en_de};;
  plain) ARCH=${PLAIN_ARCH:-transformer_wmt_en_de_big};;
  *) echo "doc_mt_train.sh: the model kind must be hat or plain, got '$KIND'" >&2; exit 2;; esac
exec bash "$(dirname "$0")/paper_train.sh" "$WORK/data-bin" "$WORK/runs/$KIND" \
  "${SETTINGS_ARCH:-hat_transformer_wmt_en_de}" "${SETTINGS_DATASET:-wmt20_en_de}" "$ARCH" \
  document_translation bleu --source-lang "$SRC" --target-lang "$TGT" \
  --max-chunk-tokens "${MAX_CHUNK:-512}" --share-all-embeddings "$@"
