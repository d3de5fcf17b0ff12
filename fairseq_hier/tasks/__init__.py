from . import hierarchical_summarization  # noqa: F401
