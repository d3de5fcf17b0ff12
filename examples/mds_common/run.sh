#!/usr/bin/env bash
# ParsingSum recipes: one entry point per step, called by examples/multi_news/run.sh and
# examples/wcep/run.sh with the dataset's settings in the environment.
#   prepare              steps 1-5 (prepare.sh): reader, parse, sentencepiece, binarize, deps
#   train SYSTEM [args]  step 6 (train.sh): parsingsum_ft | transformer | parsingsum_ht | liu_ht
#   decode SYSTEM [args] step 7 (decode.sh): fairseq-generate + ROUGE-1.5.5
#   table                step 8 (table.py): the decoded systems next to the paper's numbers
#   all                  every step, the four systems one after the other
# env (set by the dataset's run.sh): DATASET PAPER MAX_ARTICLES WITH_TITLES MAX_PARAGRAPHS
#      MAX_PARAGRAPH_TOKENS FLAT_POSITIONS SETTINGS_DATASET; yours: DATA WORK (and the scripts' own)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SYSTEMS=(transformer parsingsum_ft liu_ht parsingsum_ht)
usage() {  # one line: what was wrong (if anything), then the usage
  echo "${1:+run.sh: $1; }usage: DATA=DIR WORK=DIR $0 prepare|train SYSTEM [args]|decode SYSTEM [args]|table|all" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
COMMAND=$1; shift

prepare() {
  local reader=()
  [[ -n "${MAX_ARTICLES:-}" ]] && reader+=(--max-articles "$MAX_ARTICLES")
  [[ "${WITH_TITLES:-0}" == 1 ]] && reader+=(--with-titles)
  bash "$HERE/prepare.sh" "$DATASET" "${reader[@]}"
}

case "$COMMAND" in
  prepare) prepare ;;
  train|decode) bash "$HERE/$COMMAND.sh" "$@" ;;
  table) python "$HERE/table.py" "${WORK:?set WORK}" --subset "${SUBSET:-test}" --paper "$PAPER" ;;
  all)
    prepare
    for system in "${SYSTEMS[@]}"; do bash "$HERE/train.sh" "$system"; done
    for system in "${SYSTEMS[@]}"; do bash "$HERE/decode.sh" "$system"; done
    python "$HERE/table.py" "$WORK" --paper "$PAPER" ;;
  *) usage "unknown step '$COMMAND'" ;;
esac
