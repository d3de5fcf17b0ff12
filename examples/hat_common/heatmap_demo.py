"""The heatmap demo's two steps of its own (README.md, "A heatmap you can check"):

    python heatmap_demo.py corpus RAW_DIR   made-up articles of 3-8 sentences, one holding the
                                            word "budget"; the summary is that sentence, copied
    python heatmap_demo.py share WORK       the share of sentence attention on the copied sentence
                                            per decoder layer, beside a uniform reader's
"""

import random
import sys

WORDS = ("the a model team reads writes long short notes papers design remote control price "
         "colour results show gains tests data report meeting plan week").split()


def corpus(out: str) -> None:
    """SPLIT.{source,target,sentences,key}: BOS-marked article, copied sentence, sentence count,
    index of the copied sentence."""
    rng = random.Random(0)
    for split, n in (("train", 2000), ("valid", 100), ("test", 20)):
        rows = []
        for _ in range(n):
            k = rng.randint(3, 8)
            key = rng.randrange(k)
            sents = []
            for i in range(k):
                s = [rng.choice(WORDS) for _ in range(rng.randint(4, 7))]
                if i == key:
                    s.insert(rng.randrange(len(s)), "budget")
                sents.append(" ".join(s) + " .")
            rows.append((" ".join("<s> " + s for s in sents), sents[key], k, key))
        for suffix, col in (("source", 0), ("target", 1), ("sentences", 2), ("key", 3)):
            with open(f"{out}/{split}.{suffix}", "w") as f:
                f.write("".join(f"{r[col]}\n" for r in rows))


def share(work: str) -> None:
    """Per decoder layer: the mean share of sentence attention on the copied sentence over the
    copied tokens (EOS step excluded), its 95% bootstrap interval over articles, the articles
    above a uniform reader's share and the exact copies."""
    keys = [int(x) for x in open(f"{work}/raw/test.key")]
    counts = [int(x) for x in open(f"{work}/raw/test.sentences")]
    targets = open(f"{work}/raw/test.target").read().splitlines()
    uniform = sum(1 / c for c in counts) / len(counts)
    for layer in (0, 1):
        shares, above, exact = [], 0, 0
        for line in open(f"{work}/attention-layer{layer}.log"):
            if line.startswith("H-"):
                i, _, hyp = line.rstrip("\n").split("\t")
                exact += hyp == targets[int(i[2:])]
            if line.startswith("A-"):
                i, steps = line.rstrip("\n").split("\t")
                rows = [[float(w) for w in s.split(",")] for s in steps.split()][:-1]  # no EOS step
                shares.append(sum(r[keys[int(i[2:])]] for r in rows) / len(rows))
                above += shares[-1] > 1 / counts[int(i[2:])]
        rng = random.Random(0)
        boots = sorted(sum(rng.choices(shares, k=len(shares))) / len(shares) for _ in range(2000))
        print(f"decoder layer {layer}: {100 * sum(shares) / len(shares):.1f}% "
              f"[{100 * boots[50]:.1f}, {100 * boots[1949]:.1f}] of the sentence attention on the "
              f"copied sentence (uniform reader: {100 * uniform:.1f}%); above the uniform share in "
              f"{above}/{len(shares)} articles; {exact}/{len(keys)} copies exact")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("corpus", "share"):
        sys.exit("usage: heatmap_demo.py corpus RAW_DIR | share WORK")
    {"corpus": corpus, "share": share}[sys.argv[1]](sys.argv[2])
