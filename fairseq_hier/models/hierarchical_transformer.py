"""Parallel and vertical hierarchical Transformers, PHT and VHT (Ma & Zong 2020, paper 000;
PHT details in Chaudhary, paper 001).

Encoder (Eq. 1, paragraphs folded into the batch; PHT adds pooling, Eq. 2-5, and the ranking
encoding, Eq. 6) and an incremental decoder of ``PHTDecoderLayer`` / ``VHTDecoderLayer``
(:mod:`fairseq_hier.modules.hierarchical_decoder_layer`) that returns the paragraph attention
``B x T x P`` as ``extra["attn"][0]``. Details: docs/models.md, section
fairseq_hier.models.hierarchical_transformer.

Legend: B batch, P paragraphs, L tokens per paragraph, T target steps, C model dim, V vocab.
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
from fairseq import utils
from fairseq.dataclass import ChoiceEnum
from fairseq.models import (
    FairseqEncoder,
    FairseqEncoderDecoderModel,
    FairseqIncrementalDecoder,
    register_model,
    register_model_architecture,
)
from fairseq.models.transformer import Embedding, TransformerConfig, TransformerEncoderBase
from fairseq.modules import FairseqDropout, PositionalEmbedding
from torch import Tensor

from ..modules.hierarchical_decoder_layer import (
    DYNAMIC_EMBEDDINGS,
    PHTDecoderLayer,
    VHTDecoderLayer,
)
from ..errors import HierError
from ..modules.multihead_pooling import MultiHeadPooling
from ..modules.rank_encoding import RankEncoding
from ..modules.recompute import use_mask_dropout
from .checkpointing import ActivationCheckpointConfig, checkpoint_layer, checkpoints_activations
from .option_checks import check_model_options

logger = logging.getLogger(__name__)


@dataclass
class HierarchicalTransformerConfig(ActivationCheckpointConfig):
    """Defaults are the papers' settings (000 Sec. 4.2, 001 Sec. 5.2); with
    ``--checkpoint-activations`` (inherited) for every layer."""

    encoder_embed_dim: int = field(default=256, metadata={"help": "model dimension d"})
    encoder_ffn_embed_dim: int = field(default=1024, metadata={"help": "FFN hidden size"})
    encoder_layers: int = field(default=3, metadata={"help": "layers of the shared token encoder"})
    encoder_attention_heads: int = field(default=4, metadata={"help": "encoder attention heads"})
    decoder_embed_dim: int = field(default=256, metadata={"help": "decoder dimension (= encoder)"})
    decoder_ffn_embed_dim: int = field(default=1024, metadata={"help": "decoder FFN hidden size"})
    decoder_layers: int = field(default=3, metadata={"help": "decoder layers"})
    decoder_attention_heads: int = field(
        default=4, metadata={"help": "heads of the self, word-level and paragraph-level attentions"})
    pooling_heads: int = field(default=4, metadata={"help": "heads of multi-head attention pooling (PHT)"})
    dropout: float = field(default=0.3, metadata={"help": "dropout on every sub-layer output"})
    attention_dropout: float = field(default=0.0, metadata={"help": "dropout on attention weights"})
    activation_dropout: float = field(default=0.0, metadata={"help": "dropout inside the FFN"})
    activation_fn: ChoiceEnum(utils.get_available_activation_fns()) = field(
        default="relu", metadata={"help": "FFN activation"})
    untie_embeddings: bool = field(
        default=False, metadata={"help": "do not share the token embeddings of encoder, decoder and "
                                         "output layer (the papers share them)"})
    separate_output_projection: bool = field(
        default=False, metadata={"help": "keep encoder and decoder embeddings shared but give the "
                                         "output layer its own weights and bias (the authors' code: "
                                         "a Dense softmax layer); default: tied to the embeddings"})
    dynamic_paragraph_embedding: ChoiceEnum(list(DYNAMIC_EMBEDDINGS)) = field(
        default="paper", metadata={"help": "VHT only, Eq. 11: 'paper' = X_t^word + R; 'authors' = "
                                           "LayerNorm(X_t^I + dropout(X_t^word + R)) as in the "
                                           "authors' code"})
    no_scale_embedding: bool = field(default=False, metadata={"help": "do not scale embeddings by sqrt(d)"})
    max_source_positions: int = field(
        default=1024, metadata={"help": "max tokens per paragraph (positions are sinusoidal, so "
                                        "longer paragraphs work at test time)"})
    max_target_positions: int = field(default=1024, metadata={"help": "max target length"})


def config_from_args(args, config_class=None):
    """Namespace (legacy archs) or DictConfig -> our dataclass (``config_class``, default
    :class:`HierarchicalTransformerConfig`); unset fields keep the paper's defaults."""
    cfg = (config_class or HierarchicalTransformerConfig)()
    for f in fields(cfg):
        value = getattr(args, f.name, None)
        if value is not None:
            setattr(cfg, f.name, value)
    return cfg


