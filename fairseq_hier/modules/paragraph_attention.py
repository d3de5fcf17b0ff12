"""Word-level cross attention run for every paragraph at once (000 Eq. 8, 001 Eq. 8).

The decoder queries (``T x B x C``) are tiled over paragraphs and folded into the batch axis,
``T x (B*P) x C``, against the word states of each paragraph, ``L x (B*P) x C``: one call of
fairseq's MultiheadAttention computes ``X_p^word`` for all p, with a softmax inside each
paragraph (as the papers define it), and no Python loop over paragraphs.

The incremental-decoding cache therefore has a ``B*P`` batch axis; fairseq's reorder would index
it with a ``B``-sized beam order, so :meth:`reorder_incremental_state` expands the order to
paragraphs.
"""

from typing import Dict, Optional

import torch
from fairseq.modules import MultiheadAttention
from torch import Tensor

_FOLDS = "num_paragraphs"


def fold_queries(x: Tensor, num_paragraphs: int) -> Tensor:
    """``T x B x C`` -> ``T x (B*P) x C``: each example's queries repeated for its P paragraphs."""
    t, b, c = x.shape
    return x.unsqueeze(2).expand(t, b, num_paragraphs, c).reshape(t, b * num_paragraphs, c)


def word_attention_mask(padding_mask: Tensor) -> Tensor:
    """``B x P x L`` token padding mask -> ``(B*P) x L`` key mask for :class:`ParagraphWordAttention`.

    Absent paragraphs (all padding) keep position 0 unmasked so their softmax is defined; the
    callers give those paragraphs exactly zero paragraph weight, so they contribute nothing.
    """
    b, p, l = padding_mask.shape
    mask = padding_mask.reshape(b * p, l).clone()
    absent = mask.all(dim=1)
    mask[absent, 0] = False
    return mask


class ParagraphWordAttention(MultiheadAttention):
    """fairseq MultiheadAttention whose cache lives on the paragraph-folded batch axis."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, q_noise=0.0, qn_block_size=8):
        super().__init__(embed_dim, num_heads, kdim=embed_dim, vdim=embed_dim, dropout=dropout,
                         encoder_decoder_attention=True, q_noise=q_noise,
                         qn_block_size=qn_block_size)

    def forward(self, query: Tensor, key: Optional[Tensor], value: Optional[Tensor],
                key_padding_mask: Optional[Tensor], num_paragraphs: int,
                incremental_state: Optional[Dict[str, Dict[str, Optional[Tensor]]]] = None):
        """query ``T x (B*P) x C``; key/value ``L x (B*P) x C``; key_padding_mask ``(B*P) x L``.
        Returns ``T x (B*P) x C``. The cache remembers P: when beams finish, fairseq shrinks the
        batch, so P cannot be recovered from the sizes at reorder time."""
        out, _ = super().forward(query, key, value, key_padding_mask=key_padding_mask,
                                 incremental_state=incremental_state, static_kv=True,
                                 need_weights=False)
        if incremental_state is not None:
            buffer = self._get_input_buffer(incremental_state)
            buffer[_FOLDS] = torch.tensor([num_paragraphs])
            self._set_input_buffer(incremental_state, buffer)
        return out

    @torch.jit.export
    def reorder_incremental_state(
        self, incremental_state: Dict[str, Dict[str, Optional[Tensor]]], new_order: Tensor
    ):
        """Reorder the cached keys/values (``(B*P) x H x L x D``) by a beam order over B."""
        buffer = self._get_input_buffer(incremental_state)
        if buffer is not None and _FOLDS in buffer:
            folds = int(buffer[_FOLDS][0])  # P
            offsets = torch.arange(folds, device=new_order.device)
            order = (new_order.unsqueeze(1) * folds + offsets).view(-1)  # B' -> (B'*P)
            for k in buffer.keys():
                if k != _FOLDS and buffer[k] is not None:
                    buffer[k] = buffer[k].index_select(0, order)
            incremental_state = self._set_input_buffer(incremental_state, buffer)
        return incremental_state

    def set_beam_size(self, beam_size):
        """fairseq's "beamable" attention assumes one cache row per example; ours has B*P rows."""
