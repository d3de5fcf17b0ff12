"""ParsingSum (Ma et al., paper 003): linguistic-guided attention (LGA) in the encoder
self-attention of a flat Transformer (``parsingsum_ft``) and of Liu & Lapata's Hierarchical
Transformer's local layers (``parsingsum_ht``); and 003's flat baseline FT (``transformer_copy``:
Fabbri et al.'s OpenNMT Transformer, whose layers and copy attention ``parsingsum_ft`` keeps: pre-LN
with final LayerNorms, ``--ft-form opennmt``, and a copy generator with its own vocabulary
projection, ``--copy-projection own``; see :mod:`fairseq_hier.modules.copy_attention`).

The equations (003 Sec. 2.2), and the readings we chose where the PDF is garbled:

- Eq. 1 / 6: ``M`` is the undirected 0/1 dependency matrix of each sentence (``p_ij = 1`` when
  words i and j are linked, head and dependent alike), repeated over the heads
  (``stack_h``). We never materialise that ``B x H x S x S`` stack: ``M`` is one ``B x S x S``
  bool per forward, built from two integer ids per piece (:func:`dependency_matrix`), shared by
  every layer and broadcast over heads.
- Subword pieces (the paper parses words; the models read pieces): every piece of word i is
  linked to every piece of word j when i and j are linked. Eq. 1 links words by a dependency
  only, so ``M`` has no self-links: ``--lga-diagonal none`` (default) keeps the arcs alone, the
  block expansion of the parser's adjacency ``A``. Two diagonals are ours, as options: ``word``
  links every piece to all pieces of its own word, itself included (a split word is one unit as
  its unsplit form would be; ``M`` is the block expansion of ``A + I``); ``piece`` links a piece
  to itself only.
- Eq. 4: ``LGAtt = alpha * M (.) Att + Att`` with ``Att = softmax(Q K^T / sqrt(d_k))`` (Eq. 5)
  over the real (non-padding) keys.
- Eq. 7: ``Context_i = sum_j LGAtt_ij V_j``. **No renormalisation after the fusion**: Eq. 4 and
  Eq. 7 use ``LGAtt`` as it is, so a row sums to ``1 + alpha * (Att mass on linked keys)``; the
  LayerNorm of Eq. 9 absorbs the scale. Renormalising would make ``alpha * M`` a re-weighting
  only, which is not what Eq. 4 writes, and would make Table 6's direct / Gaussian fusions, whose
  added terms do not depend on ``Att`` (or not only), impossible to write the same way.
- Where LGA sits: in every encoder layer (``parsingsum_ft``) and every local layer
  (``parsingsum_ht``): Eq. 8-9 map ``x^l`` to ``x^{l+1}``, "the output vector of current encoder
  layer", so Eq. 2's ``x^l`` ("the output ... of the last encoding layer") is the previous
  layer's output, the input of the layer whose self-attention LGA replaces.
- Eq. 8-9: ``k = LayerNorm(x + Context)``, ``x' = LayerNorm(k + FFN(k))`` is post-LN
  (``--ft-form post-ln`` for ``parsingsum_ft``). The default is the FT it is built on (003 Sec.
  3.2, "For ParsingSum-FT, we follow FT model settings", footnote 3: Fabbri et al.'s OpenNMT
  code), pre-LN: ``x' = h + FFN(LN(h))``, ``h = x + Context(LN(x))``, so ``Q, K, V`` (Eq. 2) read
  ``LN(x^l)``; the encoder ends with a LayerNorm.
- Table 6 (:func:`lga_term`): direct fusion ``0.25 M + Att`` (Eq. 10, ``--lga-fusion direct
  --lga-sigma 0.25``), Gaussian fusion ``(1 - M (.) Att)^2 / sigma + Att`` (Eq. 11-12,
  ``--lga-fusion gaussian --lga-sigma 0.25 | 8``), taken literally: the added term is non-zero on
  every real key, linked or not, which is why those variants "overwhelm" the attention in the
  paper.

How it is computed (:meth:`LinguisticGuidedAttention._lga_forward`): without any ``S x S`` map.
``LGAtt - Att`` is non-zero only on linked keys (plus, for the Gaussian fusion, a constant on every
real key), and linked keys lie in the query's sentence, so within ``h`` pieces of it (``h`` = the
batch's longest link). ``Att V`` and ``LSE_i`` (the log-sum-exp of the scores, the softmax
normaliser's log) come from torch's fused CPU attention kernel, the one fairseq's own encoder
runs, which returns both (:func:`attention_with_lse`; on other devices the fused
``scaled_dot_product_attention`` given one extra *anchor* key whose value column returns its
weight, :func:`_anchored_attention`); ``Att_ij`` on linked keys then follows from scores computed
only in windows of ``c + 2h`` keys around each chunk of ``c`` queries (``c`` >= 64), under
activation checkpointing (:func:`linked_sums`). Exact, with
exact gradients (tested against Eq. 4-7 written out, :func:`lga_context`), and no quadratic
tensor kept for the backward pass. ``alpha = 0`` is fairseq's self-attention (tested to 1e-6
against ``transformer_copy`` / ``liu_ht`` on the same weights). Attention dropout in training must act
on ``LGAtt`` itself: with ``--attention-dropout > 0`` the layer runs :func:`lga_context` under
checkpointing (transient ``S x S`` maps, the dropout mask replayed in the backward pass).

Legend: B batch, S source pieces, T query positions (= S), H heads, D head dim, C model dim,
N present paragraphs (``parsingsum_ht``), L pieces per paragraph; n chunks of c queries, W keys
per window. Masks: True = padding.
"""

