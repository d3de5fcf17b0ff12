"""``fairseq-train --fp16`` on a machine without CUDA: fairseq's flattened float32 master copy
keyed by the parameters' device instead of ``torch.cuda.current_device()``. Why:
docs/fairseq-fixes.md, section "--fp16 on the CPU". Imports torch and fairseq.
"""

import torch


def patch_fp16_flat_on_cpu() -> None:
    """``fairseq-train --fp16`` on a machine without CUDA: fairseq 0.12's
    ``FP16Optimizer.build_fp32_params`` keys its flattened float32 master copy by
    ``torch.cuda.current_device()`` ("Torch not compiled with CUDA enabled" on a CPU-only torch),
    although the copy itself is made on the parameters' device (``params[0].new(...)``). The
    key must be what fairseq later groups the parameters by when it copies gradients and
    weights (``p.device.index``): for parameters that are all on the CPU that is ``None`` (a key
    0 would leave every gradient uncopied). GPU runs are untouched. Idempotent."""
    from unittest import mock

    from fairseq.optim import fp16_optimizer

    mixin = fp16_optimizer._FP16OptimizerMixin
    original = mixin.__dict__["build_fp32_params"].__func__
    if getattr(original, "_fairseq_hier", False):
        return

    def build_fp32_params(cls, args, params, flatten=True):
        if flatten and params and all(p.device.type == "cpu" for p in params):
            with mock.patch.object(torch.cuda, "current_device", lambda: params[0].device.index):
                return original(cls, args, params, flatten)
        return original(cls, args, params, flatten)

    build_fp32_params._fairseq_hier = True
    mixin.build_fp32_params = classmethod(build_fp32_params)
