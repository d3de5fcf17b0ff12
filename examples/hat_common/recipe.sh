#!/usr/bin/env bash
# HAT recipes: the train and decode steps of one model kind, as the dataset folders call them
# (each dataset's train.sh / decode.sh only sets the paper's settings in the environment).
#
# usage: recipe.sh train  WORK INIT hat|plain [fairseq-train args]
#          INIT: BART_DIR (fairseq's: its model.pt; Hugging Face's: the directory itself) or a
#          checkpoint (SAMSum/AMI start from CNN/DM's)
#        recipe.sh decode WORK BART_DIR hat|plain [fairseq-generate args]
#          (a Hugging Face BART_DIR: decoded with the files prepare.sh derived, WORK/bart_files)
# One run folder per model kind, WORK/checkpoints/KIND: train.sh's run.json, checkpoints and
# train.log, then decode.sh's generate-test.txt, test.hyp, test.ref and test.rouge.txt.
# env: ARCH (hat_bart_large for hat, long_bart_large for plain) MAX_SOURCE (source length of the
#      model and of the task's checks, train and decode alike: fairseq-generate's default is 1024)
#      SEGMENTS (auto: 1 + the largest speaker index of WORK/bpe/*.segments; unset: none) and the
#      variables of train.sh / decode.sh beside this file
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 train|decode WORK INIT|BART_DIR hat|plain [args...]" >&2; exit 2; }
STEP=$1; WORK=$2; FROM=$3; KIND=$4; shift 4
HERE=$(dirname "$0")
case "$KIND" in hat) ARCH=${ARCH:-hat_bart_large};; plain) ARCH=${ARCH:-long_bart_large};;
  *) echo "recipe.sh: the model kind must be hat or plain, got '$KIND'" >&2; exit 2;; esac
case "$STEP" in
  train)
    INIT=$FROM; [[ -d "$INIT" && ! -f "$INIT/config.json" ]] && INIT="$INIT/model.pt"
    if [[ "${SEGMENTS:-}" == auto ]]; then
      SEGMENTS=$(cat "$WORK"/bpe/{train,valid,test}.segments | tr ' ' '\n' | sort -n | tail -1 \
        | awk '{print $1 + 1}')
    fi
    SEGMENTS=${SEGMENTS:-0} exec bash "$HERE/train.sh" "$WORK" "$ARCH" "$INIT" \
      "$WORK/checkpoints/$KIND" --max-source-positions "${MAX_SOURCE:-1024}" "$@";;
  decode)
    BPE=$FROM; [[ -f "$FROM/config.json" ]] && BPE="$WORK/bart_files"
    exec bash "$HERE/decode.sh" "$WORK" "$BPE" "$WORK/checkpoints/$KIND/checkpoint_best.pt" \
      "$WORK/checkpoints/$KIND" --max-source-positions "${MAX_SOURCE:-1024}" "$@";;
  *) echo "recipe.sh: the step must be train or decode, got '$STEP'" >&2; exit 2;;
esac
