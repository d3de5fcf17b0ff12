#!/usr/bin/env bash
# The fairseq-hier demo: generated multi-document corpus -> fairseq-preprocess -> fairseq-train
# (transformer, pht, vht with the same layers and widths) -> fairseq-generate -> ROUGE-1.5.5
# table with the Lead baseline. About 10 minutes on 2 CPU cores. Steps whose outputs exist are
# skipped; delete $WORK (default demo_work/) to start over.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
VENV=${VIRTUAL_ENV:-$ROOT/.venv}
export PATH="$VENV/bin:$PATH"
WORK=${WORK:-$ROOT/demo_work}
SEED=${SEED:-1}
TRAIN=${TRAIN:-3000}
UPDATES=${UPDATES:-450}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
mkdir -p "$WORK"

if [[ ! -f "$WORK/raw/test.tgt" ]]; then
  python -m fairseq_hier.cli.make_demo_corpus --out-dir "$WORK/raw" --seed "$SEED" \
    --train "$TRAIN" --valid 200 --test 200 --max-paragraphs 10 --max-paragraph-tokens 30
fi
if [[ ! -f "$WORK/data-bin/dict.src.txt" ]]; then
  fairseq-preprocess --source-lang src --target-lang tgt --trainpref "$WORK/raw/train" \
    --validpref "$WORK/raw/valid" --testpref "$WORK/raw/test" --destdir "$WORK/data-bin" \
    --joined-dictionary --workers 2
fi

# same data-bin, same widths and layers for every model; small enough for CPU minutes
MODEL=(--encoder-layers 2 --decoder-layers 2 --encoder-embed-dim 128 --decoder-embed-dim 128
       --encoder-ffn-embed-dim 256 --decoder-ffn-embed-dim 256 --encoder-attention-heads 4
       --decoder-attention-heads 4 --dropout 0.1)
TASK=(--user-dir "$ROOT/fairseq_hier" --task hierarchical_summarization --max-paragraphs 30
      --max-paragraph-tokens 100 --max-source-positions 1024)
N_TEST=$(wc -l < "$WORK/raw/test.tgt")
for ARCH in transformer pht vht; do
  CK="$WORK/checkpoints/$ARCH"
  if [[ ! -f "$CK/checkpoint_last.pt" ]] || ! grep -q "done training" "$CK/train.log" 2>/dev/null; then
    mkdir -p "$CK"
    EXTRA=()
    [[ "$ARCH" == transformer ]] && EXTRA=(--share-all-embeddings)
    echo "== training $ARCH ($UPDATES updates)"
    fairseq-train "$WORK/data-bin" "${TASK[@]}" --arch "$ARCH" "${MODEL[@]}" "${EXTRA[@]}" \
      --optimizer adam --adam-betas '(0.9, 0.98)' --lr 1e-3 --lr-scheduler inverse_sqrt \
      --warmup-updates 100 --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
      --batch-size 32 --max-update "$UPDATES" --save-dir "$CK" --no-epoch-checkpoints \
      --validate-interval-updates 150 --save-interval-updates 150 --keep-interval-updates 1 \
      --log-interval 100 --seed "$SEED" --num-workers 0 --no-progress-bar 2>&1 \
      | tee "$CK/train.log" | grep -E "\| (train|valid) \||done training"
  fi
  if [[ ! -f "$WORK/$ARCH.hyp" ]]; then
    echo "== decoding $ARCH"
    fairseq-generate "$WORK/data-bin" "${TASK[@]}" --path "$CK/checkpoint_last.pt" \
      --beam 5 --no-repeat-ngram-size 3 --max-len-b 80 --batch-size 50 \
      --required-batch-size-multiple 1 --num-workers 0 > "$WORK/$ARCH.generate.log" 2>&1
    python -m fairseq_hier.cli.hypotheses "$WORK/$ARCH.generate.log" --expected "$N_TEST" \
      -o "$WORK/$ARCH.hyp"
  fi
done

python -m fairseq_hier.cli.lead --source "$WORK/raw/test.src" --reference "$WORK/raw/test.tgt" \
  --output "$WORK/lead.hyp"
echo
echo "== ROUGE F1 on the $N_TEST test examples (official ROUGE-1.5.5 via the 'rouge' command)"
python examples/demo/score_table.py "$WORK/raw/test.tgt" Lead="$WORK/lead.hyp" \
  transformer="$WORK/transformer.hyp" pht="$WORK/pht.hyp" vht="$WORK/vht.hyp" | tee "$WORK/table.txt"
