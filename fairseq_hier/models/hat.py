"""HAT: Hierarchical Attention Transformer (Rohde, Wu & Liu, paper 004, Section 3, Figure 1).

Shape legend: ``B`` batch, ``S`` source tokens, ``N`` sentences (BOS markers) per source, ``T``
target steps, ``C`` model dim, ``H`` heads. fairseq's masks: True = padding.

fairseq's BART plus hierarchical encoder layers over the BOS states (Sec. 3.2) and one sentence
attention sublayer per decoder layer (Sec. 3.3), a hook on ``encoder_attn_layer_norm``; speaker
segments, FSDP-wrapped layers, added source positions (:func:`extend_positions`) and the
parameter count that checks the design: docs/models.md, section fairseq_hier.models.hat. Imports
``modules``, ``data``, ``compat``, ``errors``; torch, fairseq.
"""

import logging
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor

from fairseq.distributed import fsdp_wrap
from fairseq.models import register_model, register_model_architecture
from fairseq.models.bart.model import BARTModel, bart_base_architecture, bart_large_architecture
from fairseq.models.transformer import (TransformerDecoder, TransformerEncoder, TransformerModel,
                                        transformer_wmt_en_de_big)
from fairseq.models.transformer.transformer_config import TransformerConfig
from fairseq.modules import LayerNorm
from fairseq.modules.transformer_layer import TransformerDecoderLayerBase, TransformerEncoderLayerBase

from . import hf_bart
from ..errors import HierError
from .checkpointing import checkpoint_layer, checkpoints_activations
from .option_checks import check_model_options

logger = logging.getLogger(__name__)

HIERARCHICAL_LAYERS = 1  # 004 Sec. 3.2: "a single hierarchical layer works the best"
POSITION_INITS = ("random", "tile")
POSITION_INIT = "random"  # 004 Sec. 4.1: the additional positions are initialised at random


def sentence_positions(src_tokens: Tensor, bos: int):
    """Where the sentences start: the one definition of sentence presence used everywhere.

    Args:
        src_tokens: ``B x S`` source tokens; every sentence opens with ``bos``.
    Returns:
        ``positions`` ``B x N`` (index into S of each BOS, in order; 0 where absent) and
        ``padding_mask`` ``B x N`` (True where the example has fewer than N sentences).
    """
    is_bos = src_tokens.eq(bos)  # B x S
    counts = is_bos.sum(dim=1)  # B
    # host reads (the check, N): once per batch, in the encoder; never per decoding step
    if bool((counts == 0).any()):
        row = int((counts == 0).nonzero()[0])
        raise HierError(f"HAT: source {row} of the batch has no BOS symbol ({bos}): every "
                        f"sentence must open with one, inserted when preprocessing")
    n = int(counts.max())
    # stable sort puts the BOS positions first, in source order: B x S -> B x N
    order = torch.sort((~is_bos).to(torch.int8), dim=1, stable=True).indices[:, :n]
    padding_mask = torch.arange(n, device=src_tokens.device)[None, :] >= counts[:, None]
    return order.masked_fill(padding_mask, 0), padding_mask


def sentence_index(src_tokens: Tensor, bos: int) -> Tensor:
    """``B x S``: index of the sentence each token belongs to (the number of BOS symbols at or
    before it, minus one; 0 for left padding before the first BOS)."""
    return (src_tokens.eq(bos).cumsum(dim=1) - 1).clamp(min=0)


