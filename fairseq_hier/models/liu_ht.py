"""Liu & Lapata's Hierarchical Transformer for multi-document summarisation (paper 002), ``liu_ht``.

Local and global encoder layers over ranked paragraphs (002 Sec. 3.2, graph-informed attention
with the task's ``--paragraph-graph``) and a decoder over the flat memory of the kept tokens;
the equations and the readings chosen: docs/models.md, section fairseq_hier.models.liu_ht.

Legend: B batch, P paragraphs, L tokens per paragraph, N present paragraphs (rows of B*P),
S flat memory length, T target steps, C model dim, H heads, D = C / H.
Masks: True = padding / absent paragraph. Imports ``modules``, ``data``, ``compat``, ``errors``;
torch, fairseq.
"""

import argparse
import logging
from dataclasses import dataclass, field, fields
from typing import Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.models import (
    FairseqEncoder,
    FairseqEncoderDecoderModel,
    register_model,
    register_model_architecture,
)
from fairseq.models.transformer import (
    Embedding,
    TransformerConfig,
    TransformerDecoderBase,
)
from fairseq.modules import FairseqDropout, LayerNorm
from fairseq.modules.transformer_layer import TransformerEncoderLayerBase
from torch import Tensor

from ..errors import HierError
from ..modules.masking import masked_softmax
from ..modules.multihead_pooling import attention_pool
from ..modules.rank_encoding import RankEncoding
from .checkpointing import ActivationCheckpointConfig, checkpoint_layer, checkpoints_activations
from .hierarchical_transformer import config_from_args, fill_defaults
from .option_checks import check_model_options

logger = logging.getLogger(__name__)


@dataclass
class LiuHTConfig(ActivationCheckpointConfig):
    """Defaults are 002's settings (Sec. 4, "Training Configuration" and "Comparison Systems");
    with ``--checkpoint-activations`` (inherited) for every layer."""

    encoder_embed_dim: int = field(default=256, metadata={"help": "model dimension d (002: 256)"})
    encoder_ffn_embed_dim: int = field(default=1024, metadata={"help": "FFN hidden size "
                                                                       "(002: 1024)"})
    encoder_layers: int = field(default=7, metadata={"help": "encoder layers, local and global "
                                                             "(002: 7)"})
    global_layers: str = field(
        default="5,6", metadata={"help": "comma-separated 0-based indices of the global layers "
                                         "(002: the top 2 of 7; hiersumm's -inter_layers); the "
                                         "others are local"})
    encoder_attention_heads: int = field(default=8, metadata={"help": "heads of the local "
                                                                      "self-attention (002: 8)"})
    global_heads: int = field(
        default=8, metadata={"help": "heads of multi-head pooling and inter-paragraph attention "
                                     "(n_head of Eq. 13-21); 1 = 002 Table 3's 'w/o MP'"})
    decoder_embed_dim: int = field(default=256, metadata={"help": "decoder dimension (= encoder)"})
    decoder_ffn_embed_dim: int = field(default=1024, metadata={"help": "decoder FFN hidden size"})
    decoder_layers: int = field(
        default=6, metadata={"help": "decoder layers (002 gives none; 6 as Vaswani et al.'s "
                                     "Transformer, which 002's decoder follows; hiersumm's "
                                     "code: 1)"})
    decoder_attention_heads: int = field(default=8, metadata={"help": "decoder attention heads"})
    dropout: float = field(default=0.1, metadata={"help": "dropout on every sub-layer output "
                                                          "(002: 0.1 before all linear layers)"})
    attention_dropout: float = field(
        default=0.1, metadata={"help": "dropout on attention weights (the input of the attention "
                                       "output projection: 002's 'before all linear layers')"})
    activation_dropout: float = field(
        default=0.1, metadata={"help": "dropout inside every FFN (before its second linear layer)"})
    no_paragraph_position: bool = field(
        default=False, metadata={"help": "002 Table 3 'w/o PP': no paragraph-rank half in the "
                                         "positional embedding (all d dimensions for the token "
                                         "position)"})
    graph_head: int = field(
        default=0, metadata={"help": "with the task's --paragraph-graph: the head of every global "
                                     "layer whose weights are the graph's (Eq. 24)"})
    graph_attention: bool = field(
        default=False, metadata={"help": "Eq. 24 is on (set by the task from --paragraph-graph; "
                                         "recorded in checkpoints)"})
    no_scale_embedding: bool = field(default=False, metadata={"help": "do not scale embeddings "
                                                                      "by sqrt(d)"})
    max_source_positions: int = field(
        default=1024, metadata={"help": "max tokens per paragraph (sinusoidal positions: longer "
                                        "paragraphs work at test time)"})
    max_target_positions: int = field(default=1024, metadata={"help": "max target length"})


