"""Analyses of trained systems: the hypotheses of fairseq-generate logs (:mod:`~.generate_log`),
document BLEU of chunk translations read from those logs (:mod:`~.doc_bleu`), the
paragraph-attention cosine (:mod:`~.attention_cosine`) and the efficiency table
(:mod:`~.efficiency`). Scores and their significance tests live in :mod:`fairseq_hier.scoring`.

May import: :mod:`fairseq_hier.scoring`, :mod:`fairseq_hier.preparation`,
:mod:`fairseq_hier.data`, :mod:`fairseq_hier.models`, :mod:`fairseq_hier.io`,
:mod:`fairseq_hier.errors`, torch and fairseq (the models inside the functions that load one).
Never :mod:`fairseq_hier.cli`.
"""