def fairseq_transformer_config(cfg: HierarchicalTransformerConfig) -> TransformerConfig:
    """The fairseq TransformerConfig our reused fairseq blocks read (built safely from a namespace)."""
    ns = argparse.Namespace(**{f.name: getattr(cfg, f.name) for f in fields(cfg)})
    ns.share_all_embeddings = not cfg.untie_embeddings
    ns.encoder_learned_pos = ns.decoder_learned_pos = False  # sinusoidal (000 Eq. 1)
    ns.encoder_normalize_before = ns.decoder_normalize_before = False  # post-LN as in the papers
    ns.checkpoint_activations = checkpoints_activations(cfg)
    return TransformerConfig.from_namespace(ns)


class HierarchicalEncoder(FairseqEncoder):
    """Shared token encoder over every paragraph (Eq. 1), plus paragraph embeddings for PHT.

    Output dict (fairseq style, lists of tensors):
        encoder_out             [L x B0 x P x C] context-aware word embeddings C_p (0 if absent)
        word_rows               [B] or []        row of ``encoder_out`` holding example b (set by
                                                 ``reorder_encoder_out``; [] = identity, B0 = B);
                                                 read the words with :meth:`word_states`
        encoder_padding_mask    [B x P x L]
        paragraph_out           [P x B x C]      static paragraph embeddings + ranking (PHT) / []
        paragraph_padding_mask  [B x P]          True = absent paragraph
    """

    def __init__(self, cfg: TransformerConfig, dictionary, embed_tokens, pool_heads: Optional[int]):
        super().__init__(dictionary)
        self.padding_idx = embed_tokens.padding_idx
        self.token_encoder = TransformerEncoderBase(cfg, dictionary, embed_tokens)
        c = cfg.encoder.embed_dim
        self.pooling = None
        if pool_heads:
            self.pooling = MultiHeadPooling(c, pool_heads, cfg.encoder.ffn_embed_dim,
                                            cfg.dropout, cfg.activation_dropout)
        self.rank_encoding = RankEncoding(c)  # parameter-free (sinusoidal, not in checkpoints)

    def forward(self, src_tokens: Tensor, src_lengths: Optional[Tensor] = None, **kwargs):
        """src_tokens: ``B x P x L`` paragraphs (absent paragraphs all padding)."""
        if src_tokens.dim() != 3:
            raise HierError(f"hierarchical encoder expects B x P x L src_tokens, got shape "
                            f"{tuple(src_tokens.shape)} (is the task's --source-layout flat?)")
        b, p, l = src_tokens.shape
        padding_mask = src_tokens.eq(self.padding_idx)  # B x P x L
        present = ~padding_mask.all(-1)  # B x P
        # indices into B*P of present paragraphs; nonzero() syncs with the host once per batch
        # (encoder, never per decoding step): N sets the shapes below
        rows = present.view(-1).nonzero().squeeze(1)
        every = rows.numel() == b * p  # no absent paragraph: no gathered copies (saves a copy of the words)
        # encode only present paragraphs: B x P x L -> N x L
        tokens = src_tokens.view(b * p, l)
        out = self.token_encoder(tokens if every else tokens.index_select(0, rows))
        states = out["encoder_out"][0]  # L x N x C
        words = (states if every else  # L x N x C -> L x (B*P) x C, zeros for absent ones
                 states.new_zeros(l, b * p, states.size(-1)).index_copy(1, rows, states))
        result = {
            "encoder_out": [words.view(l, b, p, -1)],  # L x (B*P) x C -> L x B x P x C
            "word_rows": [],
            "encoder_padding_mask": [padding_mask],
            "paragraph_out": [],
            "paragraph_padding_mask": [~present],
        }
        if self.pooling is not None:
            pooled = self.pooling(states, out["encoder_padding_mask"][0])  # N x C
            phi = (pooled if every else
                   pooled.new_zeros(b * p, pooled.size(-1)).index_copy(0, rows, pooled))
            phi = phi.view(b, p, -1) + self.rank_encoding(p)  # Eq. 6: Phi := Phi + R
            result["paragraph_out"] = [phi.transpose(0, 1)]  # B x P x C -> P x B x C
        return result

    def paragraph_embeddings(self, encoder_out: Dict[str, List[Tensor]]) -> Tensor:
        """``B x P x C`` paragraph representations, the input of attention prediction (001 Sec.
        4.2.1). PHT: its paragraph embeddings Phi (Eq. 6, ranking encoding included). VHT has no
        static paragraph embedding; we represent its paragraphs by the mean of their context-aware
        word embeddings plus the same ranking encoding (our choice; absent paragraphs: R only)."""
        if encoder_out["paragraph_out"]:
            return encoder_out["paragraph_out"][0].transpose(0, 1)  # P x B x C -> B x P x C
        words = self.word_states(encoder_out)  # L x B x P x C
        keep = (~encoder_out["encoder_padding_mask"][0]).permute(2, 0, 1).unsqueeze(-1)  # L x B x P x 1
        keep = keep.to(words)
        mean = (words * keep).sum(0) / keep.sum(0).clamp(min=1.0)  # B x P x C
        return mean + self.rank_encoding(mean.size(1)).to(mean)

    @staticmethod
    def word_states(encoder_out: Dict[str, List[Tensor]]) -> Tensor:
        """``L x B x P x C`` word states of the examples in their current order."""
        words = encoder_out["encoder_out"][0]  # L x B0 x P x C
        rows = encoder_out.get("word_rows") or []
        return words.index_select(1, rows[0]) if rows else words

    @torch.jit.export
    def reorder_encoder_out(self, encoder_out: Dict[str, List[Tensor]], new_order: Tensor):
        """Select examples (beam expansion / reordering) on each tensor's batch axis.

        The word states (``L x B0 x P x C``, the largest tensor) are not copied: their row
        index is composed with ``new_order`` instead. The decoder reads them only when it
        projects the word-level keys and values (once per source when decoding), while the
        masks, read at every step, are selected here."""
        batch_dim = {"encoder_padding_mask": 0, "paragraph_out": 1, "paragraph_padding_mask": 0}
        out = {k: [t.index_select(batch_dim[k], new_order) for t in encoder_out[k]]
               for k in batch_dim}
        rows = encoder_out.get("word_rows") or []
        out["word_rows"] = [rows[0].index_select(0, new_order) if rows else new_order]
        out["encoder_out"] = encoder_out["encoder_out"]
        return out

    def max_positions(self):
        return self.token_encoder.max_positions()


