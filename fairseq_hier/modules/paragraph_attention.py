"""Word-level cross attention inside every paragraph, all paragraphs at once (000/001 Eq. 8).

``X_p^word = MultiHead(X^I, C_p, C_p)`` for every paragraph p: one softmax per paragraph over its
tokens. The queries are projected once (``T x B x C``) and scored against the keys of all
paragraphs in one einsum (``B x H x T x P x L``), so nothing of size ``T x B x P x C`` is built
for the queries. Two read-outs:

- per-paragraph contexts ``T x B x P x C`` (VHT's dynamic paragraph embeddings, Eq. 11);
- fused with paragraph weights ``A^para`` (PHT Eq. 9): ``X^int = sum_p A_p X_p^word``. Since
  ``sum_p A_p = 1`` and the output projection is affine, this equals one attention over all
  ``P*L`` words with weights ``A_p * alpha_{p,l}``, computed without materialising the
  ``T x B x P x C`` per-paragraph contexts (the memory saving that makes PHT cheap).

The module is fairseq's MultiheadAttention (same parameters, incremental cache, reorder); the
cache holds the projected keys/values as ``B x H x P x L x D`` (batch first, so fairseq's own
``reorder_incremental_state`` applies).

Legend: T target steps, B batch, P paragraphs, L tokens, C model dim, H heads, D = C / H.
Mask convention: True = padding.
"""

from typing import Dict, Optional, Tuple

import torch
import torch.nn.functional as F
from fairseq.modules import MultiheadAttention
from torch import Tensor

IncrementalState = Optional[Dict[str, Dict[str, Optional[Tensor]]]]


def word_attention_mask(padding_mask: Tensor) -> Tensor:
    """``B x P x L`` token padding mask with position 0 of absent paragraphs unmasked, so that
    their softmax is defined; callers give those paragraphs exactly zero paragraph weight."""
    absent = padding_mask.all(dim=-1, keepdim=True)  # B x P x 1
    first = torch.zeros_like(padding_mask)
    first[..., 0] = True
    return padding_mask & ~(absent & first)


class ParagraphWordAttention(MultiheadAttention):
    """Multi-head attention of decoder states over the words of each paragraph separately."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0):
        super().__init__(embed_dim, num_heads, dropout=dropout, encoder_decoder_attention=True)

    def forward(self, query: Tensor, words: Tensor, padding_mask: Tensor,
                paragraph_weights: Optional[Tensor] = None,
                incremental_state: IncrementalState = None) -> Tensor:
        """query: ``T x B x C``; words: ``L x B x P x C``; padding_mask: ``B x P x L``;
        paragraph_weights: ``B x T x P`` or None.

        Returns ``T x B x C`` (fused with the paragraph weights, PHT) when weights are given,
        else ``T x B x P x C`` (one context per paragraph, VHT)."""
        t, b, c = query.shape
        probs, v = self._word_probs(query, words, padding_mask, incremental_state)
        if paragraph_weights is None:
            ctx = torch.einsum("bhtpl,bhpld->tbphd", probs, v)  # T x B x P x H x D
            return self.out_proj(ctx.reshape(t, b, -1, c))  # -> T x B x P x C
        weights = probs * paragraph_weights.to(probs).unsqueeze(1).unsqueeze(-1)  # B x H x T x P x L
        ctx = torch.einsum("bhtpl,bhpld->tbhd", weights, v)  # T x B x H x D
        return self.out_proj(ctx.reshape(t, b, c))  # Eq. 9 -> T x B x C

    def _word_probs(self, query, words, padding_mask, incremental_state) -> Tuple[Tensor, Tensor]:
        """Softmax within each paragraph: probs ``B x H x T x P x L`` and values ``B x H x P x L x D``."""
        t, b, c = query.shape
        q = (self.q_proj(query) * self.scaling).view(t, b, self.num_heads, self.head_dim)
        k, v = self._keys_values(words, incremental_state)
        scores = torch.einsum("tbhd,bhpld->bhtpl", q, k)  # B x H x T x P x L
        mask = word_attention_mask(padding_mask)[:, None, None]  # B x 1 x 1 x P x L
        scores = scores.masked_fill(mask, float("-inf"))
        probs = F.softmax(scores.float(), dim=-1).type_as(scores)
        return self.dropout_module(probs), v

    def _keys_values(self, words: Tensor, incremental_state: IncrementalState):
        """Project the word states once per source (cached for incremental decoding)."""
        cache = self._get_input_buffer(incremental_state) if incremental_state is not None else {}
        if cache.get("prev_key") is not None:
            return cache["prev_key"], cache["prev_value"]
        l, b, p, _ = words.shape
        # L x B x P x C -> L x B x P x H x D -> B x H x P x L x D
        k = self.k_proj(words).view(l, b, p, self.num_heads, self.head_dim).permute(1, 3, 2, 0, 4)
        v = self.v_proj(words).view(l, b, p, self.num_heads, self.head_dim).permute(1, 3, 2, 0, 4)
        if incremental_state is not None:
            cache["prev_key"], cache["prev_value"] = k, v
            self._set_input_buffer(incremental_state, cache)
        return k, v
