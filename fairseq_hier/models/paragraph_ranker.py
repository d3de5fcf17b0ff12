"""Liu & Lapata's paragraph ranker (paper 002 Sec. 3.1, "Paragraph Ranking"), model
``paragraph_ranker``.

The model's parts and equations: docs/models.md, section fairseq_hier.models.paragraph_ranker.

Legend: B batch, P paragraphs, L tokens per paragraph, Lt title tokens, N present paragraphs of
the batch, E embedding dim, H LSTM hidden size, F feature dim (of ``p_j``).
Paragraphs fold into the batch: the LSTM reads the N present paragraphs of all examples at once
(packed sequences), never a Python loop. Absent paragraphs (length 0) get logit ``-inf``.
Imports ``modules``, ``data``, ``compat``, ``errors``; torch, fairseq.
"""

from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.dataclass import FairseqDataclass
from fairseq.models import BaseFairseqModel, register_model
from torch import Tensor
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..errors import HierError
from ..modules.masking import masked_fill_scores
from .option_checks import check_model_options


@dataclass
class ParagraphRankerConfig(FairseqDataclass):
    """Defaults are the paper's settings (002 Sec. 4), or the readings of the module docstring."""

    embed_dim: int = field(
        default=256, metadata={"help": "word embedding size (the paper does not give it: the "
                                       "LSTM hidden size)"})
    hidden_size: int = field(
        default=256, metadata={"help": "hidden size of the title and paragraph LSTMs (Eq. 1-2; "
                                       "002: 256)"})
    feature_dim: int = field(
        default=256, metadata={"help": "size of the matching features p_j = tanh(W1 [u_pj; "
                                       "t_hat]) (Eq. 4; the paper does not give it)"})
    dropout: float = field(
        default=0.2, metadata={"help": "dropout before every linear layer: on the word "
                                       "embeddings, before W1 and before W2 (002: 0.2)"})


