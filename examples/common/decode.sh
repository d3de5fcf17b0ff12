#!/usr/bin/env bash
# usage: decode.sh RUN_DIR SCORE_OPTIONS [fairseq-hier-decode args]: decode SUBSET (test) into the
# run folder, then score it (SCORE_OPTIONS, e.g. "--protocol hiersumm"; docs/run-folder.md)
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 RUN_DIR SCORE_OPTIONS [fairseq-hier-decode args...]" >&2; exit 2; }
RUN=$1; read -ra SCORE <<< "$2"; shift 2
fairseq-hier-decode "$RUN" --subset "${SUBSET:-test}" "$@"
fairseq-hier-score "$RUN" --subset "${SUBSET:-test}" "${SCORE[@]}"
