"""fairseq criterions, one per file, registered with fairseq: ``attention_mse`` (the attention
predictor, 001) and ``paragraph_ranking`` (the paragraph ranker, 002). Importing this package
registers them.

May import: :mod:`fairseq_hier.errors`, torch and fairseq.
"""

from . import attention_mse  # noqa: F401
from . import paragraph_ranking  # noqa: F401
