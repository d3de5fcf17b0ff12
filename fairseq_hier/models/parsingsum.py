"""ParsingSum (Ma et al., paper 003): linguistic-guided attention (LGA,
:mod:`fairseq_hier.modules.linguistic_attention`) in the encoder self-attention of 003's FT
(``parsingsum_ft``: ``transformer_copy`` of :mod:`~.transformer_copy`, with its ``--ft-form`` and
copy attention, LGA in every encoder layer; ``B x S`` sources) and of Liu & Lapata's Hierarchical
Transformer's local layers (``parsingsum_ht``: ``B x P x L`` sources). Both read the task's
dependency parse (``src_words`` / ``src_heads``: two ids per piece), from which the encoder builds
one guide per batch (:func:`build_guide`) for all its LGA layers; LGA's options:
:class:`LGAConfig`. Where LGA sits (Eq. 8-9) and the equations' readings: docs/models.md,
section fairseq_hier.modules.linguistic_attention.

May import ``fairseq_hier.modules``, ``fairseq_hier.errors`` and this package's models; torch and
fairseq.

Legend: B batch, S source pieces, P paragraphs, N present paragraphs, L pieces per paragraph.
Masks: True = padding.
"""

from dataclasses import dataclass, field
from typing import Optional

from fairseq.dataclass import ChoiceEnum, FairseqDataclass
from fairseq.models import register_model, register_model_architecture
from torch import Tensor

from ..errors import HierError
from ..modules.linguistic_attention import (DIAGONALS, FUSIONS, LGAEncoderLayer,
                                            LinguisticGuide, make_guide, set_guides)
from .checkpointing import checkpoint_layer
from .hierarchical_transformer import config_from_args, fill_defaults
from .liu_ht import LiuHTConfig, LiuHTEncoder, LiuHTModel
from .option_checks import check_model_options
from .transformer_copy import SourceTokensEncoder, TransformerCopyModel, ft_shape


@dataclass
class LGAConfig(FairseqDataclass):
    """The options of linguistic-guided attention (003 Sec. 2.2, Table 6)."""

    lga_alpha: float = field(
        default=2.0, metadata={"help": "alpha of Eq. 4 (003: 2 for ParsingSum-FT, 3 for -HT; 0 = "
                                       "the plain model)"})
    lga_fusion: ChoiceEnum(FUSIONS) = field(
        default="alpha", metadata={"help": "alpha: Eq. 4, alpha M (.) Att + Att; direct: Eq. 10, "
                                           "sigma M + Att (Table 6 P0.25); gaussian: Eq. 11-12, "
                                           "(1 - M (.) Att)^2 / sigma + Att (G0.25, G8)"})
    lga_sigma: float = field(
        default=0.25, metadata={"help": "sigma of --lga-fusion direct / gaussian (Table 6: 0.25 "
                                        "and 8)"})
    lga_diagonal: ChoiceEnum(DIAGONALS) = field(
        default="none", metadata={"help": "self-links of M: none = only dependency arcs (Eq. 1); "
                                          "ours: word = also all pieces of the piece's own word "
                                          "(itself included); piece = also the piece itself"})


def build_guide(lga: LGAConfig, src_words: Optional[Tensor], src_heads: Optional[Tensor],
                shape, rows: Optional[Tensor] = None) -> LinguisticGuide:
    """The guide of one batch: ``src_words`` / ``src_heads`` of the sources' ``shape`` (``B x S``,
    or ``B x P x L``), flattened to rows of the last dimension; ``rows`` (optional) selects the
    rows the encoder reads (``parsingsum_ht``: the present paragraphs)."""
    if src_words is None or src_heads is None:
        raise HierError("ParsingSum needs the dependency parse of the source: pass the task's "
                        "--dependency-parse NAME (files SPLIT.parse.NAME.{bin,idx} written by "
                        "fairseq-hier-parse project)")
    if tuple(src_words.shape) != tuple(shape) or tuple(src_heads.shape) != tuple(shape):
        raise HierError(f"src_words {tuple(src_words.shape)} / src_heads "
                        f"{tuple(src_heads.shape)} do not match the source pieces {tuple(shape)}")
    fusion, diagonal = str(lga.lga_fusion), str(lga.lga_diagonal)
    weight = lga.lga_alpha if fusion == "alpha" else lga.lga_sigma
    if fusion == "gaussian" and weight <= 0:
        raise HierError(f"--lga-fusion gaussian divides by --lga-sigma: it must be > 0, got "
                        f"{weight}")
    words, heads = src_words.reshape(-1, shape[-1]), src_heads.reshape(-1, shape[-1])
    if rows is not None:
        words, heads = words.index_select(0, rows), heads.index_select(0, rows)
    return make_guide(words, heads, fusion, float(weight), diagonal)