class SegmentTransformerEncoder(TransformerEncoder):
    """fairseq's Transformer encoder with optional speaker segment embeddings (004 Sec. 4.1)."""

    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        self.bos = dictionary.bos()
        count = getattr(args, "segment_embeddings", 0) or 0
        self.embed_segments = None
        if count > 0:
            # random init as BART's embeddings (init_bert_params: normal(0, 0.02))
            self.embed_segments = torch.nn.Embedding(count, embed_tokens.embedding_dim)
            torch.nn.init.normal_(self.embed_segments.weight, mean=0, std=0.02)

    def embed_with_segments(self, src_tokens: Tensor, src_segments: Optional[Tensor],
                            token_embeddings: Optional[Tensor] = None) -> Optional[Tensor]:
        """Token embeddings ``B x S x C`` plus the segment embedding of each token's sentence
        (``src_segments`` ``B x N``: speaker index of every sentence). fairseq's
        ``forward_embedding`` then scales the sum by ``embed_scale`` (1 for BART) and adds
        positions. Returns ``token_embeddings`` unchanged when segments are off."""
        if self.embed_segments is None:
            return token_embeddings
        if src_segments is None:
            raise HierError(f"this model has {self.embed_segments.num_embeddings} segment "
                            f"embeddings (--segment-embeddings) but the batch carries no "
                            f"src_segments: the data-bin needs SPLIT.segments "
                            f"(fairseq-hier-sentence-bos --speakers) and --task hat_summarization")
        if token_embeddings is None:
            token_embeddings = self.embed_tokens(src_tokens)
        # B x N speaker ids -> B x S, one per token, through each token's sentence
        segments = src_segments.gather(1, sentence_index(src_tokens, self.bos))
        return token_embeddings + self.embed_segments(segments)

    def forward(self, src_tokens, src_lengths: Optional[Tensor] = None,
                return_all_hiddens: bool = False, token_embeddings: Optional[Tensor] = None,
                src_segments: Optional[Tensor] = None):
        """fairseq's encoder forward; ``src_segments`` ``B x N`` when segments are on (unless
        ``token_embeddings`` already include them, as :meth:`LongBARTModel.forward` passes)."""
        if token_embeddings is None or src_segments is not None:
            token_embeddings = self.embed_with_segments(src_tokens, src_segments, token_embeddings)
        return super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)


class HATEncoder(SegmentTransformerEncoder):
    """fairseq's Transformer encoder + the hierarchical encoder layers over the BOS states
    (``--hierarchical-layers N``, parameters ``hierarchical_layers.{0..N-1}.*``)."""

    def __init__(self, args, dictionary, embed_tokens):
        super().__init__(args, dictionary, embed_tokens)
        count = getattr(args, "hierarchical_layers", HIERARCHICAL_LAYERS)
        if count < 1:
            raise HierError(f"--hierarchical-layers must be 1 or more, got {count}")
        # full encoder layers (self-attention over sentences + FFN), as the token layers
        cfg = TransformerConfig.from_namespace(args)
        self.hierarchical_layers = nn.ModuleList(
            [checkpoint_layer(TransformerEncoderLayerBase(cfg), cfg) for _ in range(count)])

    def forward(self, src_tokens, src_lengths: Optional[Tensor] = None,
                return_all_hiddens: bool = False, token_embeddings: Optional[Tensor] = None,
                src_segments: Optional[Tensor] = None):
        """Returns fairseq's encoder dict plus ``sentence_out`` ``[N x B x C]`` and
        ``sentence_padding_mask`` ``[B x N]``."""
        out = super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings,
                              src_segments)
        positions, sentence_padding_mask = sentence_positions(src_tokens, self.bos)  # B x N
        tokens = out["encoder_out"][0]  # S x B x C
        # S x B x C -> B x S x C, gather the BOS states: B x N x C -> N x B x C
        index = positions.unsqueeze(-1).expand(-1, -1, tokens.size(-1))
        sentences = tokens.transpose(0, 1).gather(1, index).transpose(0, 1)
        for layer in self.hierarchical_layers:  # N x B x C -> N x B x C
            sentences = layer(sentences, sentence_padding_mask)
        out["sentence_out"] = [sentences]
        out["sentence_padding_mask"] = [sentence_padding_mask]
        return out

    def upgrade_state_dict_named(self, state_dict, name):
        """fairseq's upgrade; a one-layer checkpoint whose keys name the layer
        ``hierarchical_layer.`` loads as ``hierarchical_layers.0.``."""
        state_dict = super().upgrade_state_dict_named(state_dict, name)
        single = f"{name}.hierarchical_layer." if name else "hierarchical_layer."
        for key in [k for k in state_dict if k.startswith(single)]:
            state_dict[single[:-1] + "s.0." + key[len(single):]] = state_dict.pop(key)
        return state_dict

    @torch.jit.export
    def reorder_encoder_out(self, encoder_out: Dict[str, List[Tensor]], new_order):
        reordered = super().reorder_encoder_out(encoder_out, new_order)
        reordered["sentence_out"] = [encoder_out["sentence_out"][0].index_select(1, new_order)]
        reordered["sentence_padding_mask"] = [
            encoder_out["sentence_padding_mask"][0].index_select(0, new_order)]
        return reordered


