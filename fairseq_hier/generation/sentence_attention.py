"""fairseq's beam search that also returns HAT's sentence attention per hypothesis (paper 004,
Sec. 6 "What has the hierarchical attention learned?", Figures 2-3).

The generator post-processes fairseq's hypotheses (no copy of ``_generate``) into
``hypo["attention"]`` and the ``A-`` lines of ``--print-sentence-attention``
(:func:`format_sentence_alignment`). How the attention travels and the line format: docs/models.md,
section fairseq_hier.generation.sentence_attention.

Shape legend: ``B`` batch, ``K`` beam, ``N`` sentences (BOS markers) in the batch's longest
source, ``N_i`` sentences of example ``i``, ``T`` target steps of a hypothesis (its tokens,
final EOS included). Masks follow fairseq: True = padding (an absent sentence).
Imports ``models.hat``; torch, fairseq.
"""

from typing import List

import torch
from fairseq.sequence_generator import EnsembleModel, SequenceGenerator

from fairseq_hier.models.hat import HATDecoder, sentence_positions
from ..errors import HierError


def format_sentence_alignment(attention) -> List[List[str]]:
    """``N x T`` sentence attention (a tensor or nested sequences) -> ``T`` lists of ``N``
    ``"%.6f"`` strings: fairseq's soft-alignment form (``utils.extract_soft_alignment``)."""
    rows = attention.tolist() if hasattr(attention, "tolist") else attention  # N x T
    return [["%.6f" % w for w in step] for step in zip(*rows)]  # N x T -> T x N


def _hat_decoders(models) -> List[HATDecoder]:
    """The decoders of the ensemble; ValueError unless every one is a HAT decoder."""
    decoders = []
    for model in (models.models if isinstance(models, EnsembleModel) else models):
        decoder = getattr(model, "decoder", None)
        if not isinstance(decoder, HATDecoder):
            raise HierError(f"SentenceAttentionSequenceGenerator needs a HAT model (hat, "
                            f"hat_transformer), got {type(model).__name__}")
        decoders.append(decoder)
    return decoders


class SentenceAttentionSequenceGenerator(SequenceGenerator):
    """fairseq's :class:`SequenceGenerator` whose hypotheses carry HAT's sentence attention.

    Args:
        models: HAT models (``hat``, ``hat_transformer``), or fairseq's ``EnsembleModel`` of them;
            with several, the attention is their average (as fairseq averages ``attn``).
        tgt_dict: target dictionary.
        sentence_attention_layer: the decoder layer whose sentence attention is returned (-1:
            the last; 004 Figs. 2-3 show each of the 12 layers).
        **kwargs: fairseq's generator options (beam_size, max_len_b, lm_model, lm_weight, ...).

    Side effect: the decoders of ``models`` keep ``sentence_attention_as_attn = True`` and the
    chosen layer, i.e. their ``extra["attn"]`` is the sentence attention from then on.
    """

    def __init__(self, models, tgt_dict, sentence_attention_layer: int = -1, **kwargs):
        decoders = _hat_decoders(models)  # before fairseq wraps them
        for decoder in decoders:
            n = len(decoder.layers)
            if not -n <= sentence_attention_layer < n:
                raise HierError(f"sentence attention layer {sentence_attention_layer} does not "
                                f"exist: the decoder has {n} layers (0..{n - 1} or -{n}..-1)")
            decoder.sentence_attention_layer = sentence_attention_layer
            decoder.sentence_attention_as_attn = True
        super().__init__(models, tgt_dict, **kwargs)
        self.sentence_attention_layer = sentence_attention_layer

    @torch.no_grad()
    def generate(self, models, sample, **kwargs):
        """fairseq's beam search (same hypotheses, same scores), then for every hypothesis
        ``attention`` ``N_i x T`` and ``alignment`` (``T`` lists of ``N_i`` strings)."""
        finalized = super().generate(models, sample, **kwargs)
        bos = self.model.single_model.encoder.dictionary.bos()
        _, absent = sentence_positions(sample["net_input"]["src_tokens"], bos)  # B x N
        for i, hypos in enumerate(finalized):  # after decoding: host reads are output formatting
            for hypo in hypos:
                hypo["attention"] = self._present_rows(hypo["attention"], ~absent[i])
                hypo["alignment"] = format_sentence_alignment(hypo["attention"].float().cpu())
        return finalized

    @staticmethod
    def _present_rows(attention: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
        """``N x T`` -> ``N_i x T``: the rows of the example's present sentences."""
        if attention.dim() != 2 or attention.size(0) != present.numel():
            raise HierError(f"a hypothesis' attention has shape {tuple(attention.shape)}, "
                            f"expected {present.numel()} sentences x T steps (is the decoder's "
                            f"sentence_attention_as_attn set?)")
        return attention[present.to(attention.device)]