# ----------------------------------------------------------------------------- ParsingSum-FT
class ParsingSumFTEncoder(SourceTokensEncoder):
    """fairseq's Transformer encoder whose layers use LGA (003 ParsingSum-FT); its output keeps
    ``src_tokens`` for the copy attention."""

    lga: LGAConfig = LGAConfig()  # replaced by ParsingSumFTModel.build_model

    def build_encoder_layer(self, cfg):
        # --checkpoint-activations: the recomputation reads the same guide (set_guides keeps it
        # until the next forward)
        return checkpoint_layer(LGAEncoderLayer(cfg), cfg)

    def forward(self, src_tokens, src_lengths: Optional[Tensor] = None,
                return_all_hiddens: bool = False, token_embeddings: Optional[Tensor] = None,
                src_words: Optional[Tensor] = None, src_heads: Optional[Tensor] = None):
        """fairseq's encoder forward; src_words / src_heads: ``B x S`` (see
        :func:`dependency_matrix`), from the task's ``--dependency-parse``."""
        set_guides(self.layers, build_guide(self.lga, src_words, src_heads, src_tokens.shape))
        return super().forward(src_tokens, src_lengths, return_all_hiddens, token_embeddings)


class ReadsDependencies:
    """What both ParsingSum models add to their plain model: the task batches the parse for them
    (``reads_dependencies``), and their encoder gets the LGA options after it is built."""

    reads_dependencies = True

    @classmethod
    def build_model(cls, args, task):
        check_model_options(args)
        lga = config_from_args(args, LGAConfig)
        if str(lga.lga_fusion) == "gaussian" and lga.lga_sigma <= 0:
            raise HierError(f"--lga-fusion gaussian divides by --lga-sigma: it must be > 0, got "
                            f"{lga.lga_sigma}")
        model = super().build_model(args, task)
        # fairseq (and liu_ht) turn args into their configs, which drop our options, before they
        # call build_encoder: the encoder gets them here (no parameter depends on them)
        model.encoder.lga = lga
        return model


@register_model("parsingsum_ft")
class ParsingSumFTModel(ReadsDependencies, TransformerCopyModel):
    """ParsingSum-FT (003): ``transformer_copy`` (003's FT: its ``--ft-form``, copy attention
    and ``--copy-projection``) with LGA in every encoder layer; reads flat ``B x S`` sources and
    their dependency parse."""

    @classmethod
    def add_args(cls, parser):
        from fairseq.dataclass.utils import gen_parser_from_dataclass

        super().add_args(parser)
        gen_parser_from_dataclass(parser, LGAConfig(), delete_default=True)

    @classmethod
    def build_encoder(cls, cfg, src_dict, embed_tokens):
        from fairseq.models.transformer import TransformerConfig

        return ParsingSumFTEncoder(TransformerConfig.from_namespace(cfg), src_dict, embed_tokens)

    def forward(self, src_tokens, src_lengths, prev_output_tokens, src_words=None, src_heads=None,
                return_all_hiddens: bool = True, features_only: bool = False,
                alignment_layer: Optional[int] = None, alignment_heads: Optional[int] = None):
        """fairseq's Transformer forward, with the parse going to the encoder."""
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths,
                                   return_all_hiddens=return_all_hiddens, src_words=src_words,
                                   src_heads=src_heads)
        return self.decoder(prev_output_tokens, encoder_out=encoder_out,
                            features_only=features_only, alignment_layer=alignment_layer,
                            alignment_heads=alignment_heads, src_lengths=src_lengths,
                            return_all_hiddens=return_all_hiddens)


