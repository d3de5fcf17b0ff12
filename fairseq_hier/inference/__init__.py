"""Inference from raw documents: the preprocessing record of a data-bin, the pipelines that redo
the recipes' preprocessing on new text (their base class and registry in ``pipeline_base``, which
both the pipelines and the record build on), the summarizer's input files, and the
``HierSummarizer`` API.

May import: :mod:`fairseq_hier.preparation` and :mod:`fairseq_hier.ranking` (the recipes' own
steps), :mod:`fairseq_hier.data`, :mod:`fairseq_hier.generation`, :mod:`fairseq_hier.analysis`,
:mod:`fairseq_hier.safe_loading`, :mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`; torch and
fairseq inside the functions that need them. Never :mod:`fairseq_hier.cli`."""


def __getattr__(name):
    if name == "HierSummarizer":
        # the summarizer imports fairseq: `import fairseq_hier.inference` stays light
        from .summarizer import HierSummarizer

        return HierSummarizer
    raise AttributeError(name)
