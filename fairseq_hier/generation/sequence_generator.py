"""fairseq's SequenceGenerator with attention alignment (001 Sec. 4) and the papers' decoding rules.

:class:`AttentionAlignmentSequenceGenerator` changes fairseq's generator only through its seams
(:class:`TrackingEnsembleModel`, ``finalize_hypos``, :class:`AlignedBeamSearch`,
:class:`PreviousTokenBlocker`, :class:`CoveragePenalty`), so every other ``fairseq-generate``
option keeps its meaning. Each seam, the length-penalty forms, the coverage penalty and the rule
against host syncs at every step: docs/models.md, section
fairseq_hier.generation.sequence_generator.

Legend: B sentences, K beam, N = B*K rows, P paragraphs, L tokens per paragraph, V vocab.
Imports ``generation``, ``models``, ``modules``, ``data``, ``errors``; torch, fairseq.
"""

import contextlib
import logging
import math
from typing import Callable, Dict, List, Optional

import torch
import torch.nn as nn
from fairseq import search
from fairseq.sequence_generator import EnsembleModel, SequenceGenerator
from torch import Tensor

from ..errors import HierError
from ..modules.copy_attention import copyable_tokens
from ..modules.masking import masked_fill_scores
from .alignment import AlignmentTracker

logger = logging.getLogger(__name__)


def wu_length_penalty(length: int, alpha: float) -> float:
    """Wu et al. (2016): ``lp(Y) = ((5 + |Y|) / 6) ** alpha``."""
    return ((5.0 + length) / 6.0) ** alpha


def summary_coverage_penalty(coverage: Tensor, beta: float) -> Tensor:
    """OpenNMT's "summary" coverage penalty: ``beta * (sum_i max(cov_i, 1) - n)``, ``n`` the
    number of keys. coverage: ``N x S`` (a padded key has 0, which adds ``1 - 1``). Returns N."""
    return beta * (coverage.clamp_min(1.0).sum(-1) - coverage.size(-1))


class CoveragePenalty:
    """The stepwise summary coverage penalty of one batch, in the generator's row order:
    :meth:`step` takes a step's attention and returns each row's increase of the penalty.

    ``keys`` (given to :meth:`start`): ``B x S`` bool, the keys that count (True); the
    attention on the others (a flat source's EOS and padding) is left out, as if their columns
    were absent. None: every key counts."""

    def __init__(self, beta: float):
        self.beta = beta
        self.keys: Optional[Tensor] = None  # N x S bool, the keys that count
        self.coverage: Optional[Tensor] = None  # N x S, attention summed over the steps so far
        self.penalty: Optional[Tensor] = None  # N, cp(coverage)

    def start(self, keys: Optional[Tensor] = None) -> None:
        self.keys = keys
        self.coverage = self.penalty = None

    def reorder(self, new_order: Tensor) -> None:
        if self.keys is not None:
            self.keys = self.keys.index_select(0, new_order)
        if self.coverage is not None:
            self.coverage = self.coverage.index_select(0, new_order)
            self.penalty = self.penalty.index_select(0, new_order)

    def step(self, attn: Optional[Tensor]) -> Tensor:
        """attn: ``N x S``, this step's attention. Returns ``N``: ``cp(cov + attn) - cp(cov)``."""
        if attn is None:
            raise HierError("--coverage-penalty summary needs a model whose decoder returns its "
                            "encoder attention (extra['attn'])")
        attn = attn.float()
        if self.keys is not None:
            if self.keys.shape != attn.shape:
                raise HierError(f"--coverage-penalty summary: the decoder's attention has "
                                f"{attn.size(-1)} keys, the source {self.keys.size(-1)} tokens, "
                                f"so its EOS cannot be left out (--coverage-count-eos counts "
                                f"every key)")
            attn = attn * self.keys  # a zero column adds max(0, 1) - 1 = 0: as if absent
        coverage = attn if self.coverage is None else self.coverage + attn
        penalty = summary_coverage_penalty(coverage, self.beta)
        increase = penalty if self.penalty is None else penalty - self.penalty
        self.coverage, self.penalty = coverage, penalty
        return increase


