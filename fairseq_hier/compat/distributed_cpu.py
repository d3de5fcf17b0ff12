"""Data-parallel training on CPU workers (gloo): fairseq's ``DistributedDataParallel`` wrapper
with ``device_ids=None`` for a CPU module, and ``torchrun`` without a GPU on device 0. Why:
docs/fairseq-fixes.md, section "Data-parallel training on CPU". Imports torch and fairseq.
"""

import os

import torch


class _DeviceAwareDDP(torch.nn.parallel.DistributedDataParallel):
    """torch's DistributedDataParallel as fairseq builds it, except that a module whose
    parameters are all on the CPU gets ``device_ids=None`` / ``output_device=None`` (the only
    values torch accepts for CPU modules) instead of fairseq's ``[device_id]``."""

    _fairseq_hier = True

    def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
        if all(p.device.type == "cpu" for p in module.parameters()):
            device_ids = output_device = None
        super().__init__(module, device_ids, output_device, *args, **kwargs)


def patch_ddp_on_cpu() -> None:
    """``--ddp-backend pytorch_ddp`` / ``c10d`` on CPU workers (gloo): scope
    ``fairseq.models.distributed_fairseq_model`` only. Idempotent."""
    from fairseq.models import distributed_fairseq_model

    if not getattr(distributed_fairseq_model.DistributedDataParallel, "_fairseq_hier", False):
        distributed_fairseq_model.DistributedDataParallel = _DeviceAwareDDP


def patch_torchrun_on_cpu() -> None:
    """``torchrun ... fairseq-train --cpu`` without a GPU: device 0 instead of fairseq's
    ``RANK % torch.cuda.device_count()`` (a division by zero). Idempotent."""
    from fairseq.distributed import utils as distributed_utils

    original = distributed_utils._infer_torch_distributed_launch_init
    if getattr(original, "_fairseq_hier", False):
        return

    def _infer_torch_distributed_launch_init(cfg):
        if torch.cuda.device_count() > 0:
            return original(cfg)
        cfg.distributed_init_method = "env://"
        cfg.distributed_world_size = int(os.environ["WORLD_SIZE"])
        cfg.distributed_rank = int(os.environ["RANK"])
        cfg.device_id = 0  # the CPU: no CUDA device is selected for --cpu
        cfg.distributed_no_spawn = True  # the processes are torchrun's

    _infer_torch_distributed_launch_init._fairseq_hier = True
    distributed_utils._infer_torch_distributed_launch_init = _infer_torch_distributed_launch_init
