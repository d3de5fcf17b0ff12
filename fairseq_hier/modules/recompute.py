"""What autograd keeps for the backward pass, made smaller (to save memory and time).

Fused attention kernels keep their inputs for backward. Where an input is a cheap function of a
tensor that is kept anyway (queries repeated per paragraph; the pooling heads, one linear map of
the encoder states), keeping it costs memory for nothing: :func:`rebuilt_for_backward` hands
autograd a recipe instead, and backward rebuilds the tensor when it needs it. The recipe runs
under the autocast state of the forward pass, so the rebuilt values are the kept ones exactly.

Dropout on CPU: torch's ``F.dropout`` draws a float32 Bernoulli noise tensor (a serial
``bernoulli_``), divides it by ``1 - p`` and keeps it for backward (4 bytes per element).
:func:`mask_dropout` draws ``uniform >= p`` instead, keeps the boolean mask (1 byte per element)
and is about 3x faster; it is the same dropout (every element kept with probability ``1 - p``,
kept ones scaled by ``1 / (1 - p)``), as torch's fused CUDA kernel draws it. :class:`MaskDropout`
is fairseq's dropout module with it; :func:`use_mask_dropout` swaps it into a built model.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.modules import FairseqDropout
from torch import Tensor


def rebuilt_for_backward(tensor: Tensor, rebuild):
    """Context in which autograd keeps no copy of ``tensor`` (or of a view of it with the same
    start and shape) for backward, but calls ``rebuild()`` (same values, no grad needed) when
    backward needs it. Other saved tensors are kept as usual."""
    ptr, shape = tensor.data_ptr(), tensor.shape
    device = tensor.device.type
    autocast = (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))

    def rebuilt():
        with torch.no_grad(), torch.autocast(device, dtype=autocast[1], enabled=autocast[0]):
            return rebuild()

    def pack(saved: Tensor):
        if saved.data_ptr() == ptr and saved.shape == shape:
            return rebuilt  # the tensor itself is freed after forward
        return saved

    def unpack(packed):
        return packed() if callable(packed) else packed

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


def mask_dropout(x: Tensor, p: float, inplace: bool = False) -> Tensor:
    """Training-mode dropout of ``x`` (any shape): each element zeroed with probability ``p``,
    the others scaled by ``1 / (1 - p)``. On CPU the mask is ``uniform >= p`` (float32 uniforms,
    whatever ``x``'s dtype) and backward keeps it as booleans; elsewhere torch's fused kernel
    (``F.dropout``, which keeps a boolean mask too)."""
    if x.device.type != "cpu" or p <= 0.0 or p >= 1.0:
        return F.dropout(x, p=p, training=True, inplace=inplace)
    keep = torch.rand(x.shape, device=x.device) >= p  # same shape as x, bool
    if inplace:
        return x.mul_(keep).mul_(1.0 / (1.0 - p))
    # autograd keeps only ``keep``: the product by a Python number keeps nothing
    return x * keep * (1.0 / (1.0 - p))


class MaskDropout(FairseqDropout):
    """fairseq's ``FairseqDropout`` (same probability, same switches: training mode,
    ``apply_during_inference``) computed by :func:`mask_dropout`."""

    def forward(self, x: Tensor, inplace: bool = False) -> Tensor:
        if self.p > 0 and (self.training or self.apply_during_inference):
            return mask_dropout(x, self.p, inplace=inplace)
        return x


def use_mask_dropout(model: nn.Module) -> int:
    """Replace every ``FairseqDropout`` inside ``model`` by a :class:`MaskDropout` of the same
    probability, name and inference switch (fairseq's blocks build theirs in their
    constructors); returns how many were replaced."""
    swaps = [(parent, name, child) for parent in model.modules()
             for name, child in parent.named_children()
             if isinstance(child, FairseqDropout) and not isinstance(child, MaskDropout)]
    for parent, name, child in swaps:
        new = MaskDropout(child.p, module_name=child.module_name)
        new.apply_during_inference = child.apply_during_inference
        new.train(child.training)
        setattr(parent, name, new)
    return len(swaps)
