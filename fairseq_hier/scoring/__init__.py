"""Scoring: ROUGE, document BLEU and the paired bootstrap significance between systems.

- ``rouge.py``: official ROUGE-1.5.5 as files2rouge runs it (SEE files, config, the Perl call,
  its report), ROUGE's WordNet exception DB, the loud rouge-score fallback, and Google's
  rouge-score F1 beside it (the engine of the ``rouge`` command);
- ``bleu.py``: document BLEU and chrF of chunk translations put back into documents (sacreBLEU),
  with the post-processing of each side;
- ``bootstrap.py``: resample indices over documents and a mean with its bootstrap interval;
- ``significance.py``: the paired bootstrap test of systems against a baseline, on ROUGE
  (per-document F of one ROUGE-1.5.5 run per system) or on document BLEU.

What it may import: the standard library, :mod:`fairseq_hier.errors`, :mod:`fairseq_hier.io` and
the light text modules of :mod:`fairseq_hier.data` (markup, documents, chunk maps); numpy,
sacreBLEU and rouge-score inside the functions that need them, so that the scoring commands start
without them. Never torch or fairseq, and never :mod:`fairseq_hier.cli` (the commands import
this package, not the other way round), :mod:`fairseq_hier.report` or
:mod:`fairseq_hier.analysis`. Inside the package: ``bootstrap`` <- ``rouge`` <- ``significance``,
and ``bleu`` <- ``significance``.
"""
