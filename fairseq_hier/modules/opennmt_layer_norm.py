"""OpenNMT-py's LayerNorm (``onmt.modules.LayerNorm``, the one Fabbri et al.'s OpenNMT Transformer
uses): ``a * (x - mean) / (std + eps) + b`` with the unbiased standard deviation and ``eps``
1e-6 added to it, where torch's (fairseq's) LayerNorm divides by ``sqrt(biased var + 1e-5)``.

May import: torch.
"""

import torch
import torch.nn as nn
from torch import Tensor


class OpenNMTLayerNorm(nn.Module):
    """``weight * (x - mean) / (std + eps) + bias`` over the last dimension; ``std`` divides by
    ``C - 1``. Computed in float32 (fp16 / bf16 inputs come back in their dtype). The parameters
    are named as torch's LayerNorm's, so state-dict keys are fairseq's.

    Args:
        dim: C, the normalised size.
        eps: added to the standard deviation (OpenNMT's 1e-6)."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        y = x.float()  # ... x C
        mean = y.mean(-1, keepdim=True)
        std = y.std(-1, keepdim=True)  # unbiased (C - 1), as OpenNMT's x.std(-1)
        return (self.weight * (y - mean) / (std + self.eps) + self.bias).type_as(x)

    def extra_repr(self) -> str:
        return f"{self.weight.numel()}, eps={self.eps}, unbiased std"