class HierarchicalDecoder(FairseqIncrementalDecoder):
    """Token embeddings + sinusoidal positions, a stack of hierarchical layers, output projection."""

    def __init__(self, cfg: TransformerConfig, dictionary, embed_tokens, build_layer,
                 output_projection: Optional[nn.Linear] = None):
        super().__init__(dictionary)
        c = cfg.decoder.embed_dim
        self.embed_tokens = embed_tokens
        self.padding_idx = embed_tokens.padding_idx
        self.embed_scale = 1.0 if cfg.no_scale_embedding else c ** 0.5
        self.embed_positions = PositionalEmbedding(cfg.max_target_positions, c, self.padding_idx,
                                                   learned=False)
        self.dropout_module = FairseqDropout(cfg.dropout, module_name=self.__class__.__name__)
        # --checkpoint-activations: recomputed in the backward pass, as fairseq's stacks do
        self.layers = nn.ModuleList([checkpoint_layer(build_layer(), cfg)
                                     for _ in range(cfg.decoder.layers)])
        self.max_target_positions = cfg.max_target_positions
        self.output_projection = output_projection  # None: tied to embed_tokens

    def forward(self, prev_output_tokens, encoder_out=None, incremental_state=None,
                features_only=False, src_lengths=None, return_all_hiddens=False, **kwargs):
        """prev_output_tokens: ``B x T`` -> (logits ``B x T x V``, {"attn": [B x T x P], ...})."""
        x, extra = self.extract_features(prev_output_tokens, encoder_out, incremental_state)
        if not features_only:
            x = self.output_layer(x)
        return x, extra

    def extract_features(self, prev_output_tokens, encoder_out, incremental_state=None, **kwargs):
        positions = self.embed_positions(prev_output_tokens, incremental_state=incremental_state)
        if incremental_state is not None:  # only the last step is new
            prev_output_tokens = prev_output_tokens[:, -1:]
            positions = positions[:, -1:]
        x = self.embed_scale * self.embed_tokens(prev_output_tokens) + positions
        x = self.dropout_module(x).transpose(0, 1)  # B x T x C -> T x B x C
        self_attn_padding_mask = future_mask = None
        if incremental_state is None:
            self_attn_padding_mask = prev_output_tokens.eq(self.padding_idx)  # B x T
            # a host sync, once per (training / scoring) forward: lets attention skip the mask
            if not self_attn_padding_mask.any():
                self_attn_padding_mask = None
            t = x.size(0)
            # fairseq's additive -inf future mask (as its TransformerDecoder builds it): no row
            # is fully masked (each query sees itself), so no -inf - -inf NaN in half precision
            future_mask = torch.triu(utils.fill_with_neg_inf(x.new_zeros(t, t)), 1)
        # incremental decoding (every beam-search step): no padding mask and no `.any()` host
        # sync. The new token is never padding (the generator bans pad), and padding in a teacher-
        # forced prefix follows EOS, so it is only ever seen by later padding queries
        attn_sum = None
        inner_states = [x]
        for layer in self.layers:
            x, paragraph_attn = layer(x, encoder_out, incremental_state, future_mask,
                                      self_attn_padding_mask)
            attn_sum = paragraph_attn if attn_sum is None else attn_sum + paragraph_attn
            inner_states.append(x)
        # layers summed, then normalised over paragraphs (001 footnote 3), in float32 (1e-12 is 0
        # in float16), returned in the model's dtype as fairseq's attention is; B x T x P
        attn_sum = attn_sum.float()
        attn = (attn_sum / attn_sum.sum(-1, keepdim=True).clamp(min=1e-12)).to(x.dtype)
        return x.transpose(0, 1), {"attn": [attn], "inner_states": inner_states}

    def output_layer(self, features):
        if self.output_projection is None:
            return F.linear(features, self.embed_tokens.weight)
        return self.output_projection(features)

    def max_positions(self):
        return self.max_target_positions


