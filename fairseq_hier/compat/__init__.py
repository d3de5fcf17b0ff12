"""The fixes fairseq 0.12 needs on this stack (modern torch and Python), one module per fix, all
applied by :func:`apply_all` when the plugin registers: safe checkpoint loading with one-line
errors (:mod:`~.checkpoint_loading`) and its multi-process broadcast
(:mod:`~.checkpoint_broadcast`), ``--bf16`` without TPU mode (:mod:`~.bf16`), CPU n-gram blocking
(:mod:`~.ngram_blocking`), batching that drops no example (:mod:`~.batch_by_size`), data-parallel
training on CPU (:mod:`~.distributed_cpu`), ``--fp16`` on the CPU (:mod:`~.fp16_on_cpu`),
pretrained checkpoint directories (:mod:`~.directory_checkpoints`) and fairseq-interactive's
``--input`` (:mod:`~.interactive_input`). What each fixes and why: docs/fairseq-fixes.md.

May import ``safe_loading``, ``io``, ``errors``; torch and fairseq (each fix imports the fairseq
module it changes when it is applied).
"""

from .batch_by_size import patch_batch_by_size
from .bf16 import patch_bf16_without_tpu
from .checkpoint_broadcast import patch_distributed_checkpoint_broadcast
from .checkpoint_loading import patch_checkpoint_loading
from .directory_checkpoints import patch_directory_checkpoints
from .distributed_cpu import patch_ddp_on_cpu, patch_torchrun_on_cpu
from .fp16_on_cpu import patch_fp16_flat_on_cpu
from .interactive_input import patch_interactive_input
from .ngram_blocking import patch_ngram_blocking

__all__ = ["apply_all", "patch_batch_by_size", "patch_bf16_without_tpu",
           "patch_checkpoint_loading", "patch_ddp_on_cpu", "patch_directory_checkpoints",
           "patch_distributed_checkpoint_broadcast", "patch_fp16_flat_on_cpu",
           "patch_interactive_input", "patch_ngram_blocking", "patch_torchrun_on_cpu"]


def apply_all() -> None:
    """Every fix, in one call (idempotent). Called when the plugin registers."""
    patch_interactive_input()
    patch_checkpoint_loading()
    patch_distributed_checkpoint_broadcast()
    patch_bf16_without_tpu()
    patch_ngram_blocking()
    patch_batch_by_size()
    patch_ddp_on_cpu()
    patch_torchrun_on_cpu()
    patch_fp16_flat_on_cpu()
    patch_directory_checkpoints()