import logging
from dataclasses import dataclass, field, fields
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.dataclass import ChoiceEnum, FairseqDataclass
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (TransformerDecoderBase, TransformerEncoderBase,
                                        TransformerModel)
from fairseq.models.transformer.transformer_legacy import base_architecture
from fairseq.modules import MultiheadAttention
from fairseq.modules.transformer_layer import TransformerEncoderLayerBase
from torch import Tensor
from torch.utils.checkpoint import checkpoint

from ..modules.copy_attention import CopyGenerator
from ..modules.masking import masked_fill_scores, masked_softmax
from ..modules.opennmt_layer_norm import OpenNMTLayerNorm
from .checkpointing import checkpoint_layer
from .hierarchical_transformer import config_from_args, fill_defaults
from .liu_ht import LiuHTConfig, LiuHTEncoder, LiuHTModel
from ..errors import HierError
from .option_checks import check_model_options

logger = logging.getLogger(__name__)

FUSIONS = ("alpha", "direct", "gaussian")
DIAGONALS = ("word", "piece", "none")


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


# ----------------------------------------------------------------------------- equations
def dependency_links(query, key, diagonal: str = "none") -> Tensor:
    """003 Eq. 1 on pieces: True where a query piece's word and a key piece's word are linked by
    an arc (either direction), or by ``diagonal`` (see the module docstring).

    query, key: ``(words, heads, positions)``, each ``... x T`` (query) and ``... x K`` (key):
    the word index of each piece in its example (-1: separator, EOS, padding), the word index of
    that word's head (-1: root / not a word), and the piece's position (its identity, for
    ``diagonal="piece"``). Returns ``... x T x K`` bool."""
    (wq, hq, pq), (wk, hk, pk) = query, key
    wq, hq, pq = wq.unsqueeze(-1), hq.unsqueeze(-1), pq.unsqueeze(-1)  # ... x T x 1
    wk, hk, pk = wk.unsqueeze(-2), hk.unsqueeze(-2), pk.unsqueeze(-2)  # ... x 1 x K
    real = wq.ge(0) & wk.ge(0)
    # an arc in either direction (heads are word ids; -1 never equals a real word's id)
    m = hq.eq(wk) | wq.eq(hk)
    if diagonal == "word":
        m |= wq.eq(wk)
    elif diagonal == "piece":
        m |= pq.eq(pk)
    elif diagonal != "none":
        raise HierError(f"--lga-diagonal must be one of {DIAGONALS}, got {diagonal!r}")
    return m & real


