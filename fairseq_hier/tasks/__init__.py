"""fairseq tasks, one per file, registered with fairseq: ``hierarchical_summarization``,
``attention_prediction``, ``hat_summarization``, ``document_translation`` and
``paragraph_ranking``; their shared up-front checks (:mod:`~.checks`: every split is checked
before the first update) and the rule by which decoding takes the training cuts from the
checkpoint (:mod:`~.training_cuts`). Importing this package registers them.

May import: :mod:`fairseq_hier.models`, :mod:`fairseq_hier.generation`, :mod:`fairseq_hier.data`,
:mod:`fairseq_hier.io`, :mod:`fairseq_hier.errors`, torch and fairseq. Never the domain packages
(inference, ranking, ...) or :mod:`fairseq_hier.cli`: they are built on the tasks.
"""

from . import hierarchical_summarization  # noqa: F401
from . import attention_prediction  # noqa: F401
from . import hat_summarization  # noqa: F401
from . import document_translation  # noqa: F401
from . import paragraph_ranking  # noqa: F401
