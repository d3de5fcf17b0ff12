"""Ranking encoding R (000 Eq. 6 and Eq. 11): the sinusoidal positional encoding of Vaswani et al.
applied to paragraph ranks 1..P, so models accept more paragraphs at test time than in training."""

import torch
import torch.nn as nn
from fairseq.modules import SinusoidalPositionalEmbedding


class RankEncoding(nn.Module):
    """Returns ``P x C`` sinusoidal encodings of ranks 1..P (rank 1 = top-ranked paragraph)."""

    def __init__(self, embed_dim: int, init_size: int = 128):
        super().__init__()
        self.embed_dim = embed_dim
        self.register_buffer("table", self._table(init_size), persistent=False)

    def _table(self, size: int) -> torch.Tensor:
        # row 0 is unused so that row r encodes rank r
        return SinusoidalPositionalEmbedding.get_embedding(size + 1, self.embed_dim)

    def forward(self, num_paragraphs: int) -> torch.Tensor:
        if num_paragraphs + 1 > self.table.size(0):
            self.table = self._table(num_paragraphs).to(self.table)
        return self.table[1 : num_paragraphs + 1]
