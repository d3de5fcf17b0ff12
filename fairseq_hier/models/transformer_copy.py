"""003's flat baseline FT (``transformer_copy``): Fabbri et al.'s OpenNMT Transformer with copy
attention (OpenNMT's ``-copy_attn``) on fairseq's ``transformer``: pre-LN layers with final
LayerNorms and OpenNMT's LayerNorm (``--ft-form opennmt``; ``post-ln``: fairseq's layers) and a
copy generator with a vocabulary projection of its own (``--copy-projection own``; ``tied``:
fairseq's; :mod:`fairseq_hier.modules.copy_attention`). ``parsingsum_ft`` (:mod:`~.parsingsum`)
keeps these layers and this copy attention. Arguments saved before ``--ft-form`` existed keep the
form they were trained with (:func:`predates_ft_form`).

May import ``fairseq_hier.modules``, ``fairseq_hier.errors`` and this package's helpers; torch
and fairseq.

Legend: B batch, S source tokens, T target steps, C model dim, V vocabulary. Masks: True = padding.
"""

import logging
from dataclasses import dataclass, field, fields
from typing import Optional

import torch.nn as nn
import torch.nn.functional as F
from fairseq.dataclass import ChoiceEnum, FairseqDataclass
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (TransformerDecoderBase, TransformerEncoderBase,
                                        TransformerModel)
from fairseq.models.transformer.transformer_legacy import base_architecture
from torch import Tensor

from ..errors import HierError
from ..modules.copy_attention import CopyGenerator
from ..modules.opennmt_layer_norm import OpenNMTLayerNorm
from .hierarchical_transformer import fill_defaults

logger = logging.getLogger(__name__)

FT_FORMS = ("opennmt", "post-ln")
COPY_PROJECTIONS = ("own", "tied")


@dataclass
class FTConfig(FairseqDataclass):
    """003's FT (Fabbri et al.'s OpenNMT Transformer, footnote 3): its layers and its copy
    attention (OpenNMT's ``-copy_attn``)."""

    copy_attention: bool = field(
        default=True, metadata={"help": "pointer-generator over the source (OpenNMT's "
                                        "-copy_attn, 003's FT): the output mixes the vocabulary "
                                        "softmax with the last decoder layer's first-head "
                                        "encoder attention; --no-copy-attention: fairseq's "
                                        "plain output layer"})
    copy_projection: ChoiceEnum(COPY_PROJECTIONS) = field(
        default="own", metadata={"help": "the vocabulary projection of the copy generator: own = "
                                         "its own weights and bias, Glorot-initialised "
                                         "(OpenNMT's CopyGenerator.linear, never tied); tied = "
                                         "fairseq's output projection (the embeddings under "
                                         "--share-all-embeddings)"})
    ft_form: ChoiceEnum(FT_FORMS) = field(
        default="opennmt", metadata={"help": "the encoder and decoder layers: opennmt = "
                                             "OpenNMT's Transformer: LayerNorm before each "
                                             "sub-layer and after the last layer (pre-LN), "
                                             "OpenNMT's LayerNorm (unbiased std, eps 1e-6 added "
                                             "to it), attention and ReLU dropout = --dropout "
                                             "unless given; post-ln = fairseq's post-LN layers "
                                             "(Eq. 8-9 of 003; torch's LayerNorm, eps 1e-5), "
                                             "--attention-dropout / --activation-dropout 0 "
                                             "unless given"})


def add_ft_args(parser) -> None:
    """``--copy-attention`` / ``--no-copy-attention`` (a real bool; fairseq's dataclass parser
    turns a True default into a store_false flag), ``--copy-projection``, ``--ft-form``. Their
    defaults are filled by the architecture (:func:`ft_shape`)."""
    import argparse

    spec = FTConfig.__dataclass_fields__
    parser.add_argument("--copy-attention", action=argparse.BooleanOptionalAction, default=None,
                        help=f"{spec['copy_attention'].metadata['help']} (default: "
                             f"{spec['copy_attention'].default})")
    for name, choices in (("copy_projection", COPY_PROJECTIONS), ("ft_form", FT_FORMS)):
        parser.add_argument("--" + name.replace("_", "-"), choices=choices, default=None,
                            help=f"{spec[name].metadata['help']} (default: {spec[name].default})")


def predates_ft_form(args) -> bool:
    """Whether ``args`` are those of a checkpoint trained before ``--ft-form`` existed (then
    fairseq's post-LN with the tied projection): fairseq stored ``encoder_normalize_before`` as
    False, which a fresh command line leaves unset unless ``--encoder-normalize-before``."""
    return (getattr(args, "ft_form", None) is None
            and getattr(args, "encoder_normalize_before", None) is False)


