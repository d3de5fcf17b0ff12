#!/usr/bin/env bash
# usage: doc_mt_decode.sh WORK SRC TGT [fairseq-generate args]: every test set decoded and scored
# in each system's run folder, then the systems side by side in WORK/decode/SPLIT.bleu
# (examples/doc_mt_common/README.md, step 3). env: SETTINGS_ARCH SETTINGS_DATASET BEAM MAX_LEN_A
# MAX_LEN_B BATCH_TOKENS (8192) MAX_CHUNK (512) SYSTEMS ("plain hat": the first is the baseline)
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 WORK SRC TGT [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; SRC=$2; TGT=$3; shift 3
source "$(dirname "$0")/paper_decoding.sh"
paper_decoding "${SETTINGS_ARCH:-hat_transformer_wmt_en_de}" "${SETTINGS_DATASET:-wmt20_en_de}"
for chunks in "$WORK"/data-bin/test*.chunks; do
  split=$(basename "$chunks" .chunks)
  name=$(cat "$WORK/raw/$split.name" 2> /dev/null || echo "$split")
  logs=()
  for kind in ${SYSTEMS:-plain hat}; do
    run="$WORK/runs/$kind"
    [[ -f "$run/checkpoint_best.pt" ]] || { echo "doc_mt_decode.sh: $run/checkpoint_best.pt not found (train $kind first)" >&2; exit 1; }
    t0=$SECONDS
    SUBSET=$split bash "$(dirname "$0")/decode.sh" "$run" "--tgt-lang $TGT" --data "$WORK/data-bin" \
      --references "$WORK/raw/$split.$TGT" --task document_translation \
      --task-args "--source-lang $SRC --target-lang $TGT --max-chunk-tokens ${MAX_CHUNK:-512}" \
      --generation "${GENERATION[*]}" --max-tokens "${BATCH_TOKENS:-8192}" -- "$@" > /dev/null
    echo "doc_mt_decode.sh: $kind translated and scored $name in $((SECONDS - t0)) s: $run/$split.{docs,ref,bleu.txt}"
    logs+=("$kind=$run/generate-$split.txt")
  done
  echo "== $name ($SRC-$TGT), document-level sacreBLEU"
  mkdir -p "$WORK/decode"
  fairseq-hier-doc-bleu "${logs[@]}" --chunks "$chunks" --reference "$WORK/raw/$split.$TGT" \
    --tgt-lang "$TGT" --output-dir "$WORK/decode/$split" | tee "$WORK/decode/$split.bleu.tmp"
  mv "$WORK/decode/$split.bleu.tmp" "$WORK/decode/$split.bleu"
done
