"""Decoder layers of the parallel and vertical hierarchical Transformers (Ma & Zong 2020, 000).

``PHTDecoderLayer`` and ``VHTDecoderLayer`` reuse fairseq's ``TransformerDecoderLayerBase`` for
the masked self-attention; their word- and paragraph-level attention and how they are fused:
docs/models.md, section fairseq_hier.modules.hierarchical_decoder_layer.

Legend: T target steps, B batch (x beam), P paragraphs, L tokens per paragraph, C model dim.
Masks: True = padding / absent paragraph. Imports ``modules``, ``errors``; torch, fairseq.
"""

from typing import Dict, Optional, Tuple

from fairseq.modules import LayerNorm, MultiheadAttention
from fairseq.modules.transformer_layer import TransformerDecoderLayerBase
from torch import Tensor

from ..errors import HierError
from .paragraph_attention import ParagraphWordAttention
from .rank_encoding import RankEncoding

IncrementalState = Optional[Dict[str, Dict[str, Optional[Tensor]]]]
DYNAMIC_EMBEDDINGS = ("paper", "authors")


class _HierarchicalDecoderLayer(TransformerDecoderLayerBase):
    """Shared parts I and III and the two cross attentions; subclasses wire part II in
    :meth:`cross_attention`."""

    def __init__(self, cfg):
        super().__init__(cfg, no_encoder_attn=True)
        heads, dropout = cfg.decoder.attention_heads, cfg.attention_dropout
        self.word_attn = ParagraphWordAttention(self.embed_dim, heads, dropout=dropout)
        self.paragraph_attn = MultiheadAttention(self.embed_dim, heads, dropout=dropout,
                                                 encoder_decoder_attention=True)
        self.cross_attn_layer_norm = LayerNorm(self.embed_dim)

    def forward(self, x: Tensor, encoder_out: Dict[str, list], incremental_state: IncrementalState,
                self_attn_mask: Optional[Tensor], self_attn_padding_mask: Optional[Tensor]
                ) -> Tuple[Tensor, Tensor]:
        """x: ``T x B x C`` -> (``T x B x C``, paragraph attention ``B x T x P``)."""
        # part I: masked self-attention
        residual = x
        x, _ = self.self_attn(query=x, key=x, value=x, key_padding_mask=self_attn_padding_mask,
                              incremental_state=incremental_state, need_weights=False,
                              attn_mask=self_attn_mask)
        x = self.self_attn_layer_norm(residual + self.dropout_module(x))
        # part II: hierarchical cross attention
        x, paragraph_attn = self.cross_attention(x, encoder_out, incremental_state)
        # part III: feed-forward
        residual = x
        x = self.activation_fn(self.fc1(x))
        x = self.fc2(self.activation_dropout_module(x))
        x = self.final_layer_norm(residual + self.dropout_module(x))
        return x, paragraph_attn

    def word_context(self, x: Tensor, encoder_out: Dict[str, list],
                     incremental_state: IncrementalState,
                     paragraph_weights: Optional[Tensor] = None) -> Tensor:
        """Word-level attention inside every paragraph (Eq. 8): ``T x B x C`` -> ``T x B x P x C``,
        or ``T x B x C`` fused with ``paragraph_weights`` (``B x T x P``, Eq. 9)."""
        rows = encoder_out.get("word_rows") or [None]  # B indices into the encoder's batch
        return self.word_attn(x, encoder_out["encoder_out"][0],  # L x B0 x P x C
                              encoder_out["encoder_padding_mask"][0],  # B x P x L
                              word_rows=rows[0], paragraph_weights=paragraph_weights,
                              incremental_state=incremental_state)

    def cross_attention(self, x, encoder_out, incremental_state):
        raise NotImplementedError


class PHTDecoderLayer(_HierarchicalDecoderLayer):
    """Parallel hierarchical decoder layer (000 Eq. 7-10)."""

    def cross_attention(self, x, encoder_out, incremental_state):
        paragraphs = encoder_out["paragraph_out"][0]  # P x B x C, ranking encoding included
        # Eq. 7: X^para (T x B x C), A^para (B x T x P, heads averaged; absent paragraphs -> 0)
        x_para, a_para = self.paragraph_attn(
            query=x, key=paragraphs, value=paragraphs,
            key_padding_mask=encoder_out["paragraph_padding_mask"][0],
            incremental_state=incremental_state, static_kv=True, need_weights=True)
        # Eq. 8-9: word-level attention per paragraph, fused by A^para -> T x B x C
        x_int = self.word_context(x, encoder_out, incremental_state, paragraph_weights=a_para)
        x = self.cross_attn_layer_norm(x + self.dropout_module(x_para + x_int))  # Eq. 10
        return x, a_para


class VHTDecoderLayer(_HierarchicalDecoderLayer):
    """Vertical hierarchical decoder layer (000 Eq. 11-13)."""

    def __init__(self, cfg, dynamic_embedding: str = "paper"):
        super().__init__(cfg)
        if dynamic_embedding not in DYNAMIC_EMBEDDINGS:
            raise HierError(f"dynamic_embedding must be one of {DYNAMIC_EMBEDDINGS}, "
                            f"got {dynamic_embedding!r}")
        self.rank_encoding = RankEncoding(self.embed_dim)
        self.dynamic_layer_norm = None
        if dynamic_embedding == "authors":
            self.dynamic_layer_norm = LayerNorm(self.embed_dim)

    def dynamic_paragraph_embeddings(self, x: Tensor, x_word: Tensor) -> Tensor:
        """Eq. 11: ``X_t^word + R`` (paper), or ``LayerNorm(X_t^I + Dropout(X_t^word + R))``
        (authors' code). x: ``T x B x C``; x_word: ``T x B x P x C`` -> ``T x B x P x C``."""
        dynamic = x_word + self.rank_encoding(x_word.size(2)).to(x_word)  # R: P x C
        if self.dynamic_layer_norm is None:
            return dynamic
        return self.dynamic_layer_norm(x.unsqueeze(2) + self.dropout_module(dynamic))

    def cross_attention(self, x, encoder_out, incremental_state):
        t, b, c = x.shape
        x_word = self.word_context(x, encoder_out, incremental_state)  # T x B x P x C
        p = x_word.size(2)
        dynamic = self.dynamic_paragraph_embeddings(x, x_word)  # Eq. 11
        # Eq. 12: one paragraph attention per target step: queries 1 x (T*B) x C,
        # keys T x B x P x C -> P x (T*B) x C; no cache, the keys change at every step
        keys = dynamic.permute(2, 0, 1, 3).reshape(p, t * b, c)
        absent = encoder_out["paragraph_padding_mask"][0]  # B x P
        x_para, a_para = self.paragraph_attn(
            query=x.reshape(1, t * b, c), key=keys, value=keys,
            key_padding_mask=absent.unsqueeze(0).expand(t, b, p).reshape(t * b, p),
            need_weights=True)
        x_para = x_para.view(t, b, c)  # 1 x (T*B) x C -> T x B x C
        a_para = a_para.view(t, b, p).transpose(0, 1)  # (T*B) x 1 x P -> B x T x P
        x = self.cross_attn_layer_norm(x + self.dropout_module(x_para))  # Eq. 13
        return x, a_para