class SourceTokensEncoder(TransformerEncoderBase):
    """fairseq's encoder whose output carries ``src_tokens`` (``B x S``), which fairseq's leaves
    empty: the copy attention reads it, and fairseq's ``reorder_encoder_out`` reorders it for
    the beams."""

    def forward(self, src_tokens, src_lengths: Optional[Tensor] = None,
                return_all_hiddens: bool = False, token_embeddings: Optional[Tensor] = None):
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)
        out["src_tokens"] = [src_tokens]  # B x S
        return out


class CopyTransformerDecoder(TransformerDecoderBase):
    """fairseq's Transformer decoder whose output, once :meth:`enable_copy` ran, is the copy
    mixture of :class:`~fairseq_hier.modules.copy_attention.CopyGenerator` as log-probabilities
    (``B x T x V``, float32), so that fairseq's criteria and generator use it unchanged through
    :meth:`get_normalized_probs`. The copy attention is head 0 of the last layer (OpenNMT's);
    ``extra["attn"]`` is then that attention whatever ``alignment_layer`` / ``alignment_heads``
    the caller asked for."""

    def __init__(self, cfg, dictionary, embed_tokens, no_encoder_attn=False,
                 output_projection=None):
        super().__init__(cfg, dictionary, embed_tokens, no_encoder_attn, output_projection)
        self.copy_generator: Optional[CopyGenerator] = None  # set by enable_copy

    def enable_copy(self, own_projection: bool = True) -> None:
        """Add the copy generator; ``own_projection``: OpenNMT's, whose vocabulary logits come
        from a projection of its own, ``Linear(C, V)`` with a bias (``CopyGenerator.linear``),
        instead of fairseq's (tied); its matrices Glorot-initialised (``-param_init_glorot``)."""
        if self.adaptive_softmax is not None:
            raise HierError("--copy-attention mixes a full vocabulary softmax: it cannot be used "
                            "with --adaptive-softmax-cutoff")
        d = self.dictionary
        self.copy_generator = CopyGenerator(self.output_embed_dim, (d.pad(), d.eos(), d.bos()))
        if own_projection:
            self.output_projection = nn.Linear(self.output_embed_dim, len(d))  # C -> V, bias
            nn.init.xavier_uniform_(self.output_projection.weight)
            nn.init.xavier_uniform_(self.copy_generator.switch.weight)
            self.share_input_output_embed = False

    def forward(self, prev_output_tokens, encoder_out=None, incremental_state=None,
                features_only: bool = False, full_context_alignment: bool = False,
                alignment_layer: Optional[int] = None, alignment_heads: Optional[int] = None,
                src_lengths=None, return_all_hiddens: bool = False):
        """fairseq's decoder forward; with copy, returns (log-probabilities ``B x T x V``,
        extra) instead of (logits, extra)."""
        if self.copy_generator is None or features_only:
            return super().forward(prev_output_tokens, encoder_out, incremental_state,
                                   features_only, full_context_alignment, alignment_layer,
                                   alignment_heads, src_lengths, return_all_hiddens)
        if encoder_out is None or not encoder_out.get("src_tokens"):
            raise HierError("copy attention needs the source tokens in the encoder output "
                            "(an encoder that keeps src_tokens)")
        # fairseq averages the first alignment_heads heads of the last layer: 1 = head 0
        x, extra = self.extract_features(prev_output_tokens, encoder_out=encoder_out,
                                         incremental_state=incremental_state,
                                         full_context_alignment=full_context_alignment,
                                         alignment_layer=None, alignment_heads=1)
        attn = extra["attn"][0]  # B x T x S
        return self.copy_generator(self.output_layer(x), x, attn,
                                   encoder_out["src_tokens"][0]), extra

    def get_normalized_probs(self, net_output, log_probs: bool, sample=None):
        if self.copy_generator is None:
            return super().get_normalized_probs(net_output, log_probs, sample)
        # the output is already log p; log_softmax keeps it and renormalises after --temperature
        lprobs = F.log_softmax(net_output[0].float(), dim=-1)
        return lprobs if log_probs else lprobs.exp()


def use_opennmt_layer_norms(model) -> None:
    """Every LayerNorm of the encoder and decoder stacks (sub-layers and final norms) becomes
    :class:`~fairseq_hier.modules.opennmt_layer_norm.OpenNMTLayerNorm`; same parameter names,
    so the optimizer (built later) and checkpoints see fairseq's keys."""
    names = ("self_attn_layer_norm", "encoder_attn_layer_norm", "final_layer_norm")
    for stack in (model.encoder, model.decoder):
        for owner in (stack, *stack.layers):
            for name in names + ("layer_norm",):
                norm = getattr(owner, name, None)
                if isinstance(norm, nn.Module) and not isinstance(norm, OpenNMTLayerNorm):
                    setattr(owner, name, OpenNMTLayerNorm(norm.weight.numel()))