class TrackingEnsembleModel(EnsembleModel):
    """fairseq's EnsembleModel that also maintains an :class:`AlignmentTracker` (when
    ``tracker`` is given) and a :class:`CoveragePenalty` (when ``coverage`` is given).

    ``target_fn(model, encoder_out)`` returns the ``B x P`` alignment target of the
    batch (or None); it sees the first model of the ensemble (the attention is the ensemble's
    average, as fairseq averages it)."""

    def __init__(self, models, tracker: Optional[AlignmentTracker] = None,
                 target_fn: Optional[Callable] = None,
                 coverage: Optional[CoveragePenalty] = None,
                 coverage_ignore: Optional[List[int]] = None):
        super().__init__(models)
        self.tracker = tracker
        self.target_fn = target_fn
        self.coverage = coverage
        self.coverage_ignore = coverage_ignore  # source ids left out of the coverage

    def coverage_keys(self, src_tokens: Tensor) -> Optional[Tensor]:
        """``B x S`` bool, the keys that count in the coverage of a flat source (not EOS,
        padding or BOS: the copy distribution's copyable tokens); None for ``B x P x L``
        sources, whose attention has no EOS key (paragraphs, or liu_ht's memory of real
        tokens), or when every key counts."""
        if self.coverage_ignore is None or src_tokens.dim() != 2:
            return None
        return copyable_tokens(src_tokens, self.coverage_ignore)

    def forward_encoder(self, net_input: Dict[str, Tensor]):
        encoder_outs = super().forward_encoder(net_input)
        if self.coverage is not None:
            self.coverage.start(self.coverage_keys(net_input["src_tokens"]))
        if self.tracker is not None:
            out = encoder_outs[0]
            present = ~out["paragraph_padding_mask"][0]  # B x P
            self.tracker.start(present, self.target_fn(self.single_model, out))
        return encoder_outs

    def reorder_encoder_out(self, encoder_outs, new_order):
        if self.tracker is not None:
            self.tracker.reorder(new_order)
        if self.coverage is not None:
            self.coverage.reorder(new_order)
        return super().reorder_encoder_out(encoder_outs, new_order)

    def forward_decoder(self, tokens, encoder_outs, incremental_states, temperature: float = 1.0):
        lprobs, attn = super().forward_decoder(tokens, encoder_outs, incremental_states, temperature)
        if self.tracker is not None:
            self.tracker.update(attn)  # N x P, this step's paragraph attention
        if self.coverage is not None:  # the running score becomes sum log p - cp
            lprobs = lprobs - self.coverage.step(attn).to(lprobs).unsqueeze(-1)  # N x V
        return lprobs, attn


class TopCandidateBeamSearch(search.BeamSearch):
    """fairseq's beam search that also keeps, for the step at hand, whether each sentence's best
    candidate is EOS (``top_is_eos``, ``B`` bool, on the device): what ``--stop-on-top-beam``
    reads when fairseq finalizes hypotheses."""

    def __init__(self, tgt_dict):
        super().__init__(tgt_dict)
        self.top_is_eos: Optional[Tensor] = None

    def step(self, step, lprobs, scores, prev_output_tokens=None, original_batch_idxs=None,
             candidate_multiple: int = 2):
        cand_scores, cand_indices, cand_beams = super().step(
            step, lprobs, scores, prev_output_tokens, original_batch_idxs, candidate_multiple)
        # candidates come sorted by score (topk): column 0 is each sentence's best
        self.top_is_eos = cand_indices[:, 0].eq(self.eos) & cand_scores[:, 0].ne(-math.inf)
        return cand_scores, cand_indices, cand_beams


class AlignedBeamSearch(TopCandidateBeamSearch):
    """Beam search whose candidates are ranked by ``cum log P + |y|^lenpen * beta * bonus`` (the
    length-normalised Eq. 17 times the common length); returned scores stay cumulative log P."""

    def __init__(self, tgt_dict, beam_bias: Callable[[int], Tensor]):
        super().__init__(tgt_dict)
        self.beam_bias = beam_bias

    def step(self, step, lprobs, scores, prev_output_tokens=None, original_batch_idxs=None,
             candidate_multiple: int = 2):
        bsz, beam = lprobs.shape[:2]
        bias = self.beam_bias(step).view(bsz, beam).to(lprobs)  # B x K
        cand_scores, cand_indices, cand_beams = super().step(
            step, lprobs + bias.unsqueeze(-1), scores, prev_output_tokens, original_batch_idxs,
            candidate_multiple)
        return cand_scores - bias.gather(1, cand_beams), cand_indices, cand_beams


