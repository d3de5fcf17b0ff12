"""Paragraphs ranked by tf-idf similarity, without a trained model (``fairseq-hier-rank apply
--method tfidf``): the unsupervised ranking of WikiSum's extractive stage (Liu et al. 2018:
paragraphs ordered by their tf-idf similarity to the article's title), by the one tf-idf of
:mod:`fairseq_hier.text.tfidf` (idf over the example's paragraphs; without a title term, the
centroid of the paragraphs as query): descending cosine, ties in input order, the order that
``fairseq-hier-rank eval`` scores as ``similarity``.

May import: :mod:`fairseq_hier.text`, :mod:`fairseq_hier.ranking.runtime` (the raw reader),
:mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`, numpy and scikit-learn.
"""

import logging
import time
from typing import List

from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs
from fairseq_hier.ranking.runtime import Record, read_raw
from fairseq_hier.text.tfidf import query_cosines, similarity_order

logger = logging.getLogger("fairseq_hier.rank")


def write_ranked_tfidf(record: Record, separator: str, keep: int, out, scores_out) -> int:
    """Write one example, its paragraphs by descending tf-idf cosine with its title (and the kept
    cosines to ``scores_out`` unless None); returns the paragraphs cut by ``keep``."""
    scores = query_cosines(record.paragraphs, record.title)  # P
    order = similarity_order(scores)
    kept = order[:keep] if keep > 0 else order
    tokens = list(record.title)
    for i in kept:
        tokens += [separator, *record.paragraphs[i]]
    out.write(" ".join(tokens) + "\n")
    if scores_out is not None:
        scores_out.write(" ".join(f"{scores[i]:.6g}" for i in kept) + "\n")
    return len(order) - len(kept)


def rank_file_tfidf(source: str, output: str, keep: int = 0, scores_out: str = None,
                    separator: str = "<P>") -> int:
    """Rank every example of the raw ``source`` (``title <P> paragraph <P> ...``) by its
    paragraphs' tf-idf cosine with its title and write ``output`` (and the cosines to
    ``scores_out``); logs the counts and returns the number of examples."""
    start = time.time()
    examples = paragraphs = empty = cut = 0
    outputs: List[str] = [output] + ([scores_out] if scores_out else [])
    with atomic_outputs(outputs, inputs=[source]) as handles:
        for record in read_raw(source, separator):
            if not record.paragraphs:
                raise HierError(f"{source}:{record.number}: no paragraph to rank (no non-empty "
                                f"segment after a {separator!r} separator)")
            cut += write_ranked_tfidf(record, separator, keep, handles[0],
                                      handles[1] if scores_out else None)
            examples += 1
            paragraphs += len(record.paragraphs)
            empty += record.empty
    logger.info(f"wrote {output}: {examples} examples, {paragraphs} paragraphs ranked by tf-idf "
                f"similarity to the title (the centroid where there is none) in "
                f"{time.time() - start:.1f} s; {empty} empty paragraphs dropped; {cut} paragraphs "
                f"cut by --keep")
    return examples
