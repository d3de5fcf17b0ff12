#!/usr/bin/env bash
# Prints K for --segment-embeddings: 1 + the largest speaker index in WORK/bpe/*.segments.
# usage: segments.sh WORK
set -euo pipefail
cat "$1"/bpe/{train,valid,test}.segments | tr ' ' '\n' | sort -n | tail -1 | awk '{print $1 + 1}'