class HATDecoderLayer(TransformerDecoderLayerBase):
    """fairseq's decoder layer + the sentence-level attention sublayer (Sec. 3.3)."""

    def __init__(self, cfg, no_encoder_attn=False, add_bias_kv=False, add_zero_attn=False):
        super().__init__(cfg, no_encoder_attn, add_bias_kv, add_zero_attn)
        if self.normalize_before or self.encoder_attn is None:
            raise HierError("HAT decoder layers need post-norm layers with encoder attention "
                            "(--decoder-normalize-before is not supported)")
        # its own MultiheadAttention: fairseq keys incremental caches by module instance
        self.sentence_attn = self.build_encoder_attention(self.embed_dim, cfg)
        self.sentence_attn_layer_norm = LayerNorm(self.embed_dim, export=cfg.export)
        self._sentence_context: Optional[dict] = None  # set by HATDecoder around each forward
        self.encoder_attn_layer_norm.register_forward_hook(self._sentence_sublayer_hook)

    def forward(self, x, *args, **kwargs):
        """fairseq's decoder-layer forward. The sentence context HATDecoder set for this call
        goes to :meth:`layer_forward` as an argument, so that ``--checkpoint-activations``
        (which wraps ``layer_forward``) recomputes the layer in the backward pass with the same
        sentences, after HATDecoder has cleared the attribute."""
        return self.layer_forward(x, *args, sentence_context=self._sentence_context, **kwargs)

    def layer_forward(self, x, *args, sentence_context: Optional[dict] = None, **kwargs):
        """fairseq's layer forward, the sentence sublayer reading ``sentence_context`` (the dict
        HATDecoder builds); the attribute is restored afterwards."""
        outer, self._sentence_context = self._sentence_context, sentence_context
        try:
            return super().forward(x, *args, **kwargs)
        finally:
            self._sentence_context = outer

    def _sentence_sublayer_hook(self, module, inputs, x):
        """Runs right after the token-level block's LayerNorm: ``x`` ``T x B x C``."""
        context = self._sentence_context
        if context is None:  # skipping the sublayer would compute another model, silently
            raise HierError("a HAT decoder layer ran without its sentence context: HATDecoder "
                            "hands it to each layer it holds (HATDecoder.sentence_layers) for "
                            "the duration of its forward; a layer called on its own, or re-run "
                            "by a wrapper after that forward, has none")
        residual = x
        x, attn = self.sentence_attn(
            query=x, key=context["sentence_out"], value=context["sentence_out"],
            key_padding_mask=context["sentence_padding_mask"],
            incremental_state=context["incremental_state"],
            # static_kv only when decoding (cached keys): otherwise, and without weights, fairseq
            # runs torch's fused attention (scaled_dot_product_attention)
            static_kv=context["incremental_state"] is not None,
            need_weights=context["need_weights"])
        context["attn"] = attn  # B x T x N, averaged over heads
        x = self.dropout_module(x)
        return self.sentence_attn_layer_norm(self.residual_connection(x, residual))


