"""Inference from raw documents: the preprocessing record of a data-bin, the pipelines that redo
the recipes' preprocessing on new text, and the ``HierSummarizer`` API."""


def __getattr__(name):  # HierSummarizer imports fairseq lazily: `import fairseq_hier.inference` stays light
    if name == "HierSummarizer":
        from .summarizer import HierSummarizer

        return HierSummarizer
    raise AttributeError(name)
