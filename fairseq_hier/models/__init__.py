"""The papers' models, one paper per file, registered with fairseq: PHT and VHT
(:mod:`~.hierarchical_transformer`, 000/001), the attention predictor (:mod:`~.attention_predictor`,
001), Liu & Lapata's hierarchical Transformer and paragraph ranker (:mod:`~.liu_ht`,
:mod:`~.paragraph_ranker`, 002), ParsingSum and its FT baseline (:mod:`~.parsingsum`,
:mod:`~.transformer_copy`, 003) and HAT (:mod:`~.hat`, 004); Hugging Face BART weights
(:mod:`~.hf_bart`), activation checkpointing (:mod:`~.checkpointing`) and the model options
refused before any parameter is allocated (:mod:`~.option_checks`). Each is built from :mod:`fairseq_hier.modules` and fairseq's
``build_*`` hooks. Importing this package registers them.

May import: :mod:`fairseq_hier.modules`, :mod:`fairseq_hier.data`, :mod:`fairseq_hier.compat`,
:mod:`fairseq_hier.errors`, torch and fairseq. Never the tasks, the generators, the domain packages
or :mod:`fairseq_hier.cli`.
"""

from . import hierarchical_transformer  # noqa: F401
from . import attention_predictor  # noqa: F401
from . import hat  # noqa: F401
from . import liu_ht  # noqa: F401
from . import paragraph_ranker  # noqa: F401
from . import parsingsum  # noqa: F401
from . import transformer_copy  # noqa: F401
