"""Copy attention (OpenNMT-py's ``-copy_attn``, the pointer-generator of Fabbri et al.'s FT
baseline that paper 003 compares with and builds ParsingSum-FT on).

The copy distribution and how it follows OpenNMT-py: docs/models.md, section
fairseq_hier.modules.copy_attention.

Legend: B batch, T target steps, S source tokens, V vocabulary, C decoder output dim.
Imports torch.
"""

from typing import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

#: log-probabilities are floored at log(TINY): a copy-only or underflowed entry stays finite
TINY = torch.finfo(torch.float32).tiny


def copy_mixture(logits: Tensor, p_copy: Tensor, attn: Tensor, src_tokens: Tensor,
                 copyable: Tensor) -> Tensor:
    """The pointer-generator mixture (probabilities, float32).

    logits: ``B x T x V``; p_copy: ``B x T x 1`` in [0, 1]; attn: ``B x T x S`` (rows sum to 1
    over the real source tokens); src_tokens: ``B x S`` ids in the shared dictionary; copyable:
    ``B x S`` bool (True = a token that may be copied). Returns ``B x T x V``, rows summing to 1."""
    b, t, v = logits.shape
    if attn.shape != (b, t, src_tokens.size(1)) or copyable.shape != src_tokens.shape:
        raise ValueError(f"copy attention: expected attn {(b, t, src_tokens.size(1))} and a "
                         f"copyable mask {tuple(src_tokens.shape)}, got {tuple(attn.shape)} and "
                         f"{tuple(copyable.shape)}")
    attn = attn.float() * copyable.unsqueeze(1)  # B x T x S
    mass = attn.sum(-1, keepdim=True)  # B x T x 1
    attn = attn / mass.clamp_min(TINY)
    p_copy = p_copy.float() * mass.gt(0)  # nothing to copy: generate only
    index = src_tokens.unsqueeze(1).expand(b, t, src_tokens.size(1))  # B x T x S
    copied = attn.new_zeros(b, t, v).scatter_add_(2, index, attn)  # B x T x V
    return (1 - p_copy) * F.softmax(logits.float(), dim=-1) + p_copy * copied


def copyable_tokens(src_tokens: Tensor, specials: Sequence[int]) -> Tensor:
    """``B x S`` bool: True for source tokens that are none of ``specials`` (pad, EOS, BOS)."""
    return ~torch.isin(src_tokens, torch.tensor(list(specials), device=src_tokens.device))


class CopyGenerator(nn.Module):
    """The copy switch ``p_copy = sigmoid(w_c . h + b_c)`` and the mixture of
    :func:`copy_mixture`, as log-probabilities.

    Args:
        embed_dim: C, the size of the decoder output state ``h``.
        specials: token ids never copied (padding, EOS, BOS)."""

    def __init__(self, embed_dim: int, specials: Sequence[int]):
        super().__init__()
        self.switch = nn.Linear(embed_dim, 1)
        self.specials = tuple(int(s) for s in specials)

    def forward(self, logits: Tensor, features: Tensor, attn: Tensor,
                src_tokens: Tensor) -> Tensor:
        """logits: ``B x T x V``; features (``h``): ``B x T x C``; attn: ``B x T x S``;
        src_tokens: ``B x S``. Returns log-probabilities ``B x T x V`` (float32)."""
        p_copy = torch.sigmoid(self.switch(features).float())  # B x T x 1
        probs = copy_mixture(logits, p_copy, attn, src_tokens,
                             copyable_tokens(src_tokens, self.specials))
        return probs.clamp_min(TINY).log()