def dependency_matrix(words: Tensor, heads: Tensor, diagonal: str = "none") -> Tensor:
    """``M`` of whole sequences: words, heads ``... x S`` -> ``... x S x S`` bool."""
    positions = torch.arange(words.size(-1), device=words.device).expand_as(words)
    return dependency_links((words, heads, positions), (words, heads, positions), diagonal)


def lga_term(att: Tensor, m: Tensor, real_keys: Tensor, fusion: str, weight: float) -> Tensor:
    """``LGAtt - Att``, what the fusion adds to the attention weights (never renormalised).

    att: ``... x T x S`` softmax weights; m: ``... x T x S`` 0/1 (float, zero on padding keys);
    real_keys: ``... x 1 x S`` 1 for a real key, 0 for padding.
    alpha (Eq. 4): ``alpha * M (.) Att``; direct (Eq. 10): ``sigma * M``;
    gaussian (Eq. 11-12): ``(1 - M (.) Att)^2 / sigma`` on every real key."""
    d, a, b, offset = lga_coefficients(fusion, weight)
    return m * (d + a * att + b * att * att) + offset * real_keys


def lga_coefficients(fusion: str, weight: float):
    """``LGAtt - Att`` as a polynomial in ``Att`` on the linked keys plus a constant on every
    real key: ``M (.) (d + a Att + b Att^2) + offset``. Returns ``(d, a, b, offset)``.
    alpha (Eq. 4, ``alpha M (.) Att``): a = alpha. direct (Eq. 10, ``sigma M``): d = sigma.
    gaussian (Eq. 11-12): ``(1 - M Att)^2 / sigma = 1/sigma + M (.) (Att^2 - 2 Att) / sigma``
    (M is 0/1): a = -2/sigma, b = 1/sigma, offset = 1/sigma."""
    if fusion == "alpha":
        return 0.0, weight, 0.0, 0.0
    if fusion == "direct":
        return weight, 0.0, 0.0, 0.0
    if fusion == "gaussian":
        return 0.0, -2.0 / weight, 1.0 / weight, 1.0 / weight
    raise HierError(f"--lga-fusion must be one of {FUSIONS}, got {fusion!r}")


