from . import attention_mse  # noqa: F401
from . import paragraph_ranking  # noqa: F401
