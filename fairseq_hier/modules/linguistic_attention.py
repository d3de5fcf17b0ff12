"""Linguistic-guided attention (LGA, Ma et al., paper 003 Sec. 2.2, Eq. 1-7): fairseq's encoder
self-attention with the sentence's dependency matrix ``M`` fused into its weights, ``LGAtt =
alpha M (.) Att + Att`` (Eq. 4; Table 6's direct and Gaussian fusions, :func:`lga_term`), never
renormalised. ``M`` comes from two integer ids per piece (:func:`dependency_matrix`), once per
batch (:class:`LinguisticGuide`, :func:`make_guide`); the attention keeps no ``S x S`` map
(:meth:`LinguisticGuidedAttention._lga_forward`: one fused kernel with the log-sum-exp plus
windowed sums over the linked keys, :func:`linked_sums`); :func:`lga_context` writes Eq. 4-7 out.
The equations, the readings chosen where the PDF is garbled and how it is computed:
docs/models.md, section fairseq_hier.modules.linguistic_attention. Imports
``fairseq_hier.errors``, torch and fairseq.

Legend: B batch, S source pieces, T query positions (= S), H heads, D head dim, C model dim;
n chunks of c queries, W keys per window. Masks: True = padding.
"""

from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from fairseq.modules import MultiheadAttention
from fairseq.modules.transformer_layer import TransformerEncoderLayerBase
from torch import Tensor
from torch.utils.checkpoint import checkpoint

from ..errors import HierError
from .masking import masked_fill_scores, masked_softmax

FUSIONS = ("alpha", "direct", "gaussian")  # --lga-fusion
DIAGONALS = ("word", "piece", "none")  # --lga-diagonal


# ----------------------------------------------------------------------------- equations
def dependency_links(query, key, diagonal: str = "none") -> Tensor:
    """003 Eq. 1 on pieces: True where a query piece's word and a key piece's word are linked by
    an arc (either direction), or by ``diagonal`` (docs/models.md, section
    fairseq_hier.modules.linguistic_attention).

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
    ref = ref.view(b, h, n * c)[:, :, :s]  # B x H x S
    # a query with no linked key (its sums are 0) gets a reference at most its largest score,
    # -|q_i| max_j |k_j| (Cauchy-Schwarz), so that exp(r_i - LSE_i) <= 1 and the anchor's weight
    # <= 1/2 whatever the scores' range (0 overflowed both for a query whose LSE is below -88)
    unlinked = ~linked.any(-1).expand(b, h, n, c).reshape(b, h, n * c)[:, :, :s]  # B x H x S
    bound = -(q.detach().float().norm(dim=-1)
              * k.detach().float().norm(dim=-1).amax(-1, keepdim=True))  # B x H x S
    ref = torch.where(unlinked, bound.floor().clamp(-60000.0, 0.0), ref)  # fp16's range
    return (ref, *sums)


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
            # r_i <= LSE_i; the clamp holds it where a reference was clamped (scores beyond
            # +-250, or below -60000 without a linked key), whose sums it scales are ~0
            ratio = torch.exp((ref - lse).clamp(max=0.0)).unsqueeze(-1).to(q.dtype)  # B x H x S x 1
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
