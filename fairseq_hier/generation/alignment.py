"""Attention-alignment scores of 001 Sec. 4 and the statistics they need, per hypothesis.

``score(y) = log P(y|x) / |y| + beta * bonus(y)`` (001 Eq. 17) with the bonus ``attalign``
(Eq. 18), ``extprob`` or ``strcov`` (001 Table 2), and :class:`AlignmentTracker`, which
accumulates a hypothesis' own paragraph attention eta(y). The bonuses, our reading of strCov and
``eps``: docs/models.md, section fairseq_hier.generation.alignment.

Legend: N hypotheses (batch x beam rows of the generator), P paragraphs. Masks: ``present`` is
True for real paragraphs. Imports torch.
"""

from typing import Optional

import torch
from torch import Tensor
from ..errors import HierError

STRATEGIES = ("attalign", "strcov", "extprob")


def attention_distribution(attention_sum: Tensor) -> Tensor:
    """Eq. 15: ``N x P`` summed attention -> distribution over paragraphs."""
    return attention_sum / attention_sum.sum(-1, keepdim=True).clamp(min=1e-12)


def alignment_score(eta: Tensor, eta_hat: Tensor, present: Tensor, eps: float) -> Tensor:
    """Eq. 18: ``sum_p log(max(min(eta_p, eta_hat_p), eps))`` over present paragraphs -> ``N``."""
    floor = torch.minimum(eta, eta_hat).clamp(min=eps).log()  # N x P
    return floor.masked_fill(~present, 0.0).sum(-1)


def structural_coverage(alpha: Tensor, attention_sum: Tensor) -> Tensor:
    """Eq. 13 at one step: ``1 - sum_p min(alpha_{t,p}, sum_{t'<t} alpha_{t',p})`` -> ``N``."""
    return 1.0 - torch.minimum(alpha, attention_sum).sum(-1)


class AlignmentTracker:
    """Per-hypothesis paragraph-attention statistics, kept in the generator's row order.

    The generator calls :meth:`start` once per batch (rows = sentences), :meth:`reorder` whenever
    it reorders its encoder outputs (beam expansion, then every step's beam selection and the
    removal of finished sentences), and :meth:`update` with every step's attention. All
    operations are tensor ops over all rows; nothing loops over hypotheses.

    State (N rows): ``present`` N x P, ``target`` N x P (eta_hat; None for strcov),
    ``attention_sum`` N x P (sum of alpha_t so far), ``coverage_sum`` N (sum of strCov so far),
    ``steps`` (steps so far, the same for every live row).
    """

    def __init__(self):
        self.present: Optional[Tensor] = None
        self.target: Optional[Tensor] = None
        self.attention_sum: Optional[Tensor] = None
        self.coverage_sum: Optional[Tensor] = None
        self.steps = 0

    def start(self, present: Tensor, target: Optional[Tensor]):
        """present: ``B x P`` bool; target: ``B x P`` distribution over present paragraphs or None."""
        if target is not None and target.shape != present.shape:
            raise HierError(f"alignment target has shape {tuple(target.shape)}, the source has "
                            f"{tuple(present.shape)} (batch x paragraphs)")
        self.present, self.target = present, target
        self.attention_sum = self.coverage_sum = None
        self.steps = 0

    def reorder(self, new_order: Tensor):
        for name in ("present", "target", "attention_sum", "coverage_sum"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, value.index_select(0, new_order))

    def update(self, alpha: Tensor):
        """alpha: ``N x P`` paragraph attention of the current step (rows sum to 1)."""
        alpha = alpha.float()
        if self.attention_sum is None:
            self.attention_sum = alpha.new_zeros(alpha.shape)
            self.coverage_sum = alpha.new_zeros(alpha.size(0))
        self.coverage_sum = self.coverage_sum + structural_coverage(alpha, self.attention_sum)
        self.attention_sum = self.attention_sum + alpha
        self.steps += 1

    def bonus(self, strategy: str, eps: float, rows: Optional[Tensor] = None) -> Tensor:
        """The strategy's bonus for ``rows`` (all rows if None) -> ``len(rows)``."""
        if self.attention_sum is None:
            raise RuntimeError("alignment bonus asked before any decoding step")
        pick = (lambda t: t) if rows is None else (lambda t: t.index_select(0, rows))
        if strategy == "strcov":
            return pick(self.coverage_sum) / self.steps
        eta = attention_distribution(pick(self.attention_sum))
        return alignment_score(eta, pick(self.target), pick(self.present), eps)
