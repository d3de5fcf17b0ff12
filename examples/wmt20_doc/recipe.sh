#!/usr/bin/env bash
# WMT20 document-level En-De / En-Cs (paper 004 Sec. 4.2, Tables 2 and 7): HAT Transformer vs the
# plain Transformer, trained from scratch on the same chunks, scored with document-level
# sacreBLEU. Every step skips what is done; see README.md.
#
# usage: recipe.sh en-de|en-cs extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]
#   (extra fairseq args go to fairseq-train in the train step, fairseq-generate in decode)
#   DATA_DIR: the files as published (any that exist of):
#     training (documents separated by empty lines): news-commentary-v15.L-en.tsv,
#       europarl-v10.L-en.tsv, rapid_2019.L-en.tsv (TSV, columns L then en) or the plain pair
#       rapid_2019.L-en.{L,en}
#     dev: newstest2018-enL-src.en.sgm + newstest2018-enL-ref.L.sgm (WMT18, the paper's validation)
#     test: newstest2020-enL-{src.en,ref.L}.sgm (test), newstest2019-enL-{src.en,ref.L}.sgm
#       (test1), and any WMT21+ XML wmttest20NN.en-L.xml (test2, ...)
# env: the paper's settings below can be overridden; WORKERS, BPE_CODES (40000), MAX_CHUNK (512)
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 en-de|en-cs extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]" >&2; exit 2; }
PAIR=$1; STEP=$2; DATA=$3; WORK=$4; shift 4
SRC=en; TGT=${PAIR#en-}
case "$PAIR" in
  en-de)  # 004 Sec. 4.2: 1024 tokens x 16 accumulation x 8 V100, 50000 steps, warmup 1250 to 1e-4
    : "${UPDATES:=50000}" "${WARMUP:=1250}" "${LR:=1e-4}" "${DROPOUT:=0.1}" "${SMOOTHING:=0.1}" \
      "${WEIGHT_DECAY:=0.0}";;
  en-cs)  # 15000 steps, warmup 500 to 5e-4, label smoothing 0.2, dropout 0.2, weight decay 0.1
    : "${UPDATES:=15000}" "${WARMUP:=500}" "${LR:=5e-4}" "${DROPOUT:=0.2}" "${SMOOTHING:=0.2}" \
      "${WEIGHT_DECAY:=0.1}";;
  *) echo "recipe.sh: the pair must be en-de or en-cs, got '$PAIR'" >&2; exit 2;;
esac
export UPDATES WARMUP LR DROPOUT SMOOTHING WEIGHT_DECAY
export MAX_TOKENS=${MAX_TOKENS:-1024} PAPER_GPUS=8 PAPER_UPDATE_FREQ=16
export HAT_ARCH=${HAT_ARCH:-hat_transformer_wmt_en_de} PLAIN_ARCH=${PLAIN_ARCH:-transformer_wmt_en_de_big}

extract() {
  local L=$TGT raw="$WORK/raw" args=()
  mkdir -p "$raw"
  if [[ ! -f "$raw/train.docids" ]]; then
    for f in news-commentary-v15 europarl-v10 rapid_2019; do
      if [[ -f "$DATA/$f.$L-en.tsv" ]]; then args+=(--file "$DATA/$f.$L-en.tsv")
      elif [[ -f "$DATA/$f.$L-en.en" && -f "$DATA/$f.$L-en.$L" ]]; then
        args+=(--pair "$DATA/$f.$L-en.en" "$DATA/$f.$L-en.$L")
      fi
    done
    [[ ${#args[@]} -gt 0 ]] || { echo "recipe.sh: no training file in $DATA (README.md lists the names)" >&2; exit 1; }
    fairseq-hier-doc-extract --format doc-split --columns "$L,en" --src-lang en --tgt-lang "$L" \
      --output "$raw/train" "${args[@]}" ${SKIP_BAD:+--skip-bad}
  fi
  sgm() {  # sgm SPLIT YEAR [optional]
    local src="$DATA/newstest$2-en$L-src.en.sgm" ref="$DATA/newstest$2-en$L-ref.$L.sgm"
    [[ -f "$raw/$1.docids" ]] && return
    if [[ ! -f "$src" || ! -f "$ref" ]]; then
      [[ -n "${3:-}" ]] && { echo "recipe.sh: newstest$2 not in $DATA, not tested"; return; }
      echo "recipe.sh: $src / $ref not found" >&2; exit 1
    fi
    fairseq-hier-doc-extract --format wmt-sgml --src-lang en --tgt-lang "$L" --output "$raw/$1" \
      --pair "$src" "$ref"
    echo "newstest$2" > "$raw/$1.name"
  }
  sgm valid 2018
  sgm test 2020
  sgm test1 2019 optional
  local i xml name
  for xml in "$DATA"/wmttest20[2-9][0-9].en-"$L".xml; do
    [[ -f "$xml" ]] || continue
    name=$(basename "$xml" .xml)
    grep -qxF "$name" "$raw"/test*.name 2>/dev/null && continue  # extracted by an earlier run
    i=1; while [[ -f "$raw/test$i.docids" ]]; do i=$((i + 1)); done  # the next free test set
    fairseq-hier-doc-extract --format wmt-xml --src-lang en --tgt-lang "$L" \
      --output "$raw/test$i" --file "$xml"
    echo "$name" > "$raw/test$i.name"
  done
}

source "$(dirname "$0")/../doc_mt_common/steps.sh"
run_step "$STEP" "$@"
