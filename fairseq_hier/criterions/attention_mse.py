"""Criterion ``attention_mse``: MSE between predicted and gold paragraph attention (001 Sec. 4.2.1).

Legend: B batch, P paragraphs. ``target`` is the gold eta (``B x P``, 0 at absent paragraphs);
``sample["net_input"]["paragraph_padding_mask"]`` is True at absent paragraphs.

Logged metrics (per validation/training interval):
    loss   mse_scale x squared error per present paragraph (what is optimised)
    mse    squared error per present paragraph (unscaled)
    cos    mean over examples of cos(eta_hat, eta)
"""

from dataclasses import dataclass, field

import torch.nn.functional as F
from fairseq import metrics
from fairseq.criterions import FairseqCriterion, register_criterion
from fairseq.dataclass import FairseqDataclass


@dataclass
class AttentionMSEConfig(FairseqDataclass):
    mse_scale: float = field(
        default=100.0, metadata={"help": "multiply the MSE by this factor: the authors' loss is "
                                         "100 x MSE (eta values are small); scales gradients "
                                         "only, the logged mse is unscaled"})


@register_criterion("attention_mse", dataclass=AttentionMSEConfig)
class AttentionMSECriterion(FairseqCriterion):
    """Squared error summed over present paragraphs; fairseq divides by ``sample_size``
    (the number of present paragraphs) so the optimised quantity is ``mse_scale`` x MSE."""

    def __init__(self, task, mse_scale: float = 100.0):
        super().__init__(task)
        self.mse_scale = mse_scale

    def forward(self, model, sample, reduce=True):
        """-> (loss, sample_size, logging_output); with reduce=False, loss is ``B x P``."""
        eta_hat = model(**sample["net_input"])  # B x P
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
