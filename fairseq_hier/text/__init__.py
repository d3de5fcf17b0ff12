"""Text algorithms that several packages share, on whitespace token lists (words or
sentencepiece pieces): the one tf-idf (:mod:`~.tfidf`: paragraph graphs, LexRank, the ``tfidf``
ranking, 002 Table 1's similarity order, the attention-cosine gold), the paragraph graphs of Liu
& Lapata 2019 (:mod:`~.graphs`: tf-idf and the approximate discourse graph), ROUGE recall on
token lists (:mod:`~.rouge_ngrams`: the ranker's labels, 002 Table 1), and the word tokenizers
of document translation (:mod:`~.tokenizers`).

May import: :mod:`fairseq_hier.errors`, the standard library, numpy and scikit-learn; spaCy,
sacremoses and jieba only inside the functions that load them. Never torch or fairseq, never a
package above it: ``data/`` and every domain package import this one.
"""
