"""Tensors rebuilt in the backward pass instead of kept from the forward pass (to save memory).

Fused attention kernels keep their inputs for backward. Where an input is a cheap function of a
tensor that is kept anyway (queries repeated per paragraph; the pooling heads, one linear map of
the encoder states), keeping it costs memory for nothing: :func:`rebuilt_for_backward` hands
autograd a recipe instead, and backward rebuilds the tensor when it needs it. The recipe runs
under the autocast state of the forward pass, so the rebuilt values are the kept ones exactly.
"""

import torch
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