class HATDecoder(TransformerDecoder):
    """fairseq's Transformer decoder whose layers also attend over the sentence states; returns
    one layer's sentence attention (averaged over heads) as ``extra["sentence_attn"]``
    ``[B x T x N]``.

    Attributes set by a generator (not options: they change what is returned, not the model):
    ``sentence_attention_layer`` (default -1: the last layer; 004 Figs. 2-3 show every layer) and
    ``sentence_attention_as_attn`` (default False: ``extra["attn"]`` stays fairseq's token-level
    attention; True: it holds the sentence attention instead, so that fairseq's beam search
    keeps it per hypothesis, reordered with the beams, as ``hypo["attention"]`` ``N x T``).
    """

    sentence_attention_layer: int = -1
    sentence_attention_as_attn: bool = False

    def sentence_layers(self) -> List[HATDecoderLayer]:
        """The :class:`HATDecoderLayer` of each entry of ``self.layers``, whatever wraps it
        (FSDP under ``--ddp-backend fully_sharded`` holds the layer as a submodule; an attribute
        set on the wrapper would never reach the layer's hook)."""
        found = []
        for i, layer in enumerate(self.layers):
            inner = next((m for m in layer.modules() if isinstance(m, HATDecoderLayer)), None)
            if inner is None:
                raise HierError(f"HAT decoder layer {i} is a {type(layer).__name__} that holds "
                                f"no HATDecoderLayer: its sentence attention cannot run")
            found.append(inner)
        return found

    def build_decoder_layer(self, args, no_encoder_attn=False):
        cfg = TransformerConfig.from_namespace(args)
        # --checkpoint-activations wraps layer_forward, which takes the sentence context as an
        # argument: the backward pass recomputes the sentence sublayer too
        layer = checkpoint_layer(HATDecoderLayer(cfg, no_encoder_attn), cfg, "layer_forward")
        min_params = 0 if checkpoints_activations(cfg) else cfg.min_params_to_wrap  # as fairseq
        return fsdp_wrap(layer, min_num_params=min_params)

    def extract_features(self, prev_output_tokens, encoder_out: Optional[Dict[str, List[Tensor]]],
                         incremental_state=None, full_context_alignment: bool = False,
                         alignment_layer: Optional[int] = None,
                         alignment_heads: Optional[int] = None):
        if encoder_out is None or "sentence_out" not in encoder_out:
            raise HierError("HATDecoder needs the encoder's sentence_out (a HATEncoder output)")
        contexts = []
        wanted = self.sentence_attention_layer % len(self.layers)
        if not -len(self.layers) <= self.sentence_attention_layer < len(self.layers):
            raise HierError(f"sentence attention layer {self.sentence_attention_layer} does not "
                            f"exist: the decoder has {len(self.layers)} layers")
        layers = self.sentence_layers()
        for i, layer in enumerate(layers):
            context = {"sentence_out": encoder_out["sentence_out"][0],
                       "sentence_padding_mask": encoder_out["sentence_padding_mask"][0],
                       "incremental_state": incremental_state,
                       # the weights are read when evaluating / decoding, not in training
                       "need_weights": i == wanted and not self.training, "attn": None}
            layer._sentence_context = context
            contexts.append(context)
        try:
            x, extra = super().extract_features(
                prev_output_tokens, encoder_out, incremental_state, full_context_alignment,
                alignment_layer, alignment_heads)
        finally:
            for layer in layers:
                layer._sentence_context = None
        extra["sentence_attn"] = [contexts[wanted]["attn"]]  # B x T x N
        if self.sentence_attention_as_attn:
            extra["attn"] = extra["sentence_attn"]
        return x, extra


POSITION_OFFSET = hf_bart.POSITION_OFFSET  # rows 0-1 of a learned position table are unused