@register_model("paragraph_ranker", dataclass=ParagraphRankerConfig)
class ParagraphRankerModel(BaseFairseqModel):
    """(title, paragraphs) -> one relevance logit per paragraph (Eq. 1-6)."""

    #: the tasks whose data this model reads (checked when a task builds it)
    TASKS = ("paragraph_ranking",)

    def __init__(self, cfg: ParagraphRankerConfig, embed_tokens: nn.Embedding):
        super().__init__()
        self.padding_idx = embed_tokens.padding_idx
        self.embed_tokens = embed_tokens
        self.dropout = nn.Dropout(cfg.dropout)
        self.title_lstm = self.build_lstm(cfg.embed_dim, cfg.hidden_size)  # lstm_t, Eq. 1
        self.paragraph_lstm = self.build_lstm(cfg.embed_dim, cfg.hidden_size)  # lstm_p, Eq. 2
        self.match = nn.Linear(2 * cfg.hidden_size, cfg.feature_dim)  # W1, Eq. 4
        self.output_projection = nn.Linear(cfg.feature_dim, 1)  # W2, Eq. 6
        self.hidden_size = cfg.hidden_size

    @classmethod
    def build_model(cls, cfg, task):
        check_model_options(cfg)
        dictionary = task.source_dictionary
        return cls(cfg, cls.build_embedding(dictionary, cfg.embed_dim))

    @classmethod
    def build_embedding(cls, dictionary, embed_dim: int) -> nn.Embedding:
        return nn.Embedding(len(dictionary), embed_dim, padding_idx=dictionary.pad())

    @staticmethod
    def build_lstm(input_size: int, hidden_size: int) -> nn.LSTM:
        return nn.LSTM(input_size, hidden_size, num_layers=1, batch_first=True)

    def forward(self, src_tokens: Tensor, src_lengths: Tensor, title_tokens: Tensor,
                title_lengths: Tensor, **unused) -> Tensor:
        """
        Args:
            src_tokens: ``B x P x L`` paragraphs, right-padded; absent paragraphs all padding
            src_lengths: ``B x P`` tokens per paragraph, 0 = absent paragraph
            title_tokens: ``B x Lt`` titles, right-padded
            title_lengths: ``B`` title tokens, 0 = empty title

        Returns:
            logits ``W2 p`` (Eq. 6 before the sigmoid): ``B x P``, ``-inf`` at absent paragraphs
        """
        self._check_shapes(src_tokens, src_lengths, title_tokens, title_lengths)
        bsz, num_p, num_l = src_tokens.shape
        present = src_lengths.reshape(-1).gt(0).nonzero().squeeze(1)  # N: indices into B*P
        # -inf here is a marker of absence in the returned logits, never an operand: the
        # criterion and get_scores read present paragraphs only (sigmoid(-inf) = 0 exactly)
        out = self.embed_tokens.weight.new_full((bsz * num_p,), float("-inf"))
        if present.numel() == 0:  # nothing to score (the LSTMs cannot pack empty batches)
            return out.view(bsz, num_p)
        t_hat = self._pool_title(title_tokens, title_lengths)  # B x H
        # B x P x L -> (B*P) x L -> N x L: the present paragraphs of every example
        tokens = src_tokens.reshape(bsz * num_p, num_l).index_select(0, present)
        lengths = src_lengths.reshape(-1).index_select(0, present)  # N
        p = self._pool_paragraphs(tokens, lengths, t_hat.index_select(0, present // num_p))
        logits = self.output_projection(self.dropout(p)).squeeze(-1)  # N x 1 -> N
        out = out.index_put((present,), logits)  # (B*P), -inf at absent paragraphs
        return out.view(bsz, num_p)  # (B*P) -> B x P

    def get_scores(self, logits: Tensor) -> Tensor:
        """s = sigmoid(W2 p) (Eq. 6): ``B x P``, 0 at absent paragraphs."""
        return torch.sigmoid(logits.float())

    def _lstm_states(self, lstm: nn.LSTM, tokens: Tensor, lengths: Tensor) -> Tensor:
        """Run ``lstm`` over ``tokens`` (``N x L``, every length >= 1) -> ``N x L x H`` states
        (zeros at padding)."""
        x = self.dropout(self.embed_tokens(tokens))  # N x L x E
        # lengths.cpu(): torch's packing wants host lengths (a sync once per batch; no decoding)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        states, _ = lstm(packed)
        return pad_packed_sequence(states, batch_first=True, total_length=tokens.size(1))[0]

    def _pool_title(self, title_tokens: Tensor, title_lengths: Tensor) -> Tensor:
        """t_hat = maxpool over the title LSTM states (Eq. 1, 3): ``B x H``; 0 for an empty
        title."""
        t_hat = self.embed_tokens.weight.new_zeros(title_tokens.size(0), self.hidden_size)
        nonempty = title_lengths.gt(0).nonzero().squeeze(1)  # B' titles with tokens
        if nonempty.numel() == 0:
            return t_hat
        tokens = title_tokens.index_select(0, nonempty)  # B' x Lt
        lengths = title_lengths.index_select(0, nonempty)  # B'
        states = self._lstm_states(self.title_lstm, tokens, lengths)  # B' x Lt x H
        pooled = masked_max(states, lengths)  # B' x H
        return t_hat.index_put((nonempty,), pooled)

    def _pool_paragraphs(self, tokens: Tensor, lengths: Tensor, t_hat: Tensor) -> Tensor:
        """p = maxpool_j tanh(W1 [u_pj; t_hat]) (Eq. 2, 4, 5) of N paragraphs -> ``N x F``.

        Args: tokens ``N x L``, lengths ``N`` (>= 1), t_hat ``N x H`` (each paragraph's title)."""
        u_p = self.dropout(self._lstm_states(self.paragraph_lstm, tokens, lengths))  # N x L x H
        w_u, w_t = self.match.weight.split(self.hidden_size, dim=1)  # F x H each
        # W1 [u; t] = W1_u u + W1_t t: the title term once per paragraph, N x F -> N x 1 x F
        title_term = F.linear(self.dropout(t_hat), w_t, self.match.bias).unsqueeze(1)
        features = torch.tanh(F.linear(u_p, w_u) + title_term)  # N x L x F
        return masked_max(features, lengths)  # N x F

    @staticmethod
    def _check_shapes(src_tokens, src_lengths, title_tokens, title_lengths) -> None:
        if src_tokens.dim() != 3:
            raise HierError(f"paragraph_ranker expects src_tokens B x P x L, got shape "
                            f"{tuple(src_tokens.shape)}")
        if src_lengths.shape != src_tokens.shape[:2]:
            raise HierError(f"src_lengths must be B x P = {tuple(src_tokens.shape[:2])}, got "
                            f"{tuple(src_lengths.shape)}")
        if title_tokens.dim() != 2 or title_tokens.size(0) != src_tokens.size(0):
            raise HierError(f"title_tokens must be B x Lt with B = {src_tokens.size(0)}, got "
                            f"{tuple(title_tokens.shape)}")
        if title_lengths.shape != title_tokens.shape[:1]:
            raise HierError(f"title_lengths must be B = ({title_tokens.size(0)},), got "
                            f"{tuple(title_lengths.shape)}")

    def max_positions(self):
        return None  # any number of paragraphs and tokens (LSTMs, no positional parameters)


def masked_max(x: Tensor, lengths: Tensor) -> Tensor:
    """Max over dim 1 of ``x`` (``N x L x D``) among the first ``lengths`` (``N``, >= 1)
    positions -> ``N x D``."""
    padding = torch.arange(x.size(1), device=x.device)[None, :] >= lengths[:, None]  # N x L
    # finite fill (every row has a real position, which always wins the max)
    return masked_fill_scores(x, padding.unsqueeze(-1)).max(dim=1).values
