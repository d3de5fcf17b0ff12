"""Criterion ``paragraph_ranking``: binary cross-entropy between the ranker's scores s_i and the
ROUGE-2 recall labels y_i (paper 002 Sec. 3.1: "minimizing the cross entropy loss between s_i
and ground-truth scores y_i").

Legend: B batch, P paragraphs. The model returns logits ``B x P`` (-inf at absent paragraphs);
``sample["target"]`` holds y (``B x P``, in [0, 1]); a paragraph is present where
``sample["net_input"]["src_lengths"] > 0``.

Logged metrics (nats): ``loss`` BCE per present paragraph, ``mae`` mean |s_i - y_i|. How the
loss is computed and its floor: docs/models.md, section fairseq_hier.criterions.paragraph_ranking.
Imports torch, fairseq.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from fairseq import metrics
from fairseq.criterions import FairseqCriterion, register_criterion
from fairseq.dataclass import FairseqDataclass


@dataclass
class ParagraphRankingCriterionConfig(FairseqDataclass):
    pass


@register_criterion("paragraph_ranking", dataclass=ParagraphRankingCriterionConfig)
class ParagraphRankingCriterion(FairseqCriterion):
    """BCE-with-logits summed over present paragraphs; fairseq divides by ``sample_size``."""

    def forward(self, model, sample, reduce=True):
        """-> (loss, sample_size, logging_output); with reduce=False, loss is ``B x P`` (0 at
        absent paragraphs)."""
        logits = model(**sample["net_input"]).float()  # B x P
        target = sample["target"].to(logits)  # B x P
        present = sample["net_input"]["src_lengths"].gt(0)  # B x P
        # only present entries enter the BCE: the -inf of absent ones would give NaN gradients
        bce = F.binary_cross_entropy_with_logits(logits[present], target[present], reduction="none")
        err = (torch.sigmoid(logits[present]) - target[present]).abs()
        if reduce:
            loss = bce.sum()
        else:
            loss = logits.new_zeros(logits.shape).masked_scatter(present, bce)
        sample_size = int(present.sum())
        logging_output = {
            "loss": float(bce.detach().sum()),
            "abs_err": float(err.detach().sum()),
            "nsentences": sample["nsentences"],
            "ntokens": sample["ntokens"],
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs) -> None:
        def total(key):
            return sum(log.get(key, 0) for log in logging_outputs)

        sample_size = total("sample_size")
        if sample_size > 0:
            metrics.log_scalar("loss", total("loss") / sample_size, sample_size, round=6)
            metrics.log_scalar("mae", total("abs_err") / sample_size, sample_size, round=6)

    @staticmethod
    def logging_outputs_can_be_summed() -> bool:
        return True