def global_layer_indices(cfg: LiuHTConfig) -> List[int]:
    """``--global-layers`` parsed and checked against ``--encoder-layers``."""
    text = str(cfg.global_layers).strip()
    try:
        indices = sorted({int(i) for i in text.split(",") if i.strip()}) if text else []
    except ValueError:
        raise HierError(f"--global-layers must be comma-separated layer indices, got {text!r}")
    bad = [i for i in indices if not 0 <= i < cfg.encoder_layers]
    if bad:
        last = cfg.encoder_layers - 1
        raise HierError(f"--global-layers {text}: indices {bad} are outside 0..{last}"
                        f" (--encoder-layers {cfg.encoder_layers})")
    return indices


def fairseq_transformer_config(cfg: LiuHTConfig) -> TransformerConfig:
    """fairseq's TransformerConfig for the reused local layers and decoder (built from a
    namespace, never as a bare ``TransformerConfig()``)."""
    ns = argparse.Namespace(**{f.name: getattr(cfg, f.name) for f in fields(cfg)})
    ns.share_all_embeddings = ns.share_decoder_input_output_embed = True  # hiersumm shares all
    ns.encoder_learned_pos = ns.decoder_learned_pos = False  # sinusoidal (Eq. 7-8)
    ns.encoder_normalize_before = ns.decoder_normalize_before = False  # post-LN, Eq. 11-12
    ns.activation_fn = "relu"
    ns.decoder_input_dim = ns.decoder_output_dim = cfg.decoder_embed_dim  # as fairseq's presets set
    ns.checkpoint_activations = checkpoints_activations(cfg)  # fairseq's decoder layers too
    return TransformerConfig.from_namespace(ns)


def graph_weights(graph: Tensor, present: Tensor) -> Tensor:
    """Eq. 24's attention weights from an external graph: ``G_ii' / sum_o G_io`` over the
    present paragraphs.

    A paragraph whose row has no edge to any present paragraph (an ADG node without shared
    entities, a paragraph without terms) would divide by zero; it attends to itself instead (our
    choice: its context is its own value, as if G had a self-loop there). Absent paragraphs get
    exactly zero weight. Weights must be non-negative (tf-idf cosines, entity counts).

    Args: graph ``B x P x P``; present ``B x P``. Returns ``B x P x P`` rows summing to 1."""
    g = graph.float().masked_fill(~present.unsqueeze(1), 0.0)  # absent columns
    eye = torch.eye(g.size(-1), dtype=g.dtype, device=g.device).unsqueeze(0)
    g = torch.where(g.sum(-1, keepdim=True) > 0, g, eye)
    return g / g.sum(-1, keepdim=True)


