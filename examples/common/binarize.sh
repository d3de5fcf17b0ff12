#!/usr/bin/env bash
# usage: binarize.sh TEXT_DIR DATA_BIN [fairseq-preprocess args]: TEXT_DIR/{train,valid,test}.{src,tgt}
# -> DATA_BIN, one dictionary for both sides (written whole or not at all); env WORKERS (nproc)
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 TEXT_DIR DATA_BIN [fairseq-preprocess args...]" >&2; exit 2; }
TEXT=$1; BIN=$2; shift 2
[[ -f "$BIN/dict.src.txt" ]] && exit 0
rm -rf "$BIN.tmp"
fairseq-preprocess --source-lang src --target-lang tgt --trainpref "$TEXT/train" \
  --validpref "$TEXT/valid" --testpref "$TEXT/test" --destdir "$BIN.tmp" --joined-dictionary \
  --workers "${WORKERS:-$(nproc)}" "$@"
mv "$BIN.tmp" "$BIN"
