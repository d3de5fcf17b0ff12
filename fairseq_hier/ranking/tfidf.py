"""Paragraphs ranked by tf-idf similarity, without a trained model (``fairseq-hier-rank --method
tfidf``): the unsupervised ranking WikiSum's extractive stage used (Liu et al. 2018: paragraphs
ordered by their tf-idf similarity to the article's title).

Per example, the collection is the example itself: a term's idf is ``log((1 + n) / (1 + df)) + 1``
over its ``n`` paragraphs (scikit-learn's smooth idf), a paragraph's vector is its term counts x
idf, L2-normalised. The query is the title's vector; an example without a title is ranked by
similarity to the sum of its paragraphs' vectors (the centroid: the paragraphs most typical of
the example first). Paragraphs are ordered by descending cosine, ties in input order.
"""

import logging
import time
from collections import Counter
from typing import List, Sequence

import numpy as np

from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs
from fairseq_hier.ranking.runtime import read_raw

logger = logging.getLogger("fairseq_hier.rank")


def tfidf_scores(title: Sequence[str], paragraphs: Sequence[Sequence[str]]) -> np.ndarray:
    """The cosine of each paragraph's tf-idf vector with the query's (the title, else the
    centroid of the paragraphs); tokens are compared lowercased.  ``P`` floats."""
    docs = [[t.lower() for t in p] for p in paragraphs]
    vocab = {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
    n = len(docs)
    counts = np.zeros((n, len(vocab)))  # P x V
    for row, d in enumerate(docs):
        for term, c in Counter(d).items():
            counts[row, vocab[term]] = c
    df = (counts > 0).sum(axis=0)
    idf = np.log((1 + n) / (1 + df)) + 1.0
    vectors = _normalised(counts * idf)  # P x V
    query = np.zeros(len(vocab))
    known = [vocab[t.lower()] for t in title if t.lower() in vocab]
    for i in known:
        query[i] += 1.0
    query = query * idf if known else vectors.sum(axis=0)
    norm = np.linalg.norm(query)
    return vectors @ (query / norm) if norm > 0 else np.zeros(n)


def _normalised(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms > 0, norms, 1.0)


def rank_file_tfidf(source: str, output: str, keep: int = 0, scores_out: str = None,
                    separator: str = "<P>") -> int:
    """Rank every example of the raw ``source`` (``title <P> paragraph <P> ...``) by
    :func:`tfidf_scores` and write ``output`` (and the cosines to ``scores_out``); logs the
    counts and returns the number of examples."""
    start = time.time()
    examples = paragraphs = empty = cut = 0
    outputs: List[str] = [output] + ([scores_out] if scores_out else [])
    with atomic_outputs(outputs, inputs=[source]) as handles:
        for record in read_raw(source, separator):
            if not record.paragraphs:
                raise HierError(f"{source}:{record.number}: no paragraph to rank (no non-empty "
                                f"segment after a {separator!r} separator)")
            scores = tfidf_scores(record.title, record.paragraphs)
            order = np.argsort(-scores, kind="stable")
            kept = order[:keep] if keep > 0 else order
            tokens = list(record.title)
            for i in kept:
                tokens += [separator, *record.paragraphs[i]]
            handles[0].write(" ".join(tokens) + "\n")
            if scores_out:
                handles[1].write(" ".join(f"{scores[i]:.6g}" for i in kept) + "\n")
            examples += 1
            paragraphs += len(record.paragraphs)
            empty += record.empty
            cut += len(order) - len(kept)
    logger.info(f"wrote {output}: {examples} examples, {paragraphs} paragraphs ranked by tf-idf "
                f"similarity to the title (the centroid where there is none) in "
                f"{time.time() - start:.1f} s; {empty} empty paragraphs dropped; {cut} paragraphs "
                f"cut by --keep")
    return examples