def _attention_weights(q: Tensor, k: Tensor, keep: Tensor) -> Tensor:
    """Eq. 5: ``softmax(Q K^T / sqrt(D))`` over the kept keys. q, k: ``B x H x T|S x D``;
    keep: ``B x 1 x 1 x S`` (True = real key). Returns ``B x H x T x S`` in q's dtype."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5  # B x H x T x S
    return masked_softmax(scores, ~keep).type_as(q)


def lga_context(q: Tensor, k: Tensor, v: Tensor, keep: Tensor, m: Tensor, fusion: str,
                weight: float, dropout_p: float = 0.0) -> Tensor:
    """Eq. 4-7 written out: ``Context = dropout(LGAtt) V``, ``LGAtt = Att + (LGAtt - Att)``.
    q, k, v: ``B x H x S x D``; keep: ``B x 1 x 1 x S`` (True = real key); m: ``B x 1 x S x S``
    bool. Returns ``B x H x S x D``. Used when attention dropout must act on ``LGAtt`` (under
    activation checkpointing: the ``S x S`` maps are transient, the dropout mask replayed)."""
    att = _attention_weights(q, k, keep)  # B x H x S x S
    lgatt = att + lga_term(att, m.to(att.dtype), keep.to(att.dtype), fusion, weight)
    return torch.matmul(F.dropout(lgatt, dropout_p, training=dropout_p > 0), v)


# ------------------------------------------------------------- the banded computation of Eq. 4-7
def _chunks(x: Tensor, c: int, n: int) -> Tensor:
    """``... x S x D`` -> ``... x n x c x D`` (zero-padded to ``n * c``)."""
    x = F.pad(x, (0, 0, 0, n * c - x.size(-2)))
    return x.view(*x.shape[:-2], n, c, x.size(-1))


def _windows(x: Tensor, c: int, n: int, width: int) -> Tensor:
    """``... x S x D`` -> ``... x n x width x D``: the keys around each chunk of ``c`` queries,
    ``(width - c) / 2`` more on each side (the whole padded sequence when ``n == 1``),
    zero-padded."""
    if n == 1:
        return _chunks(x, c, 1)
    halo = (width - c) // 2
    x = F.pad(x, (0, 0, halo, n * c - x.size(-2) + halo))  # ... x (n c + 2 halo) x D
    return x.unfold(-2, width, c).transpose(-1, -2)  # ... x n x width x D


def linked_sums(q: Tensor, k: Tensor, v: Tensor, keep_w: Tensor, m_w: Tensor,
                guide: "LinguisticGuide", powers):
    """The key-local half of LGA. Linked keys lie within ``c`` pieces of their query (one
    sentence), so each chunk of ``c`` queries needs only its window of ``c + 2h`` keys.

    Returns the reference ``r`` (``B x H x S``, detached: the largest score of each query's
    linked keys, rounded down to an integer, so at most ``LSE_i``; the anchor's score of
    :func:`_anchored_attention`) and, for each power ``k`` in ``powers``,
    ``U_k = sum_{j linked} exp(k (s_ij - r_i)) V_j`` (``B x H x S x D``; ``k = 0`` sums the
    linked values). q (already scaled by ``1/sqrt(D)``), k, v: ``B x H x S x D``;
    keep_w, m_w: the window masks
    of :meth:`LinguisticGuide.window_masks`."""
    b, h, s, d = q.shape
    c, n, width = guide.chunk, guide.num_chunks, guide.width
    qc = _chunks(q, c, n)  # B x H x n x c x D
    kw, vw = _windows(k, c, n, width), _windows(v, c, n, width)  # B x H x n x W x D
    scores = torch.matmul(qc, kw.transpose(-1, -2))  # B x H x n x c x W (q is scaled)
    scores = scores.to(torch.promote_types(scores.dtype, torch.float32))  # fp16 / bf16: fp32
    linked = m_w & keep_w  # B x 1 x n x c x W
    scores = masked_fill_scores(scores, ~linked)  # finite: exp() of an unlinked key is exactly 0
    # the reference: the largest linked score rounded down to an integer (exact in fp16 / bf16
    # too, so that the anchored kernel sees the same value); at most LSE_i, and exp(s - r) <= e
    ref = scores.amax(-1).detach().floor().clamp(-250, 250)  # B x H x n x c
    ref = ref.masked_fill(~linked.any(-1), 0.0)  # no linked key: reference 0
    e = torch.exp(scores - ref.unsqueeze(-1)).type_as(q)
    sums = []
    for power in powers:  # at most 3 terms of a polynomial, never a loop over data
        weights = m_w.type_as(q).expand_as(e) if power == 0 else e if power == 1 else e * e
        sums.append(torch.matmul(weights, vw).view(b, h, n * c, d)[:, :, :s])  # B x H x S x D
    return (ref.view(b, h, n * c)[:, :, :s], *sums)


@dataclass
class LinguisticGuide:
    """What one encoder forward gives every LGA layer (built once per batch by
    :func:`build_guide`): the pieces' word and head ids (``B x S``), the fusion, the chunk size
    ``c`` (> the longest link, in pieces) and the window layout."""

    words: Tensor
    heads: Tensor
    fusion: str
    weight: float  # alpha for "alpha", sigma otherwise
    diagonal: str
    chunk: int
    num_chunks: int
    width: int  # keys per window: chunk + 2 * halo, or the padded sequence (one chunk)

    def ids(self):
        """``(words, heads, positions)`` of the queries in chunks (``B x 1 x n x c``) and of the
        keys in windows (``B x 1 x n x W``), -1 on padding."""
        b, s = self.words.shape
        positions = torch.arange(s, device=self.words.device).expand(b, s)
        out = []
        for fn in (_chunks, _windows):
            parts = []
            for x in (self.words, self.heads, positions):
                x = (x + 1).view(b, 1, s, 1)  # ids shifted so that padding's 0 means -1
                x = fn(x, self.chunk, self.num_chunks) if fn is _chunks else \
                    fn(x, self.chunk, self.num_chunks, self.width)
                parts.append(x.squeeze(-1) - 1)
            out.append(tuple(parts))
        return out

    def window_masks(self, keep: Tensor, token=None):
        """(real keys, ``M``) in window form, ``B x 1 x n x 1 x W`` and ``B x 1 x n x c x W``
        bool, from ``keep`` (``B x S``, True = real key): built once per batch and kept for the
        next layers while they pass the same ``token`` (the encoder's padding mask object)."""
        cached = getattr(self, "_window_masks", None)
        if cached is not None and cached[0] is token:
            return cached[1]
        b, s = keep.shape
        keep_w = _windows(keep.view(b, 1, s, 1).float(), self.chunk, self.num_chunks,
                          self.width).transpose(-1, -2).bool()  # B x 1 x n x 1 x W
        query_ids, window_ids = self.ids()
        m_w = dependency_links(query_ids, window_ids, self.diagonal)  # B x 1 x n x c x W
        self._window_masks = (token, (keep_w, m_w))
        return keep_w, m_w

    def dense(self) -> Tensor:
        """``M`` as ``B x 1 x S x S`` bool (the explicit path), built once per batch."""
        if getattr(self, "_dense", None) is None:
            self._dense = dependency_matrix(self.words, self.heads, self.diagonal).unsqueeze(1)
        return self._dense


def longest_link(words: Tensor, heads: Tensor, diagonal: str) -> int:
    """The largest distance, in pieces, between two linked pieces (arcs and, with the ``word``
    diagonal, pieces of one word); words, heads: ``B x S``. Its host syncs (``bool()``,
    ``int()``, boolean indexing) run once per batch, when the encoder builds its guide: the
    result sets the chunk size, a shape."""
    b, s = words.shape
    real = words.ge(0)
    if not bool(real.any()):
        return 0
    num_words = int(words.max()) + 1
    pos = torch.arange(s, device=words.device).expand(b, s)
    key = (torch.arange(b, device=words.device).unsqueeze(1) * num_words + words.clamp(min=0))
    first = torch.full((b * num_words,), s, device=words.device, dtype=torch.long)
    last = torch.full((b * num_words,), -1, device=words.device, dtype=torch.long)
    first = first.scatter_reduce(0, key[real], pos[real], "amin")
    last = last.scatter_reduce(0, key[real], pos[real], "amax")
    longest = int((last - first).clamp(min=0).max()) if diagonal == "word" else 0
    arc = real & heads.ge(0) & heads.lt(num_words)
    if bool(arc.any()):
        hkey = (torch.arange(b, device=words.device).unsqueeze(1) * num_words
                + heads.clamp(min=0))[arc]
        present = last[hkey] >= 0  # the head word may have been cut away
        p = pos[arc][present]
        far = torch.maximum((p - first[hkey][present]).abs(), (p - last[hkey][present]).abs())
        longest = max(longest, int(far.max()) if far.numel() else 0)
    return longest


class LinguisticGuidedAttention(MultiheadAttention):
    """fairseq's self-attention with LGA (003 Eq. 2-7); same parameters (and state-dict keys).

    The encoder sets :attr:`guide` before each forward (fairseq's encoder layer calls its attention
    with a fixed argument list, so ``M`` cannot travel as an argument without copying the layer's
    forward). Without a guide this is fairseq's attention unchanged."""

    guide: Optional[LinguisticGuide] = None

    def forward(self, query, key, value, key_padding_mask=None, incremental_state=None,
                need_weights=True, static_kv=False, attn_mask=None, before_softmax=False,
                need_head_weights=False):
        if self.guide is None:
            return super().forward(query, key, value, key_padding_mask, incremental_state,
                                   need_weights, static_kv, attn_mask, before_softmax,
                                   need_head_weights)
        if incremental_state is not None or attn_mask is not None or self.bias_k is not None \
                or self.add_zero_attn or before_softmax:
            raise HierError("linguistic-guided attention is encoder self-attention only (no "
                            "incremental state, attention mask, bias_kv or zero attention)")
        s, b, c = query.shape
        h, d = self.num_heads, self.head_dim
        guide = self.guide
        if tuple(guide.words.shape) != (b, s):
            raise HierError(f"dependency ids of shape {tuple(guide.words.shape)} for a batch of "
                            f"{b} x {s} pieces")
        # S x B x C -> B x H x S x D
        split = lambda x: x.view(s, b, h, d).permute(1, 2, 0, 3)  # noqa: E731
        q, k, v = split(self.q_proj(query)), split(self.k_proj(query)), split(self.v_proj(query))
        keep = (torch.ones(b, s, dtype=torch.bool, device=query.device) if key_padding_mask is None
                else ~key_padding_mask.bool())  # B x S, True = real key
        p = self.dropout_module.p if self.training else 0.0
        if guide.weight == 0 and guide.fusion != "gaussian":  # alpha = 0: fairseq's attention
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=keep.view(b, 1, 1, s),
                                                     dropout_p=p)
        elif p > 0:  # dropout on LGAtt: Eq. 4-7 written out, checkpointed
            context = checkpoint(lga_context, q, k, v, keep.view(b, 1, 1, s), guide.dense(),
                                 guide.fusion, guide.weight, p, use_reentrant=False)
        else:
            context = self._lga_forward(q, k, v, keep, guide, key_padding_mask)
        # B x H x S x D -> S x B x C
        out = self.out_proj(context.permute(2, 0, 1, 3).reshape(s, b, c))
        return out, None

    @staticmethod
    def _lga_forward(q: Tensor, k: Tensor, v: Tensor, keep: Tensor, guide: LinguisticGuide,
                     token=None):
        """Eq. 4-7 without any ``S x S`` map: ``Context_i = sum_j Att_ij V_j + sum_{j linked}
        (d + a Att_ij + b Att_ij^2) V_j + offset sum_{j real} V_j`` (:func:`lga_coefficients`).

        ``Att V`` and ``LSE_i``, the log-sum-exp of query i's scores over all real keys, come from
        one fused kernel (:func:`attention_with_lse`); ``Att_ij = exp(s_ij - LSE_i)`` on the
        linked keys follows from the windowed scores of :func:`linked_sums`, which returns
        ``U_k = sum_{j linked} exp(k (s_ij - r_i)) V_j`` for a reference ``r_i`` (its largest
        linked score rounded down, <= ``LSE_i``), so that ``sum_{j linked} Att_ij^k V_j =
        ratio_i^k U_k`` with ``ratio_i = exp(r_i - LSE_i) <= 1``. Exact, with gradients through
        both kernels. q, k, v: ``B x H x S x D``; keep: ``B x S``. Returns ``B x H x S x D``."""
        b, h, s, d = q.shape
        q = q * d ** -0.5  # scaled once, as fairseq's attention does (the anchor's score is exact)
        dc, a, bc, offset = lga_coefficients(guide.fusion, guide.weight)
        powers = [pw for pw, coef in ((0, dc), (1, a), (2, bc)) if coef]
        keep_w, m_w = guide.window_masks(keep, token)
        fused = fused_lse_supported(q)
        # the anchored path's windows read views of its padded k / v, which its kernel keeps
        # anyway (no second copy)
        k1, v1 = (None, None) if fused else _anchored(k, v)
        kk, vv = (k, v) if fused else (k1[:, :, :s, :d], v1[:, :, :s, :d])
        args = (q, kk, vv, keep_w, m_w, guide, powers)
        ref, *sums = (checkpoint(linked_sums, *args, use_reentrant=False)
                      if torch.is_grad_enabled() else linked_sums(*args))
        if fused:
            context, lse = attention_with_lse(q, k, v, keep)  # B x H x S x D, B x H x S
            ratio = torch.exp(ref - lse).unsqueeze(-1).to(q.dtype)  # B x H x S x 1
        else:
            context, ratio = _anchored_attention(q, k1, v1, keep, ref)
        coefs = {0: dc, 1: a * ratio, 2: bc * ratio * ratio}
        for power, total in zip(powers, sums):
            context = context + coefs[power] * total
        if offset:
            real_v = (v * keep.view(b, 1, s, 1).to(v.dtype)).sum(2, keepdim=True)  # B x H x 1 x D
            context = context + offset * real_v
        return context


