#!/usr/bin/env bash
# The HAT steps (README.md), run by each data set's recipe.sh with its facts in the environment.
# usage: recipe.sh prepare DATA_DIR WORK BART_DIR       (FORMAT; FILES: the splits in DATA_DIR)
#        recipe.sh train WORK INIT hat|plain [fairseq-train args]
#        recipe.sh decode WORK BART_DIR hat|plain [fairseq-generate args]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "recipe.sh: $*" >&2; exit 2; }
STEP=${1:-}; shift || true
case "$STEP" in
  prepare) [[ $# -eq 3 ]] || fail "usage: prepare DATA_DIR WORK BART_DIR"
    read -ra FILES <<< "$FILES"
    exec bash "$ROOT/examples/common/bart_prepare.sh" "$FORMAT" "$2" "$3" "${FILES[@]/#/$1/}";;
  train|decode) [[ $# -ge 3 ]] || fail "usage: $STEP WORK INIT|BART_DIR hat|plain [args...]";;
  *) fail "the step must be prepare, train or decode, got '$STEP'";;
esac
WORK=$1; FROM=$2; KIND=$3; shift 3
case "$KIND" in hat) ARCH=${ARCH:-hat_bart_large};; plain) ARCH=${ARCH:-long_bart_large};;
  *) fail "the model kind must be hat or plain, got '$KIND'";; esac
RUN="$WORK/runs/$KIND"
if [[ "$STEP" == decode ]]; then
  BPE=$FROM; [[ -f "$FROM/config.json" ]] && BPE="$WORK/bart_files"
  source "$ROOT/examples/common/paper_decoding.sh"
  paper_decoding hat_bart_large "${SETTINGS_DATASET:-other}"
  SUBSET=${SUBSET:-test}
  MULTI=(); [[ -f "$WORK/bpe/$SUBSET.refs.jsonl" ]] && MULTI=(--multi-references "$WORK/bpe/$SUBSET.refs.jsonl")
  exec bash "$ROOT/examples/common/decode.sh" "$RUN" "--protocol ptb" --data "$WORK/data-bin" \
    --references "$WORK/bpe/$SUBSET.ref" "${MULTI[@]}" --task hat_summarization \
    --task-args "--source-lang source --target-lang target" --generation "${GENERATION[*]}" \
    --batch-size "${BATCH:-16}" -- --bpe gpt2 --gpt2-encoder-json "$BPE/encoder.json" \
    --gpt2-vocab-bpe "$BPE/vocab.bpe" --max-source-positions "${MAX_SOURCE:-1024}" "$@"
fi
INIT=$FROM; [[ -d "$INIT" && ! -f "$INIT/config.json" ]] && INIT="$INIT/model.pt"
[[ -f "$INIT" || -f "$INIT/config.json" || -f "$RUN/done" ]] \
  || { echo "recipe.sh: $INIT not found (a checkpoint file or a Hugging Face BART directory)" >&2; exit 1; }
if [[ "${SEGMENTS:-}" == auto ]]; then  # 1 + the largest speaker index of the data
  SEGMENTS=$(cat "$WORK"/bpe/{train,valid,test}.segments | tr ' ' '\n' | sort -n | tail -1 | awk '{print $1 + 1}')
fi
SEGMENT_FLAGS=()  # dialogue models only: fairseq's own bart_* archs have no such option
[[ "${SEGMENTS:-0}" != 0 ]] && SEGMENT_FLAGS=(--segment-embeddings "$SEGMENTS")
exec bash "$ROOT/examples/common/paper_train.sh" "$WORK/data-bin" "$RUN" hat_bart_large \
  "${SETTINGS_DATASET:-arxiv}" "$ARCH" hat_summarization rouge --source-lang source \
  --target-lang target --finetune-from-model "$INIT" "${SEGMENT_FLAGS[@]}" \
  --max-source-positions "${MAX_SOURCE:-1024}" "$@"
