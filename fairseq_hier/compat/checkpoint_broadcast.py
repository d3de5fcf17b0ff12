"""Resuming a multi-process run: the ranks > 0 rebuild the checkpoint rank 0 broadcasts with the
safe loader (``fairseq.distributed.utils`` sees it as ``torch.load``). Why: docs/fairseq-fixes.md,
section "Safe checkpoint loading". Imports ``safe_loading``; fairseq.
"""

from .. import safe_loading
from .checkpoint_loading import _MARK, _CheckpointTorch


def patch_distributed_checkpoint_broadcast() -> bool:
    """Resuming a multi-process run: ``fairseq.distributed.utils`` (``_broadcast_object_slow``,
    which rebuilds the checkpoint rank 0 read on ranks > 0) sees the safe loader as
    ``torch.load``. Every other module keeps torch's own. Idempotent."""
    from fairseq.distributed import utils as distributed_utils

    if not getattr(distributed_utils.torch, _MARK, False):
        distributed_utils.torch = _CheckpointTorch(safe_loading.load_broadcast)
    return True
