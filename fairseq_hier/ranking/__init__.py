"""Paragraph ranking (Liu & Lapata 2019, paper 002 Sec. 3.1): the trained ranker's runtime
(:mod:`~fairseq_hier.ranking.runtime`: loading a ``paragraph_ranking`` checkpoint, reading the
examples to rank, scoring their paragraphs in batches and writing them by descending score;
used by ``fairseq-hier-rank apply`` and by the inference pipeline that redoes a recipe's ranking
step), the ranking by tf-idf similarity to the title (:mod:`~fairseq_hier.ranking.tfidf`), and
how much of the target the first L paragraphs of a ranking cover
(:mod:`~fairseq_hier.ranking.evaluation`, 002 Table 1).

May import: :mod:`fairseq_hier.data`, :mod:`fairseq_hier.text` (tf-idf, ROUGE recall),
:mod:`fairseq_hier.preparation` (line readers), :mod:`fairseq_hier.io`,
:mod:`fairseq_hier.errors`, numpy and scikit-learn; torch, fairseq (the ``paragraph_ranking``
task) and sentencepiece only inside the functions that need them, so that importing this package
stays light. Never :mod:`fairseq_hier.cli`.
"""
