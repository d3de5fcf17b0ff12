from . import hierarchical_summarization  # noqa: F401
from . import attention_prediction  # noqa: F401
from . import hat_summarization  # noqa: F401
from . import document_translation  # noqa: F401
from . import paragraph_ranking  # noqa: F401