class GlobalTransformerLayer(nn.Module):
    """002's global transformer layer (Eq. 13-23), optionally graph-informed (Eq. 24).

    Readings of the garbled PDF formulas:
    - Eq. 13-16: a^z = W_a^z x (one score per token and head), b^z = W_b^z x (``D`` values per
      head), alpha^z = softmax over the paragraph's tokens, head^z = LayerNorm(W_c^z sum_j
      alpha^z_j b^z_j) with ``W_c^z`` a ``D x D`` matrix per head and one LayerNorm over ``D``
      shared by the heads (hiersumm's ``layer_norm2``);
    - Eq. 17-20: per head, q/k/v = W^z head^z with ``D x D`` matrices *per head* (the paper's
      ``W_q^z``; hiersumm shares one across heads), scores scaled by 1/sqrt(D) as in Vaswani et
      al. and hiersumm (the PDF shows none), absent paragraphs masked;
    - Eq. 21-23: c_i = W_c [context^1; ...; context^H] added to every token of paragraph i,
      g = W_o2 ReLU(W_o1 (x + c)), x' = LayerNorm(g + x) (the residual is x, not x + c, as
      written). Dropout on c and g and inside the FFN (002: "before all linear layers").
    """

    def __init__(self, embed_dim: int, num_heads: int, ffn_dim: int, dropout: float,
                 activation_dropout: float, graph_head: Optional[int] = None):
        super().__init__()
        if embed_dim % num_heads != 0:
            raise HierError(f"embed_dim {embed_dim} must be divisible by --global-heads "
                            f"{num_heads}")
        if graph_head is not None and not 0 <= graph_head < num_heads:
            raise HierError(f"--graph-head {graph_head} must be in 0..{num_heads - 1} "
                            f"(--global-heads {num_heads})")
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        self.graph_head = graph_head
        h, d = num_heads, self.head_dim
        self.pool_scores = nn.Linear(embed_dim, h)  # Eq. 13: W_a^z for all z
        self.pool_values = nn.Linear(embed_dim, embed_dim)  # Eq. 14: W_b^z for all z
        self.pool_proj = nn.Parameter(torch.empty(h, d, d))  # Eq. 16: W_c^z
        self.head_norm = LayerNorm(d)  # Eq. 16
        self.qkv = nn.Parameter(torch.empty(h, d, 3 * d))  # Eq. 17-19: [W_q^z W_k^z W_v^z]
        self.context_proj = nn.Linear(embed_dim, embed_dim)  # Eq. 21: W_c
        self.fc1 = nn.Linear(embed_dim, ffn_dim)  # Eq. 22: W_o1
        self.fc2 = nn.Linear(ffn_dim, embed_dim)  # Eq. 22: W_o2
        self.final_norm = LayerNorm(embed_dim)  # Eq. 23
        self.dropout = FairseqDropout(dropout, module_name=self.__class__.__name__)
        self.activation_dropout = FairseqDropout(activation_dropout,
                                                 module_name=self.__class__.__name__)
        for w in (self.pool_proj, self.qkv):
            nn.init.xavier_uniform_(w.view(h * d, -1))

    def forward(self, x: Tensor, padding_mask: Tensor, rows: Tensor, present: Tensor,
                graph: Optional[Tensor] = None) -> Tensor:
        """x: ``L x N x C`` tokens of the N present paragraphs; padding_mask: ``N x L``;
        rows: ``N`` indices of those paragraphs in ``B*P``; present: ``B x P``;
        graph: ``B x P x P`` or None. Returns ``L x N x C``."""
        heads = self._pool_paragraphs(x, padding_mask)  # N x H x D
        context = self._inter_paragraph_attention(heads, rows, present, graph)  # N x C
        c = self.dropout(self.context_proj(context))  # Eq. 21
        g = self.fc2(self.activation_dropout(F.relu(self.fc1(x + c.unsqueeze(0)))))  # Eq. 22
        return self.final_norm(self.dropout(g) + x)  # Eq. 23

    def _pool_paragraphs(self, x: Tensor, padding_mask: Tensor) -> Tensor:
        """Multi-head pooling, Eq. 13-16: ``L x N x C`` -> ``N x H x D``."""
        seq_len, n, _ = x.shape
        scores = self.pool_scores(x).permute(1, 2, 0)  # L x N x H -> N x H x L
        values = self.pool_values(x).view(seq_len, n, self.num_heads, -1)  # L x N x H x D
        pooled = attention_pool(scores, values, padding_mask)  # N x H x D
        return self.head_norm(torch.einsum("nhd,hde->nhe", pooled, self.pool_proj))

    def _inter_paragraph_attention(self, heads: Tensor, rows: Tensor, present: Tensor,
                                   graph: Optional[Tensor]) -> Tensor:
        """Eq. 17-20 (24 for the graph head): ``N x H x D`` -> concatenated contexts ``N x C``."""
        b, p = present.shape
        h, d = self.num_heads, self.head_dim
        # N x H x D -> (B*P) x H x D (absent paragraphs: zeros, masked as keys below)
        full = heads.new_zeros(b * p, h, d).index_copy(0, rows, heads).view(b, p, h, d)
        q, k, v = torch.einsum("bphd,hde->bhpe", full, self.qkv).split(d, dim=-1)  # B x H x P x D
        scores = torch.einsum("bhpd,bhqd->bhpq", q, k) * d ** -0.5  # B x H x P x P
        # Eq. 20 over the present paragraphs (finite fill, float32: every example has one)
        weights = masked_softmax(scores, ~present.view(b, 1, 1, p))  # B x H x P x P
        if graph is not None and self.graph_head is not None:
            weights = torch.cat([weights[:, : self.graph_head],
                                 graph_weights(graph, present).unsqueeze(1),  # Eq. 24
                                 weights[:, self.graph_head + 1:]], dim=1)
        context = torch.einsum("bhpq,bhqd->bphd", weights.type_as(v), v)  # B x P x H x D
        return context.reshape(b * p, h * d).index_select(0, rows)  # (B*P) x C -> N x C