class HierarchicalTransformerModel(FairseqEncoderDecoderModel):
    """Base of PHT and VHT: reads ``B x P x L`` sources (see the task's ``--source-layout``)."""

    #: the tasks whose data this model reads (checked when a task builds it)
    TASKS = ("hierarchical_summarization",)
    hierarchical_source = True
    pooling = False

    @classmethod
    def add_args(cls, parser):
        from fairseq.dataclass.utils import gen_parser_from_dataclass

        # no defaults on the parser, so that architecture presets can set theirs
        gen_parser_from_dataclass(parser, HierarchicalTransformerConfig(), delete_default=True)

    @classmethod
    def build_model(cls, args, task):
        check_model_options(args)
        hier_cfg = config_from_args(args)
        cfg = fairseq_transformer_config(hier_cfg)
        src_dict, tgt_dict = task.source_dictionary, task.target_dictionary
        c = hier_cfg.encoder_embed_dim
        if hier_cfg.decoder_embed_dim != c:
            raise HierError(f"--decoder-embed-dim ({hier_cfg.decoder_embed_dim}) must equal "
                            f"--encoder-embed-dim ({c}) in hierarchical Transformers")
        encoder_embed = Embedding(len(src_dict), c, src_dict.pad())
        if hier_cfg.untie_embeddings:
            decoder_embed = Embedding(len(tgt_dict), c, tgt_dict.pad())
        else:
            if src_dict != tgt_dict:
                raise HierError("shared embeddings need one dictionary: run fairseq-preprocess "
                                "with --joined-dictionary, or pass --untie-embeddings")
            decoder_embed = encoder_embed
        encoder = HierarchicalEncoder(cfg, src_dict, encoder_embed,
                                      hier_cfg.pooling_heads if cls.pooling else None)
        decoder = HierarchicalDecoder(cfg, tgt_dict, decoder_embed,
                                      lambda: cls.build_decoder_layer(cfg, hier_cfg),
                                      cls.build_output_projection(hier_cfg, len(tgt_dict)))
        model = cls(encoder, decoder)
        # the same dropouts (places and probabilities), with a boolean mask kept for backward
        # on CPU in place of F.dropout's float noise: less memory, about 3x faster there
        use_mask_dropout(model)
        return model

    @classmethod
    def build_decoder_layer(cls, cfg: TransformerConfig, hier_cfg: HierarchicalTransformerConfig):
        raise NotImplementedError

    @staticmethod
    def build_output_projection(hier_cfg: HierarchicalTransformerConfig, vocab: int
                                ) -> Optional[nn.Linear]:
        """None (tied to the embeddings, the papers), a bias-free projection when all embeddings
        are untied, or the authors' separate output layer with bias."""
        if not (hier_cfg.untie_embeddings or hier_cfg.separate_output_projection):
            return None
        c = hier_cfg.decoder_embed_dim
        proj = nn.Linear(c, vocab, bias=not hier_cfg.untie_embeddings)
        nn.init.normal_(proj.weight, mean=0, std=c ** -0.5)
        if proj.bias is not None:
            nn.init.zeros_(proj.bias)
        return proj

    def max_positions(self):
        return (self.encoder.max_positions(), self.decoder.max_positions())


