"""One definition of how our attention modules mask scores (finite in every precision).

A masked score is the most negative *finite* value of the scores' dtype, never ``-inf``: in
half precision ``-inf`` arithmetic turns a fully masked row into NaN (``-inf - -inf``), while a
finite fill gives that row a uniform softmax, which callers then zero or ignore (absent
paragraphs get zero paragraph weight; a fully masked query row is padding). Softmaxes run in
float32, as fairseq's ``MultiheadAttention`` does, and are cast back to the values' dtype.

Mask convention (fairseq): True = masked (padding / absent).
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def mask_value(dtype: torch.dtype) -> float:
    """The fill for masked scores of ``dtype``: its most negative finite value."""
    return torch.finfo(dtype).min


def masked_fill_scores(scores: Tensor, mask: Tensor, inplace: bool = False) -> Tensor:
    """``scores`` with ``mask`` (True = masked, broadcastable) set to :func:`mask_value`."""
    value = mask_value(scores.dtype)
    return scores.masked_fill_(mask, value) if inplace else scores.masked_fill(mask, value)


def masked_softmax(scores: Tensor, mask: Tensor, dim: int = -1) -> Tensor:
    """Softmax over ``dim`` of ``scores`` with ``mask`` filled, computed and returned in float32
    (float64 scores: in float64; callers cast to their values' dtype). A fully masked row is
    uniform, not NaN."""
    wide = scores.to(torch.promote_types(scores.dtype, torch.float32))
    return F.softmax(masked_fill_scores(wide, mask), dim=dim)
