#!/usr/bin/env bash
# A HAT whose sentence attention can be checked by eye and by number (004 Sec. 6), in ~4 min on
# 2 CPU cores: each made-up "article" has 3-8 sentences, one of them holds the word "budget",
# and the summary is that sentence, copied. A tiny hat_transformer (2+2 layers, d 64) trains
# 5000 updates from scratch on 2000 articles (--task hat_summarization, whitespace tokens,
# fairseq-preprocess --joined-dictionary), decodes 20 test articles with
# --print-sentence-attention for decoder layers 0 and 1, prints the share of sentence attention
# on the copied sentence (over the copied tokens, EOS step excluded) next to a uniform reader's
# share, and draws test article 0 for both layers.
# usage: heatmap_demo.sh WORK
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 WORK" >&2; exit 2; }
WORK=$1
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
mkdir -p "$WORK/raw"
python - "$WORK/raw" <<'PY'
import random, sys
out = sys.argv[1]
rng = random.Random(0)
words = ("the a model team reads writes long short notes papers design remote control price "
         "colour results show gains tests data report meeting plan week").split()
for split, n in (("train", 2000), ("valid", 100), ("test", 20)):
    rows = []
    for _ in range(n):
        k = rng.randint(3, 8)
        key = rng.randrange(k)
        sents = []
        for i in range(k):
            s = [rng.choice(words) for _ in range(rng.randint(4, 7))]
            if i == key:
                s.insert(rng.randrange(len(s)), "budget")
            sents.append(" ".join(s) + " .")
        rows.append((" ".join("<s> " + s for s in sents), sents[key], k, key))
    for suffix, col in (("source", 0), ("target", 1), ("sentences", 2), ("key", 3)):
        with open(f"{out}/{split}.{suffix}", "w") as f:
            f.write("".join(f"{r[col]}\n" for r in rows))
PY
if [[ ! -f "$WORK/bin/dict.source.txt" ]]; then
  fairseq-preprocess --source-lang source --target-lang target --trainpref "$WORK/raw/train" \
    --validpref "$WORK/raw/valid" --testpref "$WORK/raw/test" --destdir "$WORK/bin" \
    --joined-dictionary --workers 2
  cp "$WORK"/raw/{train,valid,test}.sentences "$WORK/bin/"
fi
# the demo's optimisation and decoding (Adam at 2e-3 after 100 warm-up updates, 5000 updates;
# beam 4): the table's (fairseq_hier/recipes/architectures.py, data set heatmap_demo)
SETTINGS=(hat_transformer_iwslt_zh_en --dataset heatmap_demo)
DECODING=$(fairseq-hier-settings "${SETTINGS[@]}" --stage paper-decode)
mapfile -t GENERATION <<< "$DECODING"
if [[ ! -f "$WORK/ckpt/checkpoint_best.pt" ]]; then
  OPTIMISATION_TEXT=$(fairseq-hier-settings "${SETTINGS[@]}" --stage paper-train)
  mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"
  fairseq-train "$WORK/bin" --user-dir "$USER_DIR" --task hat_summarization --source-lang source \
    --target-lang target --arch hat_transformer_iwslt_zh_en --encoder-layers 2 --decoder-layers 2 \
    --encoder-embed-dim 64 --decoder-embed-dim 64 --encoder-ffn-embed-dim 128 \
    --decoder-ffn-embed-dim 128 --encoder-attention-heads 4 --decoder-attention-heads 4 \
    --share-all-embeddings "${OPTIMISATION[@]}" --batch-size 32 --seed 1 \
    --save-dir "$WORK/ckpt" --no-epoch-checkpoints --log-format simple --log-interval 500 \
    --num-workers 0
fi
for layer in 0 1; do
  fairseq-generate "$WORK/bin" --user-dir "$USER_DIR" --task hat_summarization \
    --source-lang source --target-lang target --path "$WORK/ckpt/checkpoint_best.pt" \
    --gen-subset test "${GENERATION[@]}" --batch-size 20 --print-sentence-attention \
    --sentence-attention-layer "$layer" > "$WORK/attention-layer$layer.log"
  fairseq-hier-heatmap "$WORK/attention-layer$layer.log" --id 0 --out "$WORK/heatmap-layer$layer.png"
done
python - "$WORK" <<'PY'
import random, sys
work = sys.argv[1]
keys = [int(x) for x in open(f"{work}/raw/test.key")]
counts = [int(x) for x in open(f"{work}/raw/test.sentences")]
uniform = sum(1 / c for c in counts) / len(counts)
for layer in (0, 1):
    share, above, exact = [], 0, 0
    for line in open(f"{work}/attention-layer{layer}.log"):
        if line.startswith("H-"):
            i, _, hyp = line.rstrip("\n").split("\t")
            exact += hyp == open(f"{work}/raw/test.target").read().splitlines()[int(i[2:])]
        if line.startswith("A-"):
            i, steps = line.rstrip("\n").split("\t")
            rows = [[float(w) for w in s.split(",")] for s in steps.split()][:-1]  # no EOS step
            share.append(sum(r[keys[int(i[2:])]] for r in rows) / len(rows))
            above += share[-1] > 1 / counts[int(i[2:])]
    rng = random.Random(0)  # 95% bootstrap interval of the mean share over articles
    boots = sorted(sum(rng.choices(share, k=len(share))) / len(share) for _ in range(2000))
    print(f"decoder layer {layer}: {100 * sum(share) / len(share):.1f}% "
          f"[{100 * boots[50]:.1f}, {100 * boots[1949]:.1f}] of the sentence attention on the "
          f"copied sentence (uniform reader: {100 * uniform:.1f}%); above the uniform share in "
          f"{above}/{len(share)} articles; {exact}/{len(keys)} copies exact")
PY
