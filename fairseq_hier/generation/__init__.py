"""Decoding: fairseq's ``SequenceGenerator`` with attention alignment and the papers' decoding
rules (:mod:`~.sequence_generator`, scores in :mod:`~.alignment`, the extractive scores of
``extprob`` in :mod:`~.ranker_scores`, the task options turned into its arguments in
:mod:`~.options`), beam search that returns HAT's sentence attention
(:mod:`~.sentence_attention`), and the up-front checks of fairseq's decoding options
(:mod:`~.checks`). The tasks choose the generator in ``build_generator``.

May import: :mod:`fairseq_hier.models`, :mod:`fairseq_hier.modules`, :mod:`fairseq_hier.data`,
:mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`, torch and fairseq. Never the tasks, the domain
packages or :mod:`fairseq_hier.cli`.
"""
