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
#     test: newstest2020-enL-{src.en,ref.L}.sgm (test, required), newstest2019-enL-{src.en,ref.L}.sgm
#       (test1, optional), and any WMT21+ XML wmttest20NN.en-L.xml (the next free testN)
#   a missing required split stops the extract step with one line naming it and its files
# env: TEST_SUITE=DIR: a WMT20 test suite, one folder per document with src.txt (en) and ref.txt
#   (L), extracted as the next free testN (docids: the document folders' names)
#   the paper's settings below can be overridden; the others (WORKERS, BPE_CODES, MAX_CHUNK,
#   TOKENIZER, ...) have the defaults of examples/doc_mt_common/defaults.sh
# outputs: WORK/checkpoints/{plain,hat}: each system's run directory (run.json, checkpoints,
#   train.log, and per test set SPLIT = test, test1, ...: generate-SPLIT.txt,
#   SPLIT.{docs,ref,bleu.txt}); WORK/decode/SPLIT.bleu: both systems side by side
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 en-de|en-cs extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]" >&2; exit 2; }
PAIR=$1; STEP=$2; DATA=$3; WORK=$4; shift 4
SRC=en; TGT=${PAIR#en-}
# the paper's settings per pair: the table's (fairseq_hier/recipes/architectures.py,
# hat_transformer_wmt_en_de's data sets wmt20_en_de / wmt20_en_cs)
case "$PAIR" in
  en-de)  # 004 Sec. 4.2: 1024 tokens x 16 accumulation x 8 V100, 50000 steps, warmup 1250 to 1e-4
    : "${SETTINGS_DATASET:=wmt20_en_de}";;
  en-cs)  # 15000 steps, warmup 500 to 5e-4, label smoothing 0.2, dropout 0.2, weight decay 0.1
    : "${SETTINGS_DATASET:=wmt20_en_cs}";;
  *) echo "recipe.sh: the pair must be en-de or en-cs, got '$PAIR'" >&2; exit 2;;
esac
export SETTINGS_ARCH=${SETTINGS_ARCH:-hat_transformer_wmt_en_de} SETTINGS_DATASET
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
  next_test() {  # the first free test set after test: test1, test2, ...
    local i=1
    while [[ -f "$raw/test$i.docids" ]]; do i=$((i + 1)); done
    echo "test$i"
  }
  sgm() {  # sgm YEAR [SPLIT]: newstestYEAR -> raw/SPLIT (required), else the next free testN
    local split=${2:-} src="$DATA/newstest$1-en$L-src.en.sgm" ref="$DATA/newstest$1-en$L-ref.$L.sgm"
    local f missing=()
    if [[ -z "$split" ]]; then
      grep -qxF "newstest$1" "$raw"/test*.name 2>/dev/null && return  # extracted by an earlier run
    elif [[ -f "$raw/$split.docids" ]]; then
      return
    fi
    for f in "$src" "$ref"; do [[ -f "$f" ]] || missing+=("$f"); done
    if [[ ${#missing[@]} -gt 0 ]]; then
      if [[ -z "$split" ]]; then
        echo "recipe.sh: optional test set newstest$1 not in $DATA (${missing[*]} not found), not tested"
        return
      fi
      echo "recipe.sh: split $split (newstest$1) is required: ${missing[*]} not found (it needs $src and $ref)" >&2
      exit 1
    fi
    [[ -n "$split" ]] || split=$(next_test)
    fairseq-hier-doc-extract --format wmt-sgml --src-lang en --tgt-lang "$L" --output "$raw/$split" \
      --pair "$src" "$ref"
    echo "newstest$1" > "$raw/$split.name"
  }
  sgm 2018 valid
  sgm 2020 test
  sgm 2019  # test1 unless absent
  local xml name split
  for xml in "$DATA"/wmttest20[2-9][0-9].en-"$L".xml; do
    [[ -f "$xml" ]] || continue
    name=$(basename "$xml" .xml)
    grep -qxF "$name" "$raw"/test*.name 2>/dev/null && continue  # extracted by an earlier run
    split=$(next_test)
    fairseq-hier-doc-extract --format wmt-xml --src-lang en --tgt-lang "$L" \
      --output "$raw/$split" --file "$xml"
    echo "$name" > "$raw/$split.name"
  done
  if [[ -n "${TEST_SUITE:-}" ]]; then  # a WMT20 test suite: one folder per document
    [[ -d "$TEST_SUITE" ]] || { echo "recipe.sh: TEST_SUITE $TEST_SUITE is not a folder" >&2; exit 1; }
    name=$(basename "$(cd "$TEST_SUITE" && pwd)")
    if ! grep -qxF "$name" "$raw"/test*.name 2>/dev/null; then
      split=$(next_test)
      fairseq-hier-doc-extract --format doc-split --src-lang en --tgt-lang "$L" \
        --output "$raw/$split" --folder "$TEST_SUITE"
      echo "$name" > "$raw/$split.name"
    fi
  fi
}

source "$(dirname "$0")/../doc_mt_common/steps.sh"
run_step "$STEP" "$@"
