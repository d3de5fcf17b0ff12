"""The few fixes fairseq needs on modern torch / Python, in one place.

torch >= 2.6 changed ``torch.load``'s default to ``weights_only=True``. fairseq checkpoints hold an
``argparse.Namespace`` (``state["args"]``), omegaconf containers and numpy scalars, so stock fairseq
can no longer load its own checkpoints (``Unsupported global: argparse.Namespace``) and both
``fairseq-generate`` and a resumed ``fairseq-train`` die.

Upstream fairseq main fixed this by passing ``weights_only=False`` in
``checkpoint_utils.load_checkpoint_to_cpu`` (and ``load_ema_from_checkpoint``). We apply the same
fix without patching installed files and without a process-wide switch: the module
``fairseq.checkpoint_utils`` sees a thin proxy of ``torch`` whose ``load`` defaults to
``weights_only=False``. Every other ``torch.load`` in the process keeps torch's safe default.
Checkpoints are trusted files the user trained (as they always were before torch 2.6).
"""

import inspect
import types

import torch

_MARK = "_fairseq_hier_checkpoint_torch"


def _torch_load_accepts_weights_only() -> bool:
    try:
        return "weights_only" in inspect.signature(torch.load).parameters
    except (TypeError, ValueError):  # pragma: no cover - C builtins without signature
        return True


class _CheckpointTorch(types.ModuleType):
    """``torch`` as seen by ``fairseq.checkpoint_utils``: identical, except ``load`` defaults to
    ``weights_only=False`` (fairseq checkpoints pickle argparse/omegaconf/numpy objects)."""

    def __init__(self):
        super().__init__("torch")
        setattr(self, _MARK, True)

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def load(*args, **kwargs):
        kwargs.setdefault("weights_only", False)
        return torch.load(*args, **kwargs)


def patch_checkpoint_loading() -> bool:
    """Make fairseq's own checkpoint loading work on torch >= 2.6. Idempotent.

    Returns True if the fix is active (or not needed because torch has no ``weights_only``).
    """
    if not _torch_load_accepts_weights_only():
        return True
    from fairseq import checkpoint_utils

    if getattr(checkpoint_utils.torch, _MARK, False):
        return True
    checkpoint_utils.torch = _CheckpointTorch()
    return True
