from . import hierarchical_transformer  # noqa: F401
from . import attention_predictor  # noqa: F401
from . import hat  # noqa: F401
from . import liu_ht  # noqa: F401
from . import paragraph_ranker  # noqa: F401
from . import parsingsum  # noqa: F401