@register_model("transformer_copy")
class TransformerCopyModel(TransformerModel):
    """003's FT baseline: Fabbri et al.'s OpenNMT Transformer with ``-copy_attn`` on fairseq's
    ``transformer`` (``--ft-form``, ``--copy-projection``, ``--copy-attention``; see
    :func:`ft_shape`)."""

    #: the tasks whose data this model reads (checked when a task builds it)
    TASKS = ("hierarchical_summarization",)

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        add_ft_args(parser)

    @classmethod
    def build_model(cls, args, task):
        # fairseq builds the stacks from a TransformerConfig, which drops our options: the
        # LayerNorms and the copy generator are set here, before the optimizer sees the
        # parameters
        if any(getattr(args, f.name, None) is None for f in fields(FTConfig)):
            ft_shape(args)  # arguments saved before one of the options existed
        model = super().build_model(args, task)
        if args.ft_form == "opennmt":
            use_opennmt_layer_norms(model)
        if args.copy_attention:
            model.decoder.enable_copy(own_projection=args.copy_projection == "own")
        return model

    @classmethod
    def build_encoder(cls, cfg, src_dict, embed_tokens):
        from fairseq.models.transformer import TransformerConfig

        return SourceTokensEncoder(TransformerConfig.from_namespace(cfg), src_dict, embed_tokens)

    def upgrade_state_dict_named(self, state_dict, name):
        """A checkpoint whose options predate ``--copy-attention`` (the arch then fills it in)
        has no copy switch: it is decoded as it was trained, without copying. A checkpoint of
        the other ``--ft-form`` / ``--copy-projection`` stops with one line naming the option."""
        super().upgrade_state_dict_named(state_dict, name)
        prefix = f"{name}." if name else ""
        if (self.decoder.copy_generator is not None
                and f"{prefix}decoder.copy_generator.switch.weight" not in state_dict):
            logger.warning("the checkpoint has no copy attention parameters: the model runs "
                           "without copy attention, as it was trained")
            self.decoder.copy_generator = None
        pre_ln = f"{prefix}encoder.layer_norm.weight" in state_dict
        if pre_ln != (self.encoder.layer_norm is not None):
            raise HierError(f"the checkpoint's layers are {'pre' if pre_ln else 'post'}-LN and "
                            f"the model's are not: build it with --ft-form "
                            f"{'opennmt' if pre_ln else 'post-ln'}")
        own = f"{prefix}decoder.output_projection.bias" in state_dict
        if own != (self.decoder.output_projection.bias is not None):
            raise HierError(f"the checkpoint's output projection is "
                            f"{'its own' if own else 'tied'} and the model's is not: build it "
                            f"with --copy-projection {'own' if own else 'tied'}")

    @classmethod
    def build_decoder(cls, cfg, tgt_dict, embed_tokens):
        from fairseq.models.transformer import TransformerConfig

        cfg = TransformerConfig.from_namespace(cfg)
        return CopyTransformerDecoder(cfg, tgt_dict, embed_tokens,
                                      no_encoder_attn=cfg.no_cross_attention)


def ft_shape(args):
    """003 Sec. 3.2 / footnote 3: the FT settings, Fabbri et al.'s OpenNMT Transformer
    (``run_train_transformer.sh``: ``-layers 4 -rnn_size 512 -copy_attn -share_embeddings``,
    8 heads and FFN 2048 by OpenNMT's defaults), dropout 0.1 (003). ``--ft-form opennmt``
    (default): OpenNMT's pre-LN layers with final LayerNorms, OpenNMT's LayerNorm, its dropout
    on the attention weights and inside the FFN; ``--copy-projection own`` (default). Arguments
    of a checkpoint trained before these options (:func:`predates_ft_form`) keep the form it was
    trained with: ``post-ln`` and ``tied``."""
    if predates_ft_form(args):
        args.ft_form = "post-ln"
        args.copy_projection = getattr(args, "copy_projection", None) or "tied"
    args.encoder_layers = getattr(args, "encoder_layers", 4)
    args.decoder_layers = getattr(args, "decoder_layers", 4)
    args.dropout = getattr(args, "dropout", 0.1)
    args.share_all_embeddings = getattr(args, "share_all_embeddings", True)
    fill_defaults(args, FTConfig)
    if args.ft_form == "opennmt":
        if False in (getattr(args, "encoder_normalize_before", True),
                     getattr(args, "decoder_normalize_before", True)):
            raise HierError("--ft-form opennmt is pre-LN: it cannot be combined with "
                            "encoder_normalize_before / decoder_normalize_before False "
                            "(use --ft-form post-ln)")
        args.encoder_normalize_before = args.decoder_normalize_before = True
        # OpenNMT's MultiHeadedAttention and PositionwiseFeedForward drop with -dropout
        args.attention_dropout = getattr(args, "attention_dropout", args.dropout)
        args.activation_dropout = getattr(args, "activation_dropout", args.dropout)
    base_architecture(args)


@register_model_architecture("transformer_copy", "transformer_copy")
def transformer_copy(args):
    """003's FT: :func:`ft_shape` with copy attention on."""
    ft_shape(args)
