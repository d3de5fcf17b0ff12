from . import attention_mse  # noqa: F401
