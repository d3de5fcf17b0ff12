"""Multi-head attention pooling: paragraph embeddings from context-aware word embeddings.

Ma & Zong 2020 (000) Eq. 2-5, Chaudhary (001) Eq. 2-5:

    head_p^i = HeadSplit(C_p W_1)                       (2)
    phi_p^i  = Softmax(head_p^i w_2^i)^T head_p^i       (3)
    phi_p    = W_3 [phi_p^0; phi_p^1; ...]              (4)
    phi_p   := LayerNorm(phi_p + FFN(phi_p))            (5)

Reading chosen: the PDF gives W_2 in R^{d_head x 1} without a head index; the authors' code
(yema2018/wiki_sum, sen_encoder.AttLayer) learns one query vector per head, so ``w_2^i`` is
per head here (a strict generalisation; one shared vector is the special case).

Legend: N paragraphs (B*P folded), L tokens, C model dim, H heads, D = C / H.
Mask convention (fairseq): True = padding.
"""

import contextlib
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.modules import FairseqDropout, LayerNorm

from .masking import masked_softmax
from .recompute import rebuilt_for_backward
from ..errors import HierError


def attention_pool(scores: Optional[torch.Tensor], values: torch.Tensor,
                   padding_mask: torch.Tensor, query: Optional[torch.Tensor] = None,
                   fused: bool = True, rebuild_values=None) -> torch.Tensor:
    """Per-head weighted pooling of a paragraph's tokens: ``softmax_l(scores) . values``.

    The one definition of attention pooling shared by 000 Eq. 3 (PHT's paragraph embeddings) and
    002 Eq. 15 with the sum of Eq. 16 (Liu & Lapata's multi-head pooling): the models differ in
    how they compute ``scores`` and ``values`` and in what follows, not in this step. The softmax
    runs in float32 (as fairseq's attention does), masks as in :mod:`..masking`.

    The scores are given (002: ``W_a x``), or are ``values . query`` (000 Eq. 3: one learned
    query per head over the heads themselves, ``scores`` None). In the latter case the pooling is
    one call of torch's ``scaled_dot_product_attention`` (``fused``; flash kernel, no stored
    ``N x H x L`` weights); ``fused=False`` writes it out (reference for the equality tests).

    Args:
        scores: ``N x H x L`` unnormalised scores, or None with ``query``;
        values: ``L x N x H x D``; padding_mask: ``N x L``, True = padding (every row needs
        >= 1 real token); query: ``H x D``, the scores' query when ``scores`` is None;
        rebuild_values: None, or a function returning ``values`` again, which the fused path
        calls in backward instead of keeping them (:mod:`..recompute`).
    Returns ``N x H x D``.
    """
    seq_len, n, h, d = values.shape
    if scores is None and fused:
        q = query.view(1, h, 1, d).expand(n, h, 1, d).to(values)  # N x H x 1 x D
        kv = values.permute(1, 2, 0, 3)  # L x N x H x D -> N x H x L x D
        keep = ~padding_mask.view(n, 1, 1, seq_len)  # N x 1 x 1 x L, True = attended
        kept = contextlib.nullcontext() if rebuild_values is None else rebuilt_for_backward(
            kv, lambda: rebuild_values().permute(1, 2, 0, 3))
        with kept:
            out = F.scaled_dot_product_attention(q, kv, kv, attn_mask=keep, scale=1.0)
        return out.view(n, h, d)  # N x H x 1 x D -> N x H x D
    if scores is None:
        scores = torch.einsum("lnhd,hd->nhl", values, query.to(values))  # N x H x L
    weights = masked_softmax(scores, padding_mask.unsqueeze(1)).type_as(values)  # N x H x L
    return torch.einsum("nhl,lnhd->nhd", weights, values)


class MultiHeadPooling(nn.Module):
    """Pool ``L x N x C`` token states into ``N x C`` paragraph embeddings (Eq. 2-5).

    Args:
        embed_dim: C; num_heads: H; ffn_dim: hidden size of the FFN of Eq. 5;
        dropout: dropout on the FFN output and inside it (the papers' per-sublayer dropout).
    """

    def __init__(self, embed_dim: int, num_heads: int, ffn_dim: int, dropout: float,
                 activation_dropout: float = 0.0):
        super().__init__()
        if embed_dim % num_heads != 0:
            raise HierError(f"embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        self.fused = True  # False: the written-out reference of attention_pool (tests)
        self.w1 = nn.Linear(embed_dim, embed_dim)  # Eq. 2
        self.head_query = nn.Parameter(torch.empty(num_heads, self.head_dim))  # Eq. 3 (w_2^i)
        self.w3 = nn.Linear(embed_dim, embed_dim)  # Eq. 4
        self.fc1 = nn.Linear(embed_dim, ffn_dim)  # Eq. 5
        self.fc2 = nn.Linear(ffn_dim, embed_dim)
        self.layer_norm = LayerNorm(embed_dim)
        self.dropout = FairseqDropout(dropout, module_name=self.__class__.__name__)
        self.activation_dropout = FairseqDropout(activation_dropout, module_name=self.__class__.__name__)
        nn.init.xavier_uniform_(self.w1.weight)
        nn.init.xavier_uniform_(self.w3.weight)
        nn.init.normal_(self.head_query, std=self.head_dim ** -0.5)

    def forward(self, x: torch.Tensor, padding_mask: torch.Tensor) -> torch.Tensor:
        """x: ``L x N x C`` token states; padding_mask: ``N x L`` (True = pad, >= 1 real token
        per row). Returns ``N x C`` paragraph embeddings."""
        seq_len, n, c = x.shape
        def project():  # Eq. 2: L x N x C -> L x N x H x D
            return self.w1(x).view(seq_len, n, self.num_heads, self.head_dim)

        # Eq. 3: scores = heads . w_2 per head; N x H x D -> N x C. The heads are rebuilt in
        # backward (one more L x N x C linear map) instead of kept: x is kept anyway
        pooled = attention_pool(None, project(), padding_mask, query=self.head_query,
                                fused=self.fused, rebuild_values=project).reshape(n, c)
        phi = self.w3(pooled)  # Eq. 4
        ffn = self.fc2(self.activation_dropout(F.relu(self.fc1(phi))))
        return self.layer_norm(phi + self.dropout(ffn))  # Eq. 5