def extend_positions(table: Tensor, fresh: Tensor, init: str = POSITION_INIT) -> Tensor:
    """A checkpoint's learned position table ``R x C`` grown to the model's ``fresh`` table
    ``R' x C`` (``R' >= R``): its ``R`` rows are kept, and the rows beyond are

    * ``random`` (004 Sec. 4.1, "the additional positional embedding ... random initialize"):
      the model's own freshly initialised rows ``fresh[R:]``, i.e. fairseq's initialisation of a
      new learned position table in BART (``init_bert_params``: normal(0, 0.02));
    * ``tile``: the checkpoint's real positions (from ``POSITION_OFFSET``) repeated, as LED
      extended BART's 1024 positions to 16K (HF allenai/led-large-16384): position i+1024 starts
      from what position i learnt.
    """
    rows = fresh.size(0)
    if rows < table.size(0):
        raise HierError(f"cannot shrink a position table from {table.size(0)} to {rows} rows")
    if init == "random":
        return torch.cat([table, fresh[table.size(0):].to(table)])
    if init != "tile":
        raise HierError(f"--position-init must be one of {', '.join(POSITION_INITS)}, got '{init}'")
    real = table[POSITION_OFFSET:]  # (R - 2) x C
    copies = -(-(rows - POSITION_OFFSET) // real.size(0))
    return torch.cat([table[:POSITION_OFFSET], real.repeat(copies, 1)[: rows - POSITION_OFFSET]])


@register_model("long_bart")
class LongBARTModel(BARTModel):
    """fairseq's BART that starts from a BART checkpoint through fairseq's own
    ``--restore-file PATH --reset-optimizer --reset-dataloader --reset-meters`` (BART's
    fine-tuning recipe; nothing of the pretrained path is stored in the model's config, so
    fairseq-generate and resumed runs load our checkpoints as any other). On that load,
    ``upgrade_state_dict_named``: extends learned position tables to this model's length
    (:func:`extend_positions`, ``--position-init``), keeps the fresh initialisation of this
    model's new parts (``new_parts``: BART's BERT-style init, normal(0, 0.02) weights, zero
    biases, LayerNorm 1/0) and logs exactly which keys were loaded, new or extended. Any other
    missing key, unused key or shape mismatch is an error naming the keys. The plain baseline of
    the HAT recipes.

    The pretrained BART is either fairseq's (``model.pt`` of the 2019 release: an ``args``
    Namespace, no ``output_projection``, a ``<mask>`` row) or a Hugging Face BART directory given
    as the path itself (:meth:`checkpoint_from_directory`)."""

    #: the tasks whose data this model reads (checked when a task builds it): sources whose
    #: sentences open with BOS
    TASKS = ("hat_summarization", "document_translation")

    # substrings of the parameter names a BART lacks (segments: new also when a dialogue model
    # starts from a CNN/DM-trained one, 004 Table 5)
    new_parts: Tuple[str, ...] = ("encoder.embed_segments.",)

    @staticmethod
    def add_args(parser):
        BARTModel.add_args(parser)
        parser.add_argument("--segment-embeddings", type=int, metavar="K",
                            help="learned speaker segment embeddings added to the token "
                                 "embeddings (004 Sec. 4.1, SAMSum/AMI): K speaker indices; "
                                 "0 = off. Needs SPLIT.segments beside the data-bin "
                                 "(fairseq-hier-sentence-bos --speakers)")
        parser.add_argument("--position-init", choices=POSITION_INITS,
                            help=f"source/target positions beyond those of the checkpoint "
                                 f"loaded (BART's 1024 -> 3072): 'random' keeps this model's "
                                 f"fresh rows (fairseq's init of a learned table in BART, "
                                 f"normal(0, 0.02); 004 Sec. 4.1), 'tile' repeats the "
                                 f"checkpoint's rows (LED's scheme). Default {POSITION_INIT}")

    @classmethod
    def build_model(cls, args, task):
        check_model_options(args)
        return super().build_model(args, task)

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return SegmentTransformerEncoder(args, src_dict, embed_tokens)

    def forward(self, src_tokens, src_lengths, prev_output_tokens,
                src_segments: Optional[Tensor] = None, token_embeddings: Optional[Tensor] = None,
                **kwargs):
        """BART's forward; ``src_segments`` ``B x N`` (speaker index per sentence) when the
        model has segment embeddings: they enter through BART's ``token_embeddings``."""
        token_embeddings = self.encoder.embed_with_segments(src_tokens, src_segments,
                                                            token_embeddings)
        return super().forward(src_tokens, src_lengths, prev_output_tokens,
                               token_embeddings=token_embeddings, **kwargs)

    def checkpoint_from_directory(self, path: str) -> dict:
        """``--finetune-from-model DIR`` / ``--restore-file DIR`` with a Hugging Face BART
        directory: its ``config.json`` checked against this model's options, its weights mapped
        to fairseq's BART keys (:func:`fairseq_hier.models.hf_bart.read_checkpoint`); the
        checkpoint then loads as fairseq's own release does, through
        :meth:`upgrade_state_dict_named`. fairseq's Trainer calls it for a directory
        (:func:`fairseq_hier.compat.patch_directory_checkpoints`)."""
        return hf_bart.read_checkpoint(path, self.args, self.encoder.embed_tokens.num_embeddings)

    def _is_new(self, key: str) -> bool:
        return any(part in key for part in self.new_parts)

    def upgrade_state_dict_named(self, state_dict, name):
        super().upgrade_state_dict_named(state_dict, name)
        prefix = name + "." if name != "" else ""
        own = {prefix + k: v for k, v in self.state_dict().items()}
        new = sorted(k for k in own if k not in state_dict and self._is_new(k))
        missing = sorted(k for k in own if k not in state_dict and not self._is_new(k))
        unused = sorted(k for k in state_dict if k not in own)
        if missing or unused:
            raise HierError(f"checkpoint does not fit {type(self).__name__}: missing keys "
                            f"{missing or 'none'}; unused keys {unused or 'none'}")
        extended = []
        init = getattr(self.args, "position_init", None) or POSITION_INIT
        for key, value in own.items():
            if key not in state_dict or state_dict[key].shape == value.shape:
                continue
            if key.endswith("embed_positions.weight") and state_dict[key].size(1) == value.size(1):
                old = state_dict[key].size(0)
                state_dict[key] = extend_positions(state_dict[key], value, init)
                extended.append(f"{key} {old} -> {value.size(0)} rows")
            else:
                raise HierError(f"checkpoint key {key} has shape {tuple(state_dict[key].shape)}, "
                                f"the model {tuple(value.shape)}")
        for key in new:
            state_dict[key] = own[key].clone()
        if new or extended:
            loaded = len(own) - len(new)
            logger.info(f"initialised {type(self).__name__} from a pretrained checkpoint: "
                        f"{loaded} keys loaded; new (fresh init) {len(new)}: {new}; extended "
                        f"({init}): {extended or 'none'}; missing: none; unused: none")


class HierarchicalBuilders:
    """The two hooks that make a fairseq Transformer (or BART) a HAT (and its options and
    checks)."""

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--hierarchical-layers", type=int, metavar="N",
                            help=f"hierarchical encoder layers over the sentence (BOS) states "
                                 f"(004 Sec. 3.2 kept one of those it tried). Default "
                                 f"{HIERARCHICAL_LAYERS}")

    @classmethod
    def build_model(cls, args, task):
        check_model_options(args)
        return super().build_model(args, task)

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens):
        return HATEncoder(args, src_dict, embed_tokens)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        return HATDecoder(args, tgt_dict, embed_tokens,
                          no_encoder_attn=getattr(args, "no_cross_attention", False))