class LiuHTEncoder(FairseqEncoder):
    """Embeddings, local and global layers over present paragraphs, flat memory for the decoder.

    Output dict (fairseq style, lists of tensors; :meth:`reorder_encoder_out` selects examples):
        encoder_out             [S x B x C]  all kept tokens of an example, paragraphs in rank
                                             order, padding removed, re-padded to the longest
        encoder_padding_mask    [B x S]
        paragraph_padding_mask  [B x P]      True = absent paragraph
    """

    def __init__(self, cfg: TransformerConfig, liu_cfg: LiuHTConfig, dictionary, embed_tokens):
        super().__init__(dictionary)
        c = cfg.encoder.embed_dim
        if c % 2:
            raise HierError(f"--encoder-embed-dim {c} must be even (split positional embedding)")
        self.padding_idx = embed_tokens.padding_idx
        self.embed_tokens = embed_tokens
        self.embed_scale = 1.0 if cfg.no_scale_embedding else c ** 0.5
        self.paragraph_position = not liu_cfg.no_paragraph_position
        half = c // 2 if self.paragraph_position else c
        self.token_position = RankEncoding(half)  # e_j, positions 1..L (parameter-free)
        self.rank_position = RankEncoding(c - half) if self.paragraph_position else None  # e_i
        self.dropout_module = FairseqDropout(cfg.dropout, module_name=self.__class__.__name__)
        self.global_indices = set(global_layer_indices(liu_cfg))
        graph_head = liu_cfg.graph_head if liu_cfg.graph_attention else None
        self.graph_attention = bool(liu_cfg.graph_attention)
        if self.graph_attention and not self.global_indices:
            raise HierError("graph-informed attention (--paragraph-graph) needs at least one "
                            "global layer (--global-layers)")
        # --checkpoint-activations: every layer, local or global, recomputed in the backward pass
        self.layers = nn.ModuleList([checkpoint_layer(
            GlobalTransformerLayer(c, liu_cfg.global_heads, cfg.encoder.ffn_embed_dim, cfg.dropout,
                                   cfg.activation_dropout, graph_head)
            if i in self.global_indices else self.build_local_layer(cfg), cfg)
            for i in range(liu_cfg.encoder_layers)])
        self.max_source_positions = cfg.max_source_positions

    def build_local_layer(self, cfg: TransformerConfig) -> nn.Module:
        """A local layer (Eq. 11-12): fairseq's encoder layer. Subclasses (ParsingSum) override."""
        return TransformerEncoderLayerBase(cfg)

    def forward(self, src_tokens: Tensor, src_lengths: Optional[Tensor] = None,
                paragraph_graph: Optional[Tensor] = None, **kwargs):
        """src_tokens: ``B x P x L`` paragraphs (absent ones all padding);
        paragraph_graph: ``B x P x P`` (needed when the model was built with a graph)."""
        if src_tokens.dim() != 3:
            raise HierError(f"liu_ht expects B x P x L src_tokens, got shape "
                            f"{tuple(src_tokens.shape)} (is the task's --source-layout flat?)")
        if self.graph_attention and paragraph_graph is None:
            raise HierError("this liu_ht model uses graph-informed attention: pass the task's "
                            "--paragraph-graph KIND")
        b, p, l = src_tokens.shape
        padding_mask = src_tokens.eq(self.padding_idx)  # B x P x L
        present = ~padding_mask.all(-1)  # B x P
        # N, sorted: example-major, then rank. nonzero() syncs with the host, once per batch in
        # the encoder (never per decoding step): N sets the shapes of everything below
        rows = present.view(-1).nonzero().squeeze(1)
        tokens = src_tokens.view(b * p, l).index_select(0, rows)  # N x L
        local_mask = padding_mask.view(b * p, l).index_select(0, rows)  # N x L
        x = self.embed(tokens, rows % p).transpose(0, 1)  # N x L x C -> L x N x C
        graph = paragraph_graph if self.graph_attention else None
        for i, layer in enumerate(self.layers):
            if i in self.global_indices:
                x = layer(x, local_mask, rows, present, graph)
            else:
                x = layer(x, local_mask)
        memory, memory_mask = flat_memory(x, local_mask, rows // p, b)
        return {
            "encoder_out": [memory],  # S x B x C
            "encoder_padding_mask": [memory_mask],  # B x S
            "paragraph_padding_mask": [~present],  # B x P
        }

    def embed(self, tokens: Tensor, ranks: Tensor) -> Tensor:
        """Eq. 9-10: ``N x L`` tokens of paragraphs with 0-based ``ranks`` (N) -> ``N x L x C``."""
        n, l = tokens.shape
        x = self.embed_scale * self.embed_tokens(tokens)  # N x L x C
        pos = self.token_position(l).to(x).unsqueeze(0).expand(n, -1, -1)  # N x L x C/2
        if self.rank_position is not None:
            # int(): a host sync, once per batch (encoder), for the size of the rank table
            rank = self.rank_position(int(ranks.max()) + 1).to(x).index_select(0, ranks)  # N x C/2
            pos = torch.cat([pos, rank.unsqueeze(1).expand(-1, l, -1)], dim=-1)  # N x L x C
        return self.dropout_module(x + pos)

    @torch.jit.export
    def reorder_encoder_out(self, encoder_out: Dict[str, List[Tensor]], new_order: Tensor):
        """Select examples (beam expansion / reordering) on each tensor's batch axis."""
        batch_dim = {"encoder_out": 1, "encoder_padding_mask": 0, "paragraph_padding_mask": 0}
        return {k: [t.index_select(dim, new_order) for t in encoder_out[k]]
                for k, dim in batch_dim.items()}

    def max_positions(self):
        return self.max_source_positions


def flat_memory(x: Tensor, padding_mask: Tensor, example: Tensor, batch_size: int):
    """The decoder's memory: every real token of an example, paragraphs in rank order.

    x: ``L x N x C`` token states of the present paragraphs (rows sorted by example, then rank);
    padding_mask: ``N x L``; example: ``N`` example index of each row.
    Returns (``S x B x C`` states, ``B x S`` padding mask), S = the most tokens of one example."""
    l, n, c = x.shape
    keep = ~padding_mask.reshape(-1)  # N*L, row-major: example, rank, position
    states = x.transpose(0, 1).reshape(n * l, c)[keep]  # K x C, in memory order
    owner = example.repeat_interleave(l)[keep]  # K
    counts = torch.bincount(owner, minlength=batch_size)  # B
    first = torch.cumsum(counts, 0) - counts  # B: offset of each example in K
    slot = torch.arange(owner.numel(), device=x.device) - first.index_select(0, owner)  # K
    s = int(counts.max())  # host sync, once per batch (encoder): S is a shape
    memory = x.new_zeros(batch_size, s, c).index_put_((owner, slot), states)  # B x S x C
    mask = torch.arange(s, device=x.device).unsqueeze(0) >= counts.unsqueeze(1)  # B x S
    return memory.transpose(0, 1), mask  # S x B x C


@register_model("liu_ht")
class LiuHTModel(FairseqEncoderDecoderModel):
    """Liu & Lapata's Hierarchical Transformer (002); reads ``B x P x L`` sources."""

    #: the tasks whose data this model reads (checked when a task builds it)
    TASKS = ("hierarchical_summarization",)
    hierarchical_source = True

    @classmethod
    def add_args(cls, parser):
        from fairseq.dataclass.utils import gen_parser_from_dataclass

        # no defaults on the parser, so that architecture presets can set theirs
        gen_parser_from_dataclass(parser, LiuHTConfig(), delete_default=True)

    @classmethod
    def build_model(cls, args, task):
        check_model_options(args)
        liu_cfg = config_from_args(args, LiuHTConfig)
        cfg = fairseq_transformer_config(liu_cfg)
        src_dict, tgt_dict = task.source_dictionary, task.target_dictionary
        c = liu_cfg.encoder_embed_dim
        if liu_cfg.decoder_embed_dim != c:
            raise HierError(f"--decoder-embed-dim ({liu_cfg.decoder_embed_dim}) must equal "
                            f"--encoder-embed-dim ({c}): liu_ht shares its embeddings")
        if src_dict != tgt_dict:
            raise HierError("liu_ht shares source and target embeddings: run fairseq-preprocess "
                            "with --joined-dictionary")
        embed = Embedding(len(src_dict), c, src_dict.pad())
        encoder = cls.build_encoder(cfg, liu_cfg, src_dict, embed)
        decoder = TransformerDecoderBase(cfg, tgt_dict, embed)  # output layer tied to embed
        return cls(encoder, decoder)

    @classmethod
    def build_encoder(cls, cfg, liu_cfg, dictionary, embed_tokens):
        return LiuHTEncoder(cfg, liu_cfg, dictionary, embed_tokens)

    def forward(self, src_tokens, src_lengths, prev_output_tokens, paragraph_graph=None, **kwargs):
        """fairseq's encoder-decoder forward, except that the graph goes to the encoder only."""
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths,
                                   paragraph_graph=paragraph_graph)
        return self.decoder(prev_output_tokens, encoder_out=encoder_out, src_lengths=src_lengths,
                            **kwargs)

    @property
    def graph_attention(self) -> bool:
        return self.encoder.graph_attention

    def max_positions(self):
        return (self.encoder.max_positions(), self.decoder.max_positions())


def _papers_defaults(args):
    """Fill every unset option with the dataclass default (002's settings)."""
    fill_defaults(args, LiuHTConfig)


register_model_architecture("liu_ht", "liu_ht")(_papers_defaults)