@register_model_architecture("parsingsum_ft", "parsingsum_ft")
def parsingsum_ft(args):
    """003 Sec. 3.2: the FT baseline's settings (:func:`ft_shape`: OpenNMT's pre-LN form, copy
    attention with its own projection), alpha 2;
    Adam (0.9, 0.998), lr 1e-3, 8000 warm-up updates are optimizer options (see
    examples/multi_news)."""
    fill_defaults(args, LGAConfig)
    ft_shape(args)


# ----------------------------------------------------------------------------- ParsingSum-HT
class ParsingSumHTEncoder(LiuHTEncoder):
    """``liu_ht``'s encoder whose local layers use LGA (003 ParsingSum-HT); global layers are
    Liu & Lapata's, unchanged (``M`` is intra-sentence, so intra-paragraph)."""

    lga: LGAConfig = LGAConfig()  # replaced by ParsingSumHTModel.build_model

    def build_local_layer(self, cfg):
        return LGAEncoderLayer(cfg)

    def forward(self, src_tokens: Tensor, src_lengths: Optional[Tensor] = None,
                paragraph_graph: Optional[Tensor] = None, src_words: Optional[Tensor] = None,
                src_heads: Optional[Tensor] = None, **kwargs):
        """src_tokens, src_words, src_heads: ``B x P x L``."""
        if src_tokens.dim() != 3:
            raise HierError(f"parsingsum_ht expects B x P x L src_tokens, got shape "
                            f"{tuple(src_tokens.shape)} (is the task's --source-layout flat?)")
        # the rows liu_ht encodes: present paragraphs, example-major (LiuHTEncoder.forward)
        # N; nonzero() syncs with the host once per batch (encoder), as liu_ht's own does
        rows = src_tokens.ne(self.padding_idx).any(-1).view(-1).nonzero().squeeze(1)
        set_guides(self.layers, build_guide(self.lga, src_words, src_heads, src_tokens.shape,
                                            rows))  # ids of N x L
        return super().forward(src_tokens, src_lengths, paragraph_graph=paragraph_graph)


@dataclass
class ParsingSumHTConfig(LiuHTConfig, LGAConfig):
    """liu_ht's options and LGA's; :func:`parsingsum_ht` sets 003's values."""


@register_model("parsingsum_ht")
class ParsingSumHTModel(ReadsDependencies, LiuHTModel):
    """ParsingSum-HT (003): ``liu_ht`` with LGA in its local layers; ``B x P x L`` sources."""

    @classmethod
    def add_args(cls, parser):
        from fairseq.dataclass.utils import gen_parser_from_dataclass

        gen_parser_from_dataclass(parser, ParsingSumHTConfig(), delete_default=True)

    @classmethod
    def build_encoder(cls, cfg, liu_cfg, dictionary, embed_tokens):
        return ParsingSumHTEncoder(cfg, liu_cfg, dictionary, embed_tokens)

    def forward(self, src_tokens, src_lengths, prev_output_tokens, paragraph_graph=None,
                src_words=None, src_heads=None, **kwargs):
        """liu_ht's forward, with the parse going to the encoder."""
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths,
                                   paragraph_graph=paragraph_graph, src_words=src_words,
                                   src_heads=src_heads)
        return self.decoder(prev_output_tokens, encoder_out=encoder_out, src_lengths=src_lengths,
                            **kwargs)


@register_model_architecture("parsingsum_ht", "parsingsum_ht")
def parsingsum_ht(args):
    """003 Sec. 3.2: HT with 6 local + 2 global layers, 8 heads, alpha 3; the rest is liu_ht's."""
    args.encoder_layers = getattr(args, "encoder_layers", 8)
    args.global_layers = getattr(args, "global_layers", "6,7")
    args.lga_alpha = getattr(args, "lga_alpha", 3.0)
    fill_defaults(args, ParsingSumHTConfig)