class PreviousTokenBlocker(nn.Module):
    """fairseq's n-gram blocker hook, plus: forbid the previous ``n`` generated tokens that are
    not ``allowed`` ones (e.g. the comma), found among the last ``2n`` as the authors' code does
    (yema2018/wiki_sum ``main.py``: the last ``2n`` tokens, the comma removed, the last ``n``
    kept). ``count_exceptions``: forbid those of the last ``n`` tokens that are not allowed
    (an exception then takes one of the ``n`` places). Called as
    ``blocker(tokens, lprobs, bsz, beam, step)``."""

    def __init__(self, inner: Optional[nn.Module], n: int, allowed: List[int], pad: int,
                 count_exceptions: bool = False):
        super().__init__()
        self.inner, self.n, self.pad = inner, n, pad
        self.count_exceptions = count_exceptions
        self.register_buffer("allowed", torch.tensor(sorted(set(allowed)), dtype=torch.long),
                             persistent=False)

    def forward(self, tokens: Tensor, lprobs: Tensor, bsz: int, beam_size: int, step: int):
        if self.inner is not None:
            lprobs = self.inner(tokens, lprobs, bsz, beam_size, step)
        if step == 0:
            return lprobs
        window = self.n if self.count_exceptions else 2 * self.n
        # tokens: N x (step + 1), column 0 is BOS; the last generated tokens, N x w (w <= window)
        recent = tokens[:, max(1, step + 1 - window): step + 1]
        counted = ~torch.isin(recent, self.allowed.to(recent.device))  # N x w
        # rank from the right among the counted tokens: 1 = the most recent one
        rank = counted.flip(1).long().cumsum(1).flip(1)  # N x w
        banned = counted & rank.le(self.n)
        recent = recent.masked_fill(~banned, self.pad)
        # -inf bans a token as fairseq's own generator does: lprobs are float32 (fairseq's
        # log_softmax upcasts), and a row keeps finite entries, so no NaN arises in any precision
        return lprobs.scatter(1, recent, float("-inf"))  # pad is never chosen anyway