def fused_lse_supported(q: Tensor) -> bool:
    """Whether torch's fused CPU attention kernel that returns the log-sum-exp serves ``q``'s
    device (other devices take the anchored kernel, :func:`_anchored_attention`)."""
    return q.device.type == "cpu" and hasattr(torch.ops.aten,
                                               "_scaled_dot_product_flash_attention_for_cpu")


class _AttentionWithLSE(torch.autograd.Function):
    """``(softmax(Q K^T + mask) V, logsumexp(Q K^T + mask))`` from torch's fused CPU kernel, both
    differentiable (torch's own autograd treats the log-sum-exp as a constant). q, k, v:
    ``B x H x S x D`` (q already scaled); mask: ``B x 1 x 1 x S`` additive (0 or -inf), q's
    dtype. Returns ``B x H x S x D`` and ``B x H x S`` (float32)."""

    @staticmethod
    def forward(ctx, q, k, v, mask):
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, 0.0, False, attn_mask=mask, scale=1.0)
        ctx.save_for_backward(q, k, v, mask, out, lse)
        return out, lse

    @staticmethod
    def backward(ctx, grad_out, grad_lse):
        q, k, v, mask, out, lse = ctx.saved_tensors
        grad_out = torch.zeros_like(out) if grad_out is None else grad_out.contiguous()
        if grad_lse is not None:
            # the kernel's score gradient is P_ij (dO_i . V_j - dO_i . O_i), reading O from its
            # argument; the log-sum-exp adds g_i P_ij (d LSE_i / d s_ij = P_ij): the same as
            # dO_i . O_i lowered by g_i, i.e. O_i moved by -g_i dO_i / |dO_i|^2. Exact whenever
            # g_i = 0 where dO_i = 0, as in LGA (g_i is linear in dO_i there: Context_i = O_i +
            # a function of LSE_i)
            wide = torch.promote_types(out.dtype, torch.float32)  # fp16 / bf16: in fp32
            g = grad_out.to(wide)  # B x H x S x D
            norm = g.pow(2).sum(-1, keepdim=True)  # B x H x S x 1
            shift = g * (grad_lse.to(wide).unsqueeze(-1) / norm.masked_fill(norm == 0, 1.0))
            out = (out.to(wide) - shift).to(out.dtype)
        dq, dk, dv = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
            grad_out, q, k, v, out, lse, 0.0, False, attn_mask=mask, scale=1.0)
        return dq, dk, dv, None


