"""Ranker scores for ``--align-strategy extprob`` from a tf-idf ranker (Liu et al. 2018 ranked
WikiSum paragraphs by tf-idf similarity to the article title).

    python examples/attention_alignment/tfidf_ranker_scores.py test.src > test.scores

Reads raw source lines of the task's format (``title <P> paragraph <P> ...``) and writes, per
line, one score per paragraph of the task (:func:`fairseq_hier.data.paragraphs.text_paragraphs`:
the title opens paragraph 1, empty paragraphs are dropped): the cosine of the paragraph's tf-idf
vector with the title's (:mod:`fairseq_hier.text.tfidf`, idf over the example's paragraphs), plus
1e-3 so that every score is positive. A stand-in for the extractive probabilities of Liu &
Lapata's ranker, which the ranked WikiSum release lacks.
"""

import sys

from fairseq_hier.data.paragraphs import split_source, text_paragraphs
from fairseq_hier.io import read_lines
from fairseq_hier.text.tfidf import query_cosines


def main(path, separator="<P>"):
    for number, line in enumerate(read_lines(path), start=1):
        paragraphs = text_paragraphs(line, separator)
        if not paragraphs:
            raise SystemExit(f"{path}:{number}: no paragraph")
        title = split_source(line, separator)[0]
        print(" ".join(f"{cosine + 1e-3:.5f}" for cosine in query_cosines(paragraphs, title)))


if __name__ == "__main__":
    main(sys.argv[1])
