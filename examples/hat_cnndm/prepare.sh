#!/usr/bin/env bash
# CNN/DailyMail or XSum -> WORK/data-bin, from either published layout in DATA_DIR:
#   source_target  fairseq's BART recipe: {train,val,test}.source / .target, untokenised, one
#                  article / summary per line; pysbd splits the articles (a line with
#                  <t> ... </t> tags is split at its tags instead)
#   presumm        PreSumm's json shards NAME.{train,valid,test}.N.json (e.g. cnndm.train.0.json):
#                  lowercased PTB tokens, one list per sentence; those sentences are used as they are
# The layout is found from the files (LAYOUT=source_target|presumm chooses when DATA_DIR holds
# both). 004 Sec. 4.1: 1024 source / 256 target tokens.
# usage: prepare.sh DATA_DIR WORK BART_DIR
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # recorded in the data-bin for fairseq-hier-summarize
[[ $# -eq 3 ]] || { echo "usage: $0 DATA_DIR WORK BART_DIR" >&2; exit 2; }
D=$1
shopt -s nullglob
SHARDS=("$D"/*.train.[0-9]*.json)
shopt -u nullglob
LAYOUT=${LAYOUT:-}
if [[ -z "$LAYOUT" ]]; then
  if [[ ${#SHARDS[@]} -gt 0 && -f "$D/train.source" ]]; then
    echo "prepare.sh: $D holds both train.source (fairseq's layout) and PreSumm shards" \
         "(${SHARDS[0]##*/}, ...): set LAYOUT=source_target or LAYOUT=presumm" >&2; exit 1
  elif [[ ${#SHARDS[@]} -gt 0 ]]; then
    LAYOUT=presumm
  elif [[ -f "$D/train.source" ]]; then
    LAYOUT=source_target
  else
    echo "prepare.sh: $D holds neither train.source/.target (fairseq's BART layout) nor" \
         "NAME.train.N.json shards (PreSumm's)" >&2; exit 1
  fi
fi
case "$LAYOUT" in
  source_target)
    INPUTS=("$D/train" "$D/val" "$D/test") ;;
  presumm)
    # the corpus name before .train.N.json: PreSumm writes cnndm.{train,valid,test}.N.json
    NAMES=$(for f in "${SHARDS[@]}"; do b=${f##*/}; echo "${b%.train.*}"; done | sort -u)
    if [[ $(wc -w <<< "$NAMES") -ne 1 ]]; then
      # shellcheck disable=SC2086  # the names on one line
      echo "prepare.sh: LAYOUT=presumm needs the shards of one corpus in $D (NAME.train.N.json);" \
           "found:" ${NAMES:-none} >&2; exit 1
    fi
    INPUTS=("$D/$NAMES.train" "$D/$NAMES.valid" "$D/$NAMES.test") ;;
  *)
    echo "prepare.sh: LAYOUT=$LAYOUT (expected source_target or presumm)" >&2; exit 2 ;;
esac
echo "prepare.sh: $D read as LAYOUT=$LAYOUT: ${INPUTS[*]}"
MAX_SOURCE=${MAX_SOURCE:-1024} MAX_TARGET=${MAX_TARGET:-256} \
  bash "$(dirname "$0")/../hat_common/prepare.sh" "$LAYOUT" "$2" "$3" "${INPUTS[@]}"