def attention_with_lse(q: Tensor, k: Tensor, v: Tensor, keep: Tensor):
    """``Att V`` (``B x H x S x D``) and ``LSE`` (``B x H x S``, float32) over the real keys, from
    one fused kernel. q (already scaled), k, v: ``B x H x S x D``; keep: ``B x S`` (True = real
    key). A query with no real key gets zeros and ``LSE = 0``."""
    b, s = keep.shape
    mask = torch.zeros(b, 1, 1, s, dtype=q.dtype, device=q.device).masked_fill_(
        ~keep.view(b, 1, 1, s), float("-inf"))  # B x 1 x 1 x S
    return _AttentionWithLSE.apply(q, k, v, mask)


def _anchored(k: Tensor, v: Tensor):
    """k, v (``B x H x S x D``) with one more key and one more dimension, ``B x H x (S+1) x
    (D+1)``: the anchor key and value ``e_D`` (:func:`_anchored_attention`)."""
    s, d = k.size(2), k.size(3)
    k1 = F.pad(k, (0, 1, 0, 1))
    k1[:, :, s, d] = 1.0  # anchor key = e_D
    v1 = F.pad(v, (0, 1, 0, 1))
    v1[:, :, s, d] = 1.0  # anchor value = e_D
    return k1, v1


def _anchored_attention(q: Tensor, k1: Tensor, v1: Tensor, keep: Tensor, ref: Tensor):
    """``Att V`` and ``ratio_i = exp(r_i - LSE_i)`` from the fused ``scaled_dot_product_attention``
    of any device, given one extra *anchor* key whose score is ``r_i`` (``ref``, ``B x H x S``,
    an integer <= ``LSE_i``: exact in fp16 / bf16 too) and whose value column returns its weight
    ``w_i = e^r_i / (Z_i + e^r_i) <= 1/2``: ``Att V = out / (1 - w)``, ``ratio = w / (1 - w)``.
    q (already scaled): ``B x H x S x D``; k1, v1: :func:`_anchored`. Returns ``B x H x S x D``
    and ``B x H x S x 1``."""
    b, h, s, d = q.shape
    q1 = torch.cat([q, ref.unsqueeze(-1).to(q.dtype)], -1)  # B x H x S x (D+1)
    keep1 = F.pad(keep, (0, 1), value=True).view(b, 1, 1, s + 1)
    out = F.scaled_dot_product_attention(q1, k1, v1, attn_mask=keep1, scale=1.0)
    w = out[..., d:]  # B x H x S x 1: the anchor's weight
    return out[..., :d] / (1 - w), w / (1 - w)