@register_model("hat")
class HATModel(HierarchicalBuilders, LongBARTModel):
    """BART with hierarchical attention (paper 004). Same options as fairseq's ``bart``; from a
    BART checkpoint with ``--restore-file`` (see :class:`LongBARTModel`)."""

    new_parts = LongBARTModel.new_parts + (
        "encoder.hierarchical_layers.", ".sentence_attn.", ".sentence_attn_layer_norm.")

    def set_beam_size(self, beam):
        """BART's beamable encoder attention leaves encoder outputs unexpanded and turns
        ``reorder_encoder_out`` into a no-op (NOTES D); the sentence attention must then be
        beamable too, or it would pair a beam's queries with another example's sentences."""
        super().set_beam_size(beam)
        for layer in self.decoder.sentence_layers():
            if hasattr(layer.sentence_attn, "set_beam_size"):
                layer.sentence_attn.set_beam_size(beam)


def hat_options(args):
    """The default of our HAT option (hierarchical layers), shared by every HAT preset."""
    args.hierarchical_layers = getattr(args, "hierarchical_layers", HIERARCHICAL_LAYERS)


def long_bart_options(args):
    """The defaults of our BART options, shared by the ``hat_bart_*`` and ``long_bart_*``
    presets: 3072 source positions (Sec. 4.1), no segments, added positions at random."""
    args.max_source_positions = getattr(args, "max_source_positions", 3072)
    args.segment_embeddings = getattr(args, "segment_embeddings", 0)
    args.position_init = getattr(args, "position_init", POSITION_INIT)


