#!/usr/bin/env bash
# The ParsingSum recipes' steps (README.md), called by examples/multi_news/run.sh and
# examples/wcep/run.sh with the dataset's settings in the environment.
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
  bash "$HERE/prepare.sh" "$DATASET" ${MAX_ARTICLES:+--max-articles "$MAX_ARTICLES"} \
    $([[ "${WITH_TITLES:-0}" == 1 ]] && echo --with-titles)
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
