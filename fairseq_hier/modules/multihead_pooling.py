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

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.modules import FairseqDropout, LayerNorm


def attention_pool(scores: torch.Tensor, values: torch.Tensor, padding_mask: torch.Tensor
                   ) -> torch.Tensor:
    """Per-head weighted pooling of a paragraph's tokens: ``softmax_l(scores) . values``.

    The one definition of attention pooling shared by 000 Eq. 3 (PHT's paragraph embeddings) and
    002 Eq. 15 with the sum of Eq. 16 (Liu & Lapata's multi-head pooling): the models differ in
    how they compute ``scores`` and ``values`` and in what follows, not in this step. The softmax
    runs in float32 (as fairseq's attention does).

    Args:
        scores: ``N x H x L`` unnormalised scores; values: ``L x N x H x D``;
        padding_mask: ``N x L``, True = padding (every row needs >= 1 real token).
    Returns ``N x H x D``.
    """
    scores = scores.masked_fill(padding_mask.unsqueeze(1), float("-inf"))
    weights = F.softmax(scores.float(), dim=-1).type_as(values)  # N x H x L
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
            raise ValueError(f"embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
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
        heads = self.w1(x).view(seq_len, n, self.num_heads, self.head_dim)  # L x N x H x D
        scores = torch.einsum("lnhd,hd->nhl", heads, self.head_query)  # N x H x L
        pooled = attention_pool(scores, heads, padding_mask).reshape(n, c)  # N x H x D -> N x C
        phi = self.w3(pooled)  # Eq. 4
        ffn = self.fc2(self.activation_dropout(F.relu(self.fc1(phi))))
        return self.layer_norm(phi + self.dropout(ffn))  # Eq. 5
