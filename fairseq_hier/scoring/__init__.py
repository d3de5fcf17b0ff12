"""Scoring: ROUGE, document BLEU and the paired bootstrap significance between systems.

Modules: ``rouge`` (official ROUGE-1.5.5 and rouge-score), ``bleu`` (document BLEU and chrF),
``bootstrap`` (resampling), ``significance`` (the paired test); what each holds:
docs/evaluation.md, section fairseq_hier.scoring.

May import: the standard library, :mod:`fairseq_hier.errors`, :mod:`fairseq_hier.io` and
the light text modules of :mod:`fairseq_hier.data` (markup, documents, chunk maps); numpy,
sacreBLEU and rouge-score inside the functions that need them, so that the scoring commands start
without them. Never torch or fairseq, and never :mod:`fairseq_hier.cli` (the commands import
this package, not the other way round), :mod:`fairseq_hier.report` or
:mod:`fairseq_hier.analysis`. Inside the package: ``bootstrap`` <- ``rouge`` <- ``significance``,
and ``bleu`` <- ``significance``.
"""
