#!/usr/bin/env bash
# IWSLT17 TED Zh-En document-level translation (paper 004 Sec. 4.2, Tables 2 and 7): HAT
# Transformer vs the plain Transformer (512, FFN 1024, 4 heads), trained from scratch on the same
# chunks, scored with document-level sacreBLEU. Every step skips what is done; see README.md.
#
# usage: recipe.sh extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]
#   DATA_DIR: the IWSLT17 zh-en files as published: train.tags.zh-en.{zh,en},
#     IWSLT17.TED.dev2010.zh-en.{zh,en}.xml and IWSLT17.TED.tst20NN.zh-en.{zh,en}.xml.
#     Validation (Table 7): dev2010 + tst2011..tst2015 (those present, at least one); test:
#     tst2017 (test, required) and tst2016 (test1, optional), each with its reference. A missing
#     required split stops the extract step with one line naming it and its files.
# env: the paper's settings below can be overridden; the others (WORKERS, BPE_CODES, MAX_CHUNK,
#   TOKENIZER, ...) have the defaults of examples/doc_mt_common/defaults.sh
# outputs: WORK/checkpoints/{plain,hat}: each system's run directory (run.json, checkpoints,
#   train.log, and per test set SPLIT = test, test1, ...: generate-SPLIT.txt,
#   SPLIT.{docs,ref,bleu.txt}); WORK/decode/SPLIT.bleu: both systems side by side
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 extract|prepare|train|decode|all DATA_DIR WORK [fairseq args]" >&2; exit 2; }
STEP=$1; DATA=$2; WORK=$3; shift 3
SRC=zh; TGT=en
# 004 Sec. 4.2: 8192 tokens x 2 accumulation on one V100, 8000 steps, warmup 100 to 1e-3, label
# smoothing 0.2, dropout 0.3, weight decay 0.1: the table's (fairseq_hier/recipes/architectures.py,
# hat_transformer_iwslt_zh_en's ted_zh_en)
export SETTINGS_ARCH=${SETTINGS_ARCH:-hat_transformer_iwslt_zh_en}
export SETTINGS_DATASET=${SETTINGS_DATASET:-ted_zh_en}
export HAT_ARCH=${HAT_ARCH:-hat_transformer_iwslt_zh_en} PLAIN_ARCH=${PLAIN_ARCH:-transformer_iwslt_zh_en}
X="$DATA/IWSLT17.TED"

extract() {
  local raw="$WORK/raw" args=() set f missing
  mkdir -p "$raw"
  if [[ ! -f "$raw/train.docids" ]]; then
    missing=()
    for f in "$DATA/train.tags.zh-en.zh" "$DATA/train.tags.zh-en.en"; do [[ -f "$f" ]] || missing+=("$f"); done
    [[ ${#missing[@]} -eq 0 ]] || { echo "recipe.sh: split train is required: ${missing[*]} not found" >&2; exit 1; }
    fairseq-hier-doc-extract --format ted-tags --src-lang zh --tgt-lang en --output "$raw/train" \
      --pair "$DATA/train.tags.zh-en.zh" "$DATA/train.tags.zh-en.en"
  fi
  if [[ ! -f "$raw/valid.docids" ]]; then
    for set in dev2010 tst2011 tst2012 tst2013 tst2014 tst2015; do
      if [[ -f "$X.$set.zh-en.zh.xml" && -f "$X.$set.zh-en.en.xml" ]]; then
        args+=(--pair "$X.$set.zh-en.zh.xml" "$X.$set.zh-en.en.xml")
      elif [[ -f "$X.$set.zh-en.zh.xml" || -f "$X.$set.zh-en.en.xml" ]]; then
        echo "recipe.sh: split valid: $set has one file of two (it needs $X.$set.zh-en.zh.xml and $X.$set.zh-en.en.xml)" >&2
        exit 1
      fi
    done
    [[ ${#args[@]} -gt 0 ]] || { echo "recipe.sh: split valid is required: none of $X.{dev2010,tst2011,...,tst2015}.zh-en.{zh,en}.xml found" >&2; exit 1; }
    fairseq-hier-doc-extract --format ted-xml --src-lang zh --tgt-lang en --output "$raw/valid" "${args[@]}"
  fi
  local split
  for set in tst2017 tst2016; do  # tst2017 (test) is required, tst2016 (test1) optional
    if [[ $set == tst2017 ]]; then split=test; else split=test1; fi
    [[ -f "$raw/$split.docids" ]] && continue
    missing=()
    for f in "$X.$set.zh-en.zh.xml" "$X.$set.zh-en.en.xml"; do [[ -f "$f" ]] || missing+=("$f"); done
    if [[ ${#missing[@]} -gt 0 ]]; then
      if [[ $split == test ]]; then
        echo "recipe.sh: split test ($set) is required: ${missing[*]} not found" >&2
        exit 1
      fi
      echo "recipe.sh: $set (with its reference) not in $DATA (${missing[*]} not found), not tested"
      continue
    fi
    fairseq-hier-doc-extract --format ted-xml --src-lang zh --tgt-lang en --output "$raw/$split" \
      --pair "$X.$set.zh-en.zh.xml" "$X.$set.zh-en.en.xml"
    echo "$set" > "$raw/$split.name"
  done
}

source "$(dirname "$0")/../doc_mt_common/steps.sh"
run_step "$STEP" "$@"
