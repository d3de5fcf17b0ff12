#!/usr/bin/env bash
# Document translation, step 3: translate every test set chunk by chunk with both systems (004
# Sec. 4.2: beam 4, "we generate until we encounter an EOS token": the length cap is the
# models' 1024 positions), then put the documents back together and print document-level
# sacreBLEU with its signature, the two systems side by side (fairseq-hier-doc-bleu; the plain
# Transformer is the baseline of the paired bootstrap).
#
# usage: decode.sh WORK SRC TGT [extra fairseq-generate args]
# env: BEAM (4) MAX_LEN_A (0) MAX_LEN_B (1023) (generation.sh) BATCH_TOKENS (8192) MAX_CHUNK (512)
#      SYSTEMS ("plain hat": those with WORK/checkpoints/KIND/checkpoint_best.pt)
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 WORK SRC TGT [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; SRC=$2; TGT=$3; shift 3
source "$(dirname "$0")/generation.sh"  # GENERATION: the options prepare.sh records
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
for f in "$WORK"/data-bin/test*.chunks; do
  split=$(basename "$f" .chunks)
  name=$(cat "$WORK/raw/$split.name" 2>/dev/null || echo "$split")
  logs=()
  for kind in ${SYSTEMS:-plain hat}; do
    ckpt="$WORK/checkpoints/$kind/checkpoint_best.pt"
    [[ -f "$ckpt" ]] || { echo "decode.sh: $ckpt not found (train.sh $kind first)" >&2; exit 1; }
    out="$WORK/decode/$kind/generate-$split.txt"
    if [[ ! -f "$out" ]]; then
      mkdir -p "$(dirname "$out")"
      t0=$SECONDS
      fairseq-generate "$WORK/data-bin" --user-dir "$USER_DIR" --task document_translation \
        --source-lang "$SRC" --target-lang "$TGT" --max-chunk-tokens "${MAX_CHUNK:-512}" \
        --path "$ckpt" --gen-subset "$split" "${GENERATION[@]}" \
        --max-tokens "${BATCH_TOKENS:-8192}" "$@" > "$out.tmp"
      mv "$out.tmp" "$out"
      echo "decode.sh: $kind translated $name in $((SECONDS - t0)) s"
    fi
    logs+=("$kind=$out")
  done
  echo "== $name ($SRC-$TGT), document-level sacreBLEU"
  fairseq-hier-doc-bleu "${logs[@]}" --chunks "$f" --ref "$WORK/raw/$split.$TGT" \
    --tgt-lang "$TGT" --output-dir "$WORK/decode/$split" | tee "$WORK/decode/$split.bleu"
done