@register_model("pht")
class PHTModel(HierarchicalTransformerModel):
    """Parallel hierarchical Transformer (000 Sec. 3.1, 001 Sec. 3)."""

    pooling = True

    @classmethod
    def build_decoder_layer(cls, cfg, hier_cfg):
        return PHTDecoderLayer(cfg)


@register_model("vht")
class VHTModel(HierarchicalTransformerModel):
    """Vertical hierarchical Transformer (000 Sec. 3.2): no pooling, vertical decoder."""

    pooling = False

    @classmethod
    def build_decoder_layer(cls, cfg, hier_cfg):
        return VHTDecoderLayer(cfg, dynamic_embedding=str(hier_cfg.dynamic_paragraph_embedding))

    def upgrade_state_dict_named(self, state_dict, name):
        """fairseq-hier <= 0.1 VHT checkpoints used ``LayerNorm(dropout(X_word + R))`` for Eq. 11,
        a form that is neither the paper's nor the authors'; say so instead of a key error."""
        super().upgrade_state_dict_named(state_dict, name)
        has_norm = any(".dynamic_layer_norm." in k for k in state_dict)
        if has_norm and self.decoder.layers[0].dynamic_layer_norm is None:
            raise HierError("this VHT checkpoint was trained with fairseq-hier 0.1's dynamic "
                            "paragraph embedding LayerNorm(dropout(X_word + R)), which is no "
                            "longer available; retrain it (--dynamic-paragraph-embedding paper, "
                            "the default, or authors)")


def fill_defaults(args, config_class) -> None:
    """Fill every unset option of a legacy architecture's ``args`` with the default of
    ``config_class`` (a paper's settings)."""
    for f in fields(config_class):
        if getattr(args, f.name, None) is None:
            setattr(args, f.name, getattr(config_class, f.name))


def _papers_defaults(args):
    """Fill every unset option with the dataclass default (the papers' settings)."""
    fill_defaults(args, HierarchicalTransformerConfig)


def _one_layer(args):
    """The 1-layer variants of 000 Table 2."""
    for name in ("encoder_layers", "decoder_layers"):
        if getattr(args, name, None) is None:
            setattr(args, name, 1)
    _papers_defaults(args)


register_model_architecture("pht", "pht")(_papers_defaults)
register_model_architecture("vht", "vht")(_papers_defaults)
register_model_architecture("pht", "pht_1layer")(_one_layer)
register_model_architecture("vht", "vht_1layer")(_one_layer)