class AttentionAlignmentSequenceGenerator(SequenceGenerator):
    """See the module docstring. ``strategy`` None disables alignment (decoding rules only)."""

    def __init__(self, models, tgt_dict, strategy: Optional[str] = None, beta: float = 0.8,
                 predictor: Optional[nn.Module] = None, ranker_scores=None, epsilon: float = 1e-6,
                 live_beams: bool = False, keep_paragraphs: int = 0, block_previous: int = 0,
                 block_allowed: Optional[List[int]] = None, print_alignment=None,
                 length_penalty_form: str = "fairseq", coverage_beta: Optional[float] = None,
                 coverage_count_eos: bool = False, block_count_exceptions: bool = False,
                 stop_on_top_beam: bool = False, **kwargs):
        self.tracker = AlignmentTracker()
        # the tracker needs hierarchical models; decoding rules alone work with any model
        coverage = None if coverage_beta is None else CoveragePenalty(coverage_beta)
        ensemble = models
        if strategy is not None or coverage is not None:
            ignore = None if coverage_count_eos else [tgt_dict.pad(), tgt_dict.eos(),
                                                      tgt_dict.bos()]
            ensemble = TrackingEnsembleModel(
                models, self.tracker if strategy is not None else None, self._alignment_target,
                coverage, ignore)
        for flag, wanted in (("--align-live-beams", live_beams),
                             ("--stop-on-top-beam", stop_on_top_beam)):
            if wanted and kwargs.get("search_strategy") is not None and \
                    type(kwargs["search_strategy"]) is not search.BeamSearch:
                raise HierError(f"{flag} works with beam search only (not with sampling, "
                                f"diverse or constrained search)")
        if live_beams:
            if strategy is None:
                raise HierError("--align-live-beams needs --attention-alignment")
            kwargs["search_strategy"] = AlignedBeamSearch(tgt_dict, self._beam_bias)
        elif stop_on_top_beam:
            kwargs["search_strategy"] = TopCandidateBeamSearch(tgt_dict)
        super().__init__(ensemble, tgt_dict, **kwargs)
        self.stop_on_top_beam = stop_on_top_beam
        self._top_is_eos: List[bool] = []
        self.strategy, self.beta, self.epsilon = strategy, beta, epsilon
        if length_penalty_form not in ("fairseq", "wu"):
            raise HierError(f"--length-penalty-form must be fairseq or wu, got "
                            f"{length_penalty_form!r}")
        self.length_penalty_form = length_penalty_form
        self.predictor, self.ranker_scores = predictor, ranker_scores
        self.keep_paragraphs = keep_paragraphs
        self.print_alignment = print_alignment
        self._batch_target: Optional[Tensor] = None
        if block_previous > 0:
            self.repeat_ngram_blocker = PreviousTokenBlocker(
                self.repeat_ngram_blocker, block_previous, block_allowed or [], self.pad,
                block_count_exceptions)

    # ------------------------------------------------------------------ targets
    def _alignment_target(self, model, encoder_out) -> Optional[Tensor]:
        """``B x P`` eta_hat for attalign (predicted), the ranker distribution for extprob."""
        if self.strategy == "extprob":
            return self._batch_target
        if self.strategy == "attalign":
            return self._predict(model, encoder_out)
        return None

    def _predict(self, model, encoder_out) -> Tensor:
        """eta_hat from the attention-prediction model over the paragraph embeddings (B x P)."""
        phi = model.encoder.paragraph_embeddings(encoder_out)  # B x P x C
        absent = encoder_out["paragraph_padding_mask"][0]  # B x P
        return self.predictor(phi.to(next(self.predictor.parameters())), absent).float()

    def _beam_bias(self, step: int) -> Tensor:
        """Live-beam ranking bias per row: ``|y|^lenpen * beta * bonus`` (|y| = step + 1)."""
        return (self.beta * self.length_divisor(step + 1)
                * self.tracker.bonus(self.strategy, self.epsilon))

    def length_divisor(self, length: int) -> float:
        """What a finished hypothesis of ``length`` tokens (EOS included) is divided by:
        ``length ** lenpen`` (fairseq) or Wu's ``((5 + length) / 6) ** lenpen``; 1 with
        ``--unnormalized``."""
        if not self.normalize_scores:
            return 1.0
        if self.length_penalty_form == "wu":
            return wu_length_penalty(length, self.len_penalty)
        return float(length) ** self.len_penalty

    @contextlib.contextmanager
    def _length_exponent(self, length: int):
        """fairseq's ``finalize_hypos`` divides by ``length ** len_penalty``: for Wu's form the
        exponent of this step is set so that the divisor is ``lp(y)`` (``length`` 1: both 1)."""
        if self.length_penalty_form != "wu" or length <= 1:
            yield
            return
        saved = self.len_penalty
        self.len_penalty = math.log(wu_length_penalty(length, saved)) / math.log(length)
        try:
            yield
        finally:
            self.len_penalty = saved

    # ------------------------------------------------------------------ scoring
    def finalize_hypos(self, step, bbsz_idx, eos_scores, tokens, scores, finalized, finished,
                       beam_size, *args, **kwargs):
        if self.stop_on_top_beam:  # read on the host only at steps where hypotheses end
            self._top_is_eos = self.search.top_is_eos.tolist()
        with self._length_exponent(step + 1):
            return self._finalize_hypos(step, bbsz_idx, eos_scores, tokens, scores, finalized,
                                        finished, beam_size, *args, **kwargs)

    def is_finished(self, step: int, unfin_idx: int, max_len: int, finalized_sent_len: int,
                    beam_size: int) -> bool:
        """fairseq's rule (``beam`` finished hypotheses, or the longest length), and with
        ``--stop-on-top-beam`` also a step whose best candidate (``unfin_idx``: the sentence's
        row among the unfinished ones, the search's row) is EOS."""
        if self.stop_on_top_beam and self._top_is_eos[unfin_idx]:
            return True
        return super().is_finished(step, unfin_idx, max_len, finalized_sent_len, beam_size)

    def _finalize_hypos(self, step, bbsz_idx, eos_scores, tokens, scores, finalized, finished,
                        beam_size, *args, **kwargs):
        if self.strategy is None:
            return super().finalize_hypos(step, bbsz_idx, eos_scores, tokens, scores, finalized,
                                          finished, beam_size, *args, **kwargs)
        bonus = self.beta * self.tracker.bonus(self.strategy, self.epsilon, bbsz_idx)  # N_eos
        before = [len(hypos) for hypos in finalized]
        # the sentence of each finishing row, as fairseq computes it (rows index the
        # unfinished sentences, beam_size rows each); fairseq's finalize_hypos reads its rows on
        # the host too (it builds one dict per hypothesis), only at steps where some end
        unfinished = [s for s, done in enumerate(finished) if not done]
        sentence_of = [unfinished[i // beam_size] for i in bbsz_idx.tolist()]
        newly_finished = super().finalize_hypos(step, bbsz_idx, eos_scores, tokens, scores,
                                                finalized, finished, beam_size, *args, **kwargs)
        # fairseq appends the rows in order, up to beam_size per sentence
        rows, stored = [], []
        for row, sent in enumerate(sentence_of):
            if before[sent] < beam_size:
                rows.append(row)
                stored.append(finalized[sent][before[sent]])
                before[sent] += 1
        if not rows:
            return newly_finished
        rows = torch.tensor(rows, device=bbsz_idx.device)
        expected = tokens.index_select(0, bbsz_idx.index_select(0, rows))[:, 1: step + 1]
        if not torch.equal(torch.stack([hypo["tokens"][:step] for hypo in stored]), expected):
            raise RuntimeError("attention alignment: fairseq's finalize_hypos stored "
                               "hypotheses in an unexpected order; cannot rescore")
        # Eq. 17 on the stored (length-normalised) score, all rows in one tensor op; positional
        # scores stay pure log-probabilities
        rescored = torch.stack([hypo["score"] for hypo in stored])
        rescored = rescored + bonus.index_select(0, rows).to(rescored)
        for hypo, score in zip(stored, rescored):
            hypo["score"] = score
        return newly_finished

    # ------------------------------------------------------------------ batch level
    @torch.no_grad()
    def generate(self, models, sample: Dict[str, Dict[str, Tensor]], **kwargs):
        if self.strategy is not None or self.keep_paragraphs:
            src_tokens = sample["net_input"]["src_tokens"]
            if src_tokens.dim() != 3:
                raise HierError("attention alignment needs a hierarchical model (B x P x L "
                                "sources)")
            present = src_tokens.ne(self.pad).any(-1)  # B x P
            if self.strategy == "extprob":
                self._batch_target = self.ranker_scores.batch(sample["id"], present)
            if self.keep_paragraphs:
                sample = self._keep_top_paragraphs(sample, present)
        with self._source_token_max_len(sample["net_input"]):
            hypos = super().generate(models, sample, **kwargs)
        if self.print_alignment:
            self._fill_alignment(hypos)
        return hypos

    @contextlib.contextmanager
    def _source_token_max_len(self, net_input):
        """``--max-len-a`` on ``B x P x L`` sources: ``a * (source tokens) + b`` for the longest
        source of the batch, instead of fairseq's ``a * P + b``."""
        src_tokens = net_input["src_tokens"]
        if src_tokens.dim() != 3 or self.max_len_a == 0:
            yield
            return
        saved = self.max_len_a, self.max_len_b
        # source tokens kept, longest example: one host read per batch (fairseq reads the
        # maximum length on the host too), before decoding starts
        tokens = net_input["src_lengths"].max().item()
        self.max_len_a, self.max_len_b = 0, saved[0] * tokens + saved[1]
        try:
            yield
        finally:
            self.max_len_a, self.max_len_b = saved

    def _keep_top_paragraphs(self, sample, present):
        """001 Table 6: keep the s paragraphs with the highest eta_hat (or ranker score for
        extprob), in their original order; then decoding re-encodes the shorter source (so PHT's
        ranking encoding and eta_hat are those of the compressed input)."""
        net_input = sample["net_input"]
        src = net_input["src_tokens"]  # B x P x L
        s = self.keep_paragraphs
        if src.size(1) <= s:
            return sample
        if self.strategy == "extprob":
            weight = self._batch_target
        else:
            model = self.model.single_model
            weight = self._predict(model, model.encoder(src, net_input["src_lengths"]))
        weight = masked_fill_scores(weight, ~present)  # absent paragraphs rank last
        keep = weight.topk(s, dim=1).indices.sort(dim=1).values  # B x s, present ones first
        kept = src.gather(1, keep.unsqueeze(-1).expand(-1, -1, src.size(2)))  # B x s x L
        kept_present = kept.ne(self.pad).any(-1)  # B x s
        if logger.isEnabledFor(logging.DEBUG):  # host reads only when they are logged
            dropped = int(present.sum()) - int(kept_present.sum())
            logger.debug(f"--align-keep-paragraphs {s}: {dropped} paragraphs dropped in this "
                         f"batch")
        if self._batch_target is not None:
            target = self._batch_target.gather(1, keep) * kept_present
            self._batch_target = target / target.sum(-1, keepdim=True)
        new_input = dict(net_input, src_tokens=kept, src_lengths=kept.ne(self.pad).sum((1, 2)))
        return dict(sample, net_input=new_input)

    def _fill_alignment(self, hypos: List[List[Dict[str, Tensor]]]):
        """fairseq's A- line format from each hypothesis' P x |y| paragraph attention."""
        for sentence in hypos:  # output formatting only, after decoding
            for hypo in sentence:
                attention = hypo["attention"].t()  # |y| x P
                if self.print_alignment == "hard":
                    hypo["alignment"] = [(p, t) for t, p in enumerate(attention.argmax(-1).tolist())]
                else:
                    hypo["alignment"] = [[f"{v:.4f}" for v in row] for row in attention.tolist()]
