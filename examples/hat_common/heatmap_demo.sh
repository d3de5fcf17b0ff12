#!/usr/bin/env bash
# A HAT whose sentence attention can be checked by eye and by number (004 Sec. 6), in ~4 min on
# 2 CPU cores: README.md, "A heatmap you can check".
# usage: heatmap_demo.sh WORK
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 WORK" >&2; exit 2; }
WORK=$1; HERE=$(cd "$(dirname "$0")" && pwd); USER_DIR=$(cd "$HERE/../../fairseq_hier" && pwd)
mkdir -p "$WORK/raw"
python "$HERE/heatmap_demo.py" corpus "$WORK/raw"
if [[ ! -f "$WORK/bin/dict.source.txt" ]]; then
  fairseq-preprocess --source-lang source --target-lang target --trainpref "$WORK/raw/train" \
    --validpref "$WORK/raw/valid" --testpref "$WORK/raw/test" --destdir "$WORK/bin" \
    --joined-dictionary --workers 2
  cp "$WORK"/raw/{train,valid,test}.sentences "$WORK/bin/"
fi
# the optimisation and decoding: the table's (hat_transformer_iwslt_zh_en, data set heatmap_demo)
SETTINGS=(hat_transformer_iwslt_zh_en --dataset heatmap_demo)
TEXT=$(fairseq-hier-settings "${SETTINGS[@]}" --stage paper-decode)
mapfile -t GENERATION <<< "$TEXT"
RUN="$WORK/runs/hat"  # the run folder: checkpoints, train.log
if [[ ! -f "$RUN/checkpoint_best.pt" ]]; then
  TEXT=$(fairseq-hier-settings "${SETTINGS[@]}" --stage paper-train)
  mapfile -t OPTIMISATION <<< "$TEXT"
  mkdir -p "$RUN"
  fairseq-train "$WORK/bin" --user-dir "$USER_DIR" --task hat_summarization --source-lang source \
    --target-lang target --arch hat_transformer_iwslt_zh_en --encoder-layers 2 --decoder-layers 2 \
    --encoder-embed-dim 64 --decoder-embed-dim 64 --encoder-ffn-embed-dim 128 \
    --decoder-ffn-embed-dim 128 --encoder-attention-heads 4 --decoder-attention-heads 4 \
    --share-all-embeddings "${OPTIMISATION[@]}" --batch-size 32 --seed 1 \
    --save-dir "$RUN" --no-epoch-checkpoints --log-format simple --log-interval 500 \
    --num-workers 0 2>&1 | tee -a "$RUN/train.log"
fi
for layer in 0 1; do
  fairseq-generate "$WORK/bin" --user-dir "$USER_DIR" --task hat_summarization \
    --source-lang source --target-lang target --path "$RUN/checkpoint_best.pt" \
    --gen-subset test "${GENERATION[@]}" --batch-size 20 --print-sentence-attention \
    --sentence-attention-layer "$layer" > "$WORK/attention-layer$layer.log"
  fairseq-hier-analyse heatmap "$WORK/attention-layer$layer.log" --id 0 -o "$WORK/heatmap-layer$layer.png"
done
python "$HERE/heatmap_demo.py" share "$WORK"
