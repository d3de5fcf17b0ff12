from . import hierarchical_transformer  # noqa: F401
