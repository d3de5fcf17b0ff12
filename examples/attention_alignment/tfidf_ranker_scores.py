"""Ranker scores for ``--align-strategy extprob`` from a TF-IDF ranker (Liu et al. 2018 ranked
WikiSum paragraphs by TF-IDF similarity to the article title).

    python examples/attention_alignment/tfidf_ranker_scores.py test.src > test.scores

Reads raw source lines of the task's format (``title <P> paragraph <P> ...``) and writes, per
line, one score per non-empty paragraph (the title belongs to paragraph 1, as in the task): the
cosine similarity of the paragraph's TF-IDF vector to the title's, plus 1e-3 so that every score
is positive. IDF is computed over all paragraphs of the file. This is a stand-in for the
extractive probabilities of Liu & Lapata's ranker, which the ranked WikiSum release lacks.
"""

import math
import sys
from collections import Counter

from fairseq_hier.io import read_lines


def paragraphs_of(line, separator="<P>"):
    segments = [s.split() for s in f" {line} ".split(f" {separator} ")]
    title, rest = segments[0], [s for s in segments[1:] if s]
    return title, ([title + rest[0]] + rest[1:]) if rest else []


def main(path):
    examples = [paragraphs_of(line) for line in read_lines(path)]
    df = Counter(w for _, paras in examples for p in paras for w in set(p))
    n_docs = sum(len(paras) for _, paras in examples)
    idf = {w: math.log(n_docs / c) for w, c in df.items()}

    def vector(words):
        tf = Counter(words)
        return {w: c * idf.get(w, math.log(n_docs)) for w, c in tf.items()}

    def cosine(a, b):
        dot = sum(v * b.get(w, 0.0) for w, v in a.items())
        norm = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
        return dot / norm if norm else 0.0

    for number, (title, paras) in enumerate(examples, start=1):
        if not paras:
            raise SystemExit(f"{path}:{number}: no paragraph")
        query = vector(title)
        print(" ".join(f"{cosine(vector(p), query) + 1e-3:.5f}" for p in paras))


if __name__ == "__main__":
    main(sys.argv[1])