class LGAEncoderLayer(TransformerEncoderLayerBase):
    """fairseq's encoder layer with :class:`LinguisticGuidedAttention`: Eq. 8-9 when post-LN,
    OpenNMT's pre-LN layer when ``normalize_before`` (the attention reads ``LN(x)``)."""

    def build_self_attention(self, embed_dim, cfg):
        return LinguisticGuidedAttention(embed_dim, cfg.encoder.attention_heads,
                                         dropout=cfg.attention_dropout, self_attention=True,
                                         q_noise=self.quant_noise,
                                         qn_block_size=self.quant_noise_block_size)


def set_guides(layers, guide: Optional[LinguisticGuide]) -> None:
    """Give ``guide`` to the LGA attention of every layer in ``layers`` (kept until the next
    forward, so that recomputation in the backward pass sees the same one)."""
    for layer in layers:
        attn = getattr(layer, "self_attn", None)
        if isinstance(attn, LinguisticGuidedAttention):
            attn.guide = guide


def build_guide(lga: LGAConfig, src_words: Optional[Tensor], src_heads: Optional[Tensor],
                shape, rows: Optional[Tensor] = None) -> LinguisticGuide:
    """The guide of one batch: ``src_words`` / ``src_heads`` of the sources' ``shape`` (``B x S``,
    or ``B x P x L``), flattened to rows of the last dimension; ``rows`` (optional) selects the
    rows the encoder reads (``parsingsum_ht``: the present paragraphs)."""
    if src_words is None or src_heads is None:
        raise HierError("ParsingSum needs the dependency parse of the source: pass the task's "
                        "--dependency-parse NAME (files SPLIT.parse.NAME.{bin,idx} written by "
                        "fairseq-hier-deps)")
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


def make_guide(words: Tensor, heads: Tensor, fusion: str, weight: float, diagonal: str,
               min_chunk: int = 64, multiple: int = 8) -> LinguisticGuide:
    """Chunks of ``c = max(min_chunk, longest link + 1)`` queries and windows of ``c + 2h`` keys,
    ``h`` the longest link (both rounded up to ``multiple``); one chunk (the whole row) when there
    would be 3 or fewer."""
    s = words.size(-1)
    longest = longest_link(words, heads, diagonal)
    up = lambda x: -(-x // multiple) * multiple  # noqa: E731
    c, halo = up(max(min_chunk, longest + 1)), up(longest)
    n = -(-s // c)
    if n <= 3:
        c, n = s, 1
    return LinguisticGuide(words=words, heads=heads, fusion=fusion, weight=weight,
                           diagonal=diagonal, chunk=c, num_chunks=n,
                           width=c if n == 1 else c + 2 * halo)


# ----------------------------------------------------------------------------- FT with copy
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
