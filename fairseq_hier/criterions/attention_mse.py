"""Criterion ``attention_mse``: MSE between predicted and gold paragraph attention (001 Sec. 4.2.1).

Legend: B batch, P paragraphs. ``target`` is the gold eta (``B x P``, 0 at absent paragraphs);
``sample["net_input"]["paragraph_padding_mask"]`` is True at absent paragraphs.

Logged metrics (per validation/training interval):
    loss   mse_scale x squared error per present paragraph (what is optimised; = mse by default)
    mse    squared error per present paragraph (unscaled)
    cos    mean over examples of cos(eta_hat, eta)

Computed in float32. Why plain MSE, ``--mse-scale`` and the mean over present paragraphs:
docs/models.md, section fairseq_hier.criterions.attention_mse.
Imports ``fairseq_hier.errors``; torch, fairseq.
"""

from dataclasses import dataclass, field

import torch.nn.functional as F
from fairseq import metrics
from fairseq.criterions import FairseqCriterion, register_criterion
from fairseq.dataclass import FairseqDataclass

from ..errors import check_range


@dataclass
class AttentionMSEConfig(FairseqDataclass):
    mse_scale: float = field(
        default=1.0, metadata={"help": "multiply the MSE by this factor (the optimised and logged "
                                       "loss; the logged mse stays unscaled). Default: plain "
                                       "MSE, as the paper and the authors' final code "
                                       "(att-aware); 100 reproduces their earlier 100 x MSE "
                                       "(wiki_sum nn_att.py)"})


@register_criterion("attention_mse", dataclass=AttentionMSEConfig)
class AttentionMSECriterion(FairseqCriterion):
    """Squared error summed over present paragraphs; fairseq divides by ``sample_size``
    (the number of present paragraphs) so the optimised quantity is ``mse_scale`` x MSE."""

    def __init__(self, task, mse_scale: float = 1.0):
        super().__init__(task)
        self.mse_scale = check_range("--mse-scale", mse_scale, 0, low_open=True)

    def forward(self, model, sample, reduce=True):
        """-> (loss, sample_size, logging_output); with reduce=False, loss is ``B x P``."""
        eta_hat = model(**sample["net_input"]).float()  # B x P, float32 under --fp16/--bf16 too
        target = sample["target"].to(eta_hat)  # B x P
        present = ~sample["net_input"]["paragraph_padding_mask"]  # B x P
        sq = (eta_hat - target).pow(2) * present  # B x P, 0 at absent paragraphs
        sq_sum = sq.sum()
        loss = self.mse_scale * (sq_sum if reduce else sq)
        cos = F.cosine_similarity(eta_hat * present, target * present, dim=-1)  # B
        sample_size = int(present.sum())
        logging_output = {
            "loss": float(self.mse_scale * sq_sum.detach()),
            "mse_sum": float(sq_sum.detach()),
            "cos_sum": float(cos.detach().sum()),
            "nsentences": sample["nsentences"],
            "ntokens": sample["ntokens"],
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs) -> None:
        def total(key):
            return sum(log.get(key, 0) for log in logging_outputs)

        sample_size, nsentences = total("sample_size"), total("nsentences")
        if sample_size > 0:
            metrics.log_scalar("loss", total("loss") / sample_size, sample_size, round=6)
            metrics.log_scalar("mse", total("mse_sum") / sample_size, sample_size, round=6)
        if nsentences > 0:
            metrics.log_scalar("cos", total("cos_sum") / nsentences, nsentences, round=6)

    @staticmethod
    def logging_outputs_can_be_summed() -> bool:
        return True
