"""The demo's corpora, generated deterministically from a seed, and the demo's fact scorer: the
synthetic multi-document summarisation corpus with the ground truth of every summary's facts
(:mod:`~fairseq_hier.demo.corpus`), its fact accuracy and baselines
(:mod:`~fairseq_hier.demo.facts`), and the toy parallel documents of the document-translation
demo in the published WMT layouts (:mod:`~fairseq_hier.demo.translation_corpus`).

May import: :mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors` and the standard library only, so
that generating and scoring a demo corpus never imports torch or fairseq. Never
:mod:`fairseq_hier.cli`.
"""
