"""Word-level cross attention inside every paragraph, all paragraphs at once (000/001 Eq. 8).

One softmax per paragraph over its own tokens, for every paragraph in one batched call; the
equations, masking and the fused path: docs/models.md, section
fairseq_hier.modules.paragraph_attention.

Legend: T target steps, B batch, P paragraphs, L tokens, C model dim, H heads, D = C / H,
N present paragraphs. Mask convention: True = padding.
Imports ``errors``; torch, fairseq.
"""

from typing import Dict, Optional, Tuple

import torch
import torch.nn.functional as F
from fairseq.modules import MultiheadAttention
from torch import Tensor

from .masking import masked_softmax
from .recompute import rebuilt_for_backward

IncrementalState = Optional[Dict[str, Dict[str, Optional[Tensor]]]]


class ParagraphWordAttention(MultiheadAttention):
    """Multi-head attention of decoder states over the words of each paragraph separately."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0):
        super().__init__(embed_dim, num_heads, dropout=dropout, encoder_decoder_attention=True)
        self.fused = True  # False: the reference path of :func:`word_attention` (tests)

    def forward(self, query: Tensor, words: Tensor, padding_mask: Tensor,
                word_rows: Optional[Tensor] = None, paragraph_weights: Optional[Tensor] = None,
                incremental_state: IncrementalState = None) -> Tensor:
        """query: ``T x B x C``; words: ``L x B0 x P x C`` (row ``word_rows[b]`` holds example
        b; ``word_rows`` None: B0 = B, identity); padding_mask: ``B x P x L``;
        paragraph_weights: ``B x T x P`` or None.

        Returns ``T x B x C`` (fused with the paragraph weights, PHT Eq. 9) when weights are
        given, else ``T x B x P x C`` (one context per paragraph, VHT)."""
        t, b, c = query.shape
        # T x B x C -> T x B x H x D -> B x H x T x D
        q = (self.q_proj(query) * self.scaling).view(t, b, self.num_heads, self.head_dim)
        q = q.permute(1, 2, 0, 3)
        k, v = self._keys_values(words, padding_mask, word_rows, incremental_state)
        keep = ~word_attention_mask(padding_mask)  # B x P x L, True = attended
        dropout = self.dropout_module.p if self.training else 0.0
        ctx = word_attention(q, k, v, keep, dropout, fused=self.fused)  # Eq. 8: B x H x P x T x D
        if paragraph_weights is None:
            # B x H x P x T x D -> T x B x P x H x D -> T x B x P x C
            return self.out_proj(ctx.permute(3, 0, 2, 1, 4).reshape(t, b, -1, c))
        # Eq. 9, as a broadcast product summed over P: backward keeps ctx itself (the kernel's
        # output, kept anyway), where an einsum would keep a permuted copy of it
        weights = paragraph_weights.to(ctx).transpose(1, 2).unsqueeze(1)  # B x 1 x P x T
        fused = (ctx * weights.unsqueeze(-1)).sum(2)  # B x H x T x D
        return self.out_proj(fused.permute(2, 0, 1, 3).reshape(t, b, c))  # -> T x B x C

    def _keys_values(self, words: Tensor, padding_mask: Tensor, word_rows: Optional[Tensor],
                     incremental_state: IncrementalState) -> Tuple[Tensor, Tensor]:
        """Project the words of present paragraphs once per source (cached when decoding):
        ``B x H x P x L x D`` keys and values, contiguous, zeros for absent paragraphs."""
        cache = self._get_input_buffer(incremental_state) if incremental_state is not None else {}
        if cache.get("prev_key") is not None:
            return cache["prev_key"], cache["prev_value"]
        l, _, p, c = words.shape
        b = padding_mask.size(0)
        present = ~padding_mask.all(-1)  # B x P
        if word_rows is None and bool(present.all()):
            # every paragraph present: project the word states in place of a gathered copy
            # (the copy would be kept for backward by every layer: +L x B*P x C each)
            kv = [proj(words).view(l, b, p, self.num_heads, self.head_dim)  # L x B x P x H x D
                  .permute(1, 3, 2, 0, 4).contiguous()  # -> B x H x P x L x D
                  for proj in (self.k_proj, self.v_proj)]
            return self._cache_keys_values(kv, cache, incremental_state)
        rows = present.view(-1).nonzero().squeeze(1)  # N present rows of B*P
        source = rows if word_rows is None else word_rows.index_select(0, rows // p) * p + rows % p
        x = words.reshape(l, -1, c).index_select(1, source)  # L x (B0*P) x C -> L x N x C
        n, h, d = rows.numel(), self.num_heads, self.head_dim
        kv = []
        example, paragraph = rows // p, rows % p  # N, N
        for proj in (self.k_proj, self.v_proj):  # two projections, not a loop over data
            y = proj(x).view(l, n, h, d).permute(1, 2, 0, 3)  # L x N x C -> N x H x L x D
            full = y.new_zeros(b, h, p, l, d)  # B x H x P x L x D, contiguous
            full[example, :, paragraph] = y  # (the indexed view is N x H x L x D)
            kv.append(full)
        return self._cache_keys_values(kv, cache, incremental_state)

    def _cache_keys_values(self, kv, cache, incremental_state) -> Tuple[Tensor, Tensor]:
        """Keep the (contiguous) keys and values for the next decoding steps."""
        if incremental_state is not None:
            cache["prev_key"], cache["prev_value"] = kv
            self._set_input_buffer(incremental_state, cache)
        return kv[0], kv[1]


def word_attention(q: Tensor, k: Tensor, v: Tensor, keep: Tensor, dropout: float = 0.0,
                   fused: bool = True) -> Tensor:
    """Eq. 8 before W^O: every query attends to the words of each paragraph separately.

    q: ``B x H x T x D`` (scaled); k, v: ``B x H x P x L x D``; keep: ``B x P x L`` (True =
    attended, >= 1 per paragraph). Returns ``B x H x P x T x D``.

    Fused: paragraphs fold into the head axis and torch's ``scaled_dot_product_attention`` runs
    ``B x (H*P)`` attentions of ``T`` queries over ``L`` keys (flash kernel on CPU, flash /
    memory-efficient on CUDA), so the ``B x H x P x T x L`` probabilities are neither stored for
    backward nor built whole. The queries are repeated per paragraph (``B x H x P x T x D``, the
    size of the output). Reference (``fused=False``): the same equation written out, softmax in
    float32, for the equality tests and as the definition."""
    b, h, t, d = q.shape
    p, l = k.shape[2], k.shape[3]
    if not fused:
        scores = torch.matmul(q.unsqueeze(2), k.transpose(-1, -2))  # B x H x P x T x L
        probs = masked_softmax(scores, ~keep[:, None, :, None, :]).type_as(v)
        probs = F.dropout(probs, p=dropout, training=dropout > 0)
        return torch.matmul(probs, v)  # B x H x P x T x D
    # B x H x T x D -> B x H x P x T x D -> B x (H*P) x T x D (a copy: the kernel takes no
    # stride-0 axis); for backward the copy is not kept but rebuilt from q
    repeated = q.unsqueeze(2).expand(b, h, p, t, d).reshape(b, h * p, t, d)
    mask = keep[:, None, :, None, :].expand(b, h, p, 1, l).reshape(b, h * p, 1, l)
    with rebuilt_for_backward(repeated, lambda: q.detach().unsqueeze(2).expand(b, h, p, t, d)
                              .reshape(b, h * p, t, d)):
        ctx = F.scaled_dot_product_attention(repeated, k.view(b, h * p, l, d),
                                             v.view(b, h * p, l, d), attn_mask=mask,
                                             dropout_p=dropout, scale=1.0)
    return ctx.view(b, h, p, t, d)  # B x (H*P) x T x D -> B x H x P x T x D


def word_attention_mask(padding_mask: Tensor) -> Tensor:
    """``B x P x L`` token padding mask with position 0 of absent paragraphs unmasked, so that
    their softmax is defined (their keys are zeros); callers give those paragraphs exactly zero
    paragraph weight."""
    absent = padding_mask.all(dim=-1, keepdim=True)  # B x P x 1
    first = torch.zeros_like(padding_mask)
    first[..., 0] = True
    return padding_mask & ~(absent & first)
