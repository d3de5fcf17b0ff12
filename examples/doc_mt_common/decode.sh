#!/usr/bin/env bash
# Document translation, step 3: translate every test set chunk by chunk with both systems (004
# Sec. 4.2: beam 4, "we generate until we encounter an EOS token": the length cap is the
# models' 1024 positions), then put the documents back together and print document-level
# sacreBLEU with its signature, the two systems side by side (fairseq-hier-doc-bleu; the plain
# Transformer is the baseline of the paired bootstrap).
#
# Each system's run directory WORK/checkpoints/KIND receives, per test set SPLIT (test, test1,
# ...): generate-SPLIT.txt (fairseq-generate's output), SPLIT.docs (the detokenised document
# translations), SPLIT.ref (the reference documents, one a line, as scored) and SPLIT.bleu.txt
# (that system's fairseq-hier-doc-bleu output). The side-by-side table is WORK/decode/SPLIT.bleu,
# with each system's documents and chunk alignment in WORK/decode/SPLIT/.
#
# usage: decode.sh WORK SRC TGT [extra fairseq-generate args]
# env (defaults.sh): BEAM MAX_LEN_A MAX_LEN_B (generation.sh: the table's 4, 0, 1023 unless set)
#      BATCH_TOKENS (8192)
#      MAX_CHUNK (512) SYSTEMS ("plain hat": those with WORK/checkpoints/KIND/checkpoint_best.pt)
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 WORK SRC TGT [fairseq-generate args...]" >&2; exit 2; }
WORK=$1; SRC=$2; TGT=$3; shift 3
source "$(dirname "$0")/defaults.sh"
source "$(dirname "$0")/generation.sh"  # GENERATION: the options prepare.sh records
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
for f in "$WORK"/data-bin/test*.chunks; do
  split=$(basename "$f" .chunks)
  name=$(cat "$WORK/raw/$split.name" 2>/dev/null || echo "$split")
  logs=()
  for kind in $SYSTEMS; do
    run="$WORK/checkpoints/$kind"
    ckpt="$run/checkpoint_best.pt"
    [[ -f "$ckpt" ]] || { echo "decode.sh: $ckpt not found (train.sh $kind first)" >&2; exit 1; }
    out="$run/generate-$split.txt"
    if [[ ! -f "$out" ]]; then
      t0=$SECONDS
      fairseq-generate "$WORK/data-bin" --user-dir "$USER_DIR" --task document_translation \
        --source-lang "$SRC" --target-lang "$TGT" --max-chunk-tokens "$MAX_CHUNK" \
        --path "$ckpt" --gen-subset "$split" "${GENERATION[@]}" \
        --max-tokens "$BATCH_TOKENS" "$@" > "$out.tmp"
      mv "$out.tmp" "$out"
      echo "decode.sh: $kind translated $name in $((SECONDS - t0)) s"
    fi
    if [[ ! -f "$run/$split.bleu.txt" || "$out" -nt "$run/$split.bleu.txt" ]]; then
      # the system's own scores, in its run directory
      fairseq-hier-doc-bleu "$kind=$out" --chunks "$f" --ref "$WORK/raw/$split.$TGT" \
        --tgt-lang "$TGT" --run-dir "$run" --subset "$split" > /dev/null
    fi
    echo "decode.sh: $kind: $run/$split.{docs,ref,bleu.txt}"
    logs+=("$kind=$out")
  done
  echo "== $name ($SRC-$TGT), document-level sacreBLEU"
  mkdir -p "$WORK/decode"
  fairseq-hier-doc-bleu "${logs[@]}" --chunks "$f" --ref "$WORK/raw/$split.$TGT" \
    --tgt-lang "$TGT" --output-dir "$WORK/decode/$split" | tee "$WORK/decode/$split.bleu.tmp"
  mv "$WORK/decode/$split.bleu.tmp" "$WORK/decode/$split.bleu"
done
