"""The extractive baselines that the papers compare against, each the summary of one example's
raw source line cut to its reference's length: Lead (:mod:`~fairseq_hier.baselines.lead`, the
first tokens of the title and the ranked paragraphs) and LexRank
(:mod:`~fairseq_hier.baselines.lexrank`, paragraphs by their centrality in the tf-idf graph).

May import: :mod:`fairseq_hier.data` (paragraph rules), :mod:`fairseq_hier.text` (tf-idf),
:mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`, numpy and scikit-learn; never torch or fairseq (the baselines run
without them), never :mod:`fairseq_hier.cli`.
"""