@register_model_architecture("hat", "hat_bart_large")
def hat_bart_large(args):
    """BART-large dims (12+12 layers, 1024/4096/16, GELU), 3072 source positions (Sec. 4.1)."""
    hat_options(args)
    long_bart_options(args)
    bart_large_architecture(args)


@register_model_architecture("hat", "hat_bart_base")
def hat_bart_base(args):
    """BART-base dims (6+6 layers, 768/3072/12, GELU), 3072 source positions."""
    hat_options(args)
    long_bart_options(args)
    bart_base_architecture(args)


@register_model_architecture("long_bart", "long_bart_large")
def long_bart_large(args):
    """``bart_large`` with 3072 source positions: the plain baseline of ``hat_bart_large``."""
    long_bart_options(args)
    bart_large_architecture(args)


@register_model_architecture("long_bart", "long_bart_base")
def long_bart_base(args):
    """``bart_base`` with 3072 source positions: the plain baseline of ``hat_bart_base``."""
    long_bart_options(args)
    bart_base_architecture(args)


@register_model("hat_transformer")
class HATTransformerModel(HierarchicalBuilders, TransformerModel):
    """fairseq's Transformer (trained from scratch, fairseq's init and sinusoidal positions)
    with hierarchical attention: the document-translation models of 004 Sec. 4.2. Same options
    as fairseq's ``transformer``; every source sentence opens with the BOS symbol."""

    #: the tasks whose data this model reads (checked when a task builds it): sources whose
    #: sentences open with BOS
    TASKS = ("hat_summarization", "document_translation")


@register_model_architecture("hat_transformer", "hat_transformer_wmt_en_de")
def hat_transformer_wmt_en_de(args):
    """004 Sec. 4.2, En-De / En-Cs: 6+6 layers, 1024, FFN 4096, 16 heads, one hierarchical
    encoder layer; the baseline is fairseq's ``transformer_wmt_en_de_big`` (same dims)."""
    hat_options(args)
    transformer_wmt_en_de_big(args)


@register_model_architecture("transformer", "transformer_iwslt_zh_en")
def transformer_iwslt_zh_en(args):
    """004 Sec. 4.2, Zh-En: fairseq's plain Transformer with the En-De layout (6+6 layers) at 512,
    FFN 1024, 4 heads: the baseline of ``hat_transformer_iwslt_zh_en``."""
    args.encoder_embed_dim = getattr(args, "encoder_embed_dim", 512)
    args.encoder_ffn_embed_dim = getattr(args, "encoder_ffn_embed_dim", 1024)
    args.encoder_attention_heads = getattr(args, "encoder_attention_heads", 4)
    args.decoder_embed_dim = getattr(args, "decoder_embed_dim", args.encoder_embed_dim)
    args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", args.encoder_ffn_embed_dim)
    args.decoder_attention_heads = getattr(args, "decoder_attention_heads", 4)
    transformer_wmt_en_de_big(args)


@register_model_architecture("hat_transformer", "hat_transformer_iwslt_zh_en")
def hat_transformer_iwslt_zh_en(args):
    """004 Sec. 4.2, Zh-En: ``transformer_iwslt_zh_en`` dims + one hierarchical encoder layer."""
    hat_options(args)
    transformer_iwslt_zh_en(args)
