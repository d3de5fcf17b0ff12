"""Fused attention: our attention modules run torch's
``scaled_dot_product_attention`` where the mask allows, equal to the written-out reference path
(1e-5 in float32, outputs and gradients), and a training forward never builds the
``B x H x P x T x L`` word-probability tensor. PHT's and VHT's dropouts keep a boolean mask for
backward: the same dropouts as fairseq's, at the same places with the same probabilities.

Which kernel ran is read from torch.profiler's op names: ``flash``/``efficient`` kernels keep no
probabilities; ``_scaled_dot_product_attention_math`` would build them (a silent fallback, e.g.
for a mask layout the kernel does not take, is a failure here).
"""

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import fairseq_hier  # noqa: F401  (registers the models)
from conftest import TINY_HAT, bos_source, build_model, left_pad, make_dict
from conftest import paragraph_batch, paragraph_dict, random_prev_tokens
from fairseq_hier.modules.masking import mask_value, masked_softmax
from fairseq_hier.modules.multihead_pooling import MultiHeadPooling, attention_pool
from fairseq_hier.modules.paragraph_attention import (ParagraphWordAttention, word_attention,
                                                       word_attention_mask)
from fairseq_hier.modules.recompute import MaskDropout, mask_dropout

fairseq_hier.register()

B, H, P, T, L, D = 2, 2, 3, 13, 11, 4  # distinct sizes: a wrong axis fails


def attention_ops(fn):
    """Names of the attention kernels ``fn`` runs (forward and backward)."""
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        fn()
    return {e.key for e in prof.key_averages() if "scaled_dot_product" in e.key}, prof


def fused_only(ops):
    return bool(ops) and not any("math" in op for op in ops)


def paragraph_masks(g):
    """``B x P x L`` padding with ragged paragraphs and one absent paragraph (example 1, p 2)."""
    lengths = torch.randint(1, L + 1, (B, P), generator=g)
    lengths[1, 2] = 0
    return torch.arange(L).view(1, 1, L) >= lengths.unsqueeze(-1)


def test_word_attention_fused_equals_reference_with_gradients():
    g = torch.Generator().manual_seed(0)
    q = (torch.randn(B, H, T, D, generator=g) * D ** -0.5).requires_grad_()
    k = torch.randn(B, H, P, L, D, generator=g).requires_grad_()
    v = torch.randn(B, H, P, L, D, generator=g).requires_grad_()
    keep = ~word_attention_mask(paragraph_masks(g))
    assert keep.any(-1).all()  # the absent paragraph keeps position 0: no empty softmax
    grad = torch.randn(B, H, P, T, D, generator=g)
    results = []
    for fused in (True, False):
        out = word_attention(q, k, v, keep, fused=fused)
        grads = torch.autograd.grad(out, (q, k, v), grad)
        results.append((out, *grads))
    for fused, reference in zip(*results):
        torch.testing.assert_close(fused, reference, atol=1e-5, rtol=1e-5)
    # and the reference is the literal equation for one (b, h, p, t)
    b, h, p, t = 1, 1, 0, 7
    scores = q[b, h, t] @ k[b, h, p].T  # L
    scores[~keep[b, p]] = float("-inf")
    literal = torch.softmax(scores, -1) @ v[b, h, p]
    torch.testing.assert_close(results[0][0][b, h, p, t], literal, atol=1e-5, rtol=0)
    ops, _ = attention_ops(lambda: word_attention(q, k, v, keep).sum().backward())
    assert fused_only(ops), ops


def build_pht(arch, dim=8, heads=H):
    import argparse
    import types

    from fairseq_hier.models.hierarchical_transformer import PHTModel, VHTModel

    d = paragraph_dict(60)
    args = argparse.Namespace(encoder_layers=1, decoder_layers=1, encoder_embed_dim=dim,
                              decoder_embed_dim=dim, encoder_ffn_embed_dim=2 * dim,
                              decoder_ffn_embed_dim=2 * dim, encoder_attention_heads=heads,
                              decoder_attention_heads=heads, pooling_heads=heads, dropout=0.0)
    torch.manual_seed(0)
    model = {"pht": PHTModel, "vht": VHTModel}[arch].build_model(args, types.SimpleNamespace(
        source_dictionary=d, target_dictionary=d))
    return model, d


def pht_batch(d):
    g = torch.Generator().manual_seed(1)
    padding = paragraph_masks(g)
    tokens = torch.randint(d.nspecial, len(d) - 1, (B, P, L), generator=g)
    src = tokens.masked_fill(padding, d.pad())
    return paragraph_batch(d, list(src)), random_prev_tokens(d, B, T)


def set_fused(model, fused):
    for m in model.modules():
        if isinstance(m, (ParagraphWordAttention, MultiHeadPooling)):
            m.fused = fused


@pytest.mark.parametrize("arch", ["pht", "vht"])
def test_models_fused_equal_reference_and_never_build_word_probabilities(arch):
    model, d = build_pht(arch)
    model.train()  # dropout 0: the training path, deterministic
    src, prev = pht_batch(d)

    def step(fused):
        set_fused(model, fused)
        model.zero_grad()
        logits, _ = model(src, None, prev)
        logits.float().pow(2).mean().backward()
        return logits.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}

    fused_logits, fused_grads = step(True)
    ref_logits, ref_grads = step(False)
    torch.testing.assert_close(fused_logits, ref_logits, atol=1e-5, rtol=1e-5)
    assert fused_grads.keys() == ref_grads.keys()
    for name in fused_grads:
        torch.testing.assert_close(fused_grads[name], ref_grads[name], atol=1e-5, rtol=1e-4,
                                   msg=name)

    # no op of a training step takes a tensor of B*H*P*T*L elements; the reference path does
    probs = B * H * P * T * L

    def shapes(fused):
        set_fused(model, fused)
        ops, prof = attention_ops(lambda: step(fused))
        sizes = {e.key: s for e in prof.key_averages(group_by_input_shape=True)
                 for s in e.input_shapes if s and torch.Size(s).numel() == probs}
        return ops, sizes

    ops, sizes = shapes(True)
    assert fused_only(ops) and not sizes, (ops, sizes)
    _, sizes = shapes(False)
    assert sizes, "the check is vacuous: the reference path should build the probabilities"


def test_attention_pool_fused_equals_reference_and_the_equation():
    g = torch.Generator().manual_seed(2)
    n = 5
    values = torch.randn(L, n, H, D, generator=g).requires_grad_()
    query = torch.randn(H, D, generator=g).requires_grad_()
    padding = torch.arange(L).view(1, L) >= torch.tensor([1, 3, 11, 7, 2]).view(n, 1)
    grad = torch.randn(n, H, D, generator=g)
    results = []
    for fused in (True, False):
        out = attention_pool(None, values, padding, query=query, fused=fused)
        results.append((out, *torch.autograd.grad(out, (values, query), grad)))
    for fused, reference in zip(*results):
        torch.testing.assert_close(fused, reference, atol=1e-5, rtol=1e-5)
    # 000 Eq. 3 for one paragraph and head: softmax(head w_2)^T head over its real tokens
    i, h = 1, 1
    real = values[:3, i, h]  # paragraph 1 has 3 tokens
    literal = torch.softmax(real @ query[h], 0) @ real
    torch.testing.assert_close(results[0][0][i, h], literal, atol=1e-5, rtol=0)
    # given scores (002's W_a x) take the same written-out path
    scores = torch.einsum("lnhd,hd->nhl", values, query)
    torch.testing.assert_close(attention_pool(scores, values, padding), results[1][0])
    ops, _ = attention_ops(
        lambda: attention_pool(None, values, padding, query=query).sum().backward())
    assert fused_only(ops), ops


def test_hat_sentence_attention_runs_fused_in_training_and_equals_evaluation():
    d = make_dict(40)
    torch.manual_seed(0)
    model = build_model("hat_transformer_iwslt_zh_en", d, **{**TINY_HAT, "attention_dropout": 0.0,
                                                              "activation_dropout": 0.0})
    src = left_pad([bos_source(3, 4, 2), bos_source(5)])
    prev = torch.tensor([[d.eos(), 11, 12, 13]] * 2)
    lengths = src.ne(d.pad()).sum(1)
    model.eval()
    with torch.no_grad():
        evaluated, extra = model(src, lengths, prev)
    assert extra["sentence_attn"][0].shape == (2, 4, 3)  # weights where they are read
    model.train()  # dropout 0 (TINY_HAT): same function, fused kernels
    ops, prof = attention_ops(lambda: model(src, lengths, prev))
    calls = {e.key: e.count for e in prof.key_averages()}
    # 2 token + 1 sentence encoder self-attentions, 2 decoder self-attentions and 2 sentence
    # attentions (the sentence attentions fused too; fairseq's token-level cross attention keeps its explicit
    # path: it returns alignment weights)
    assert calls.get("aten::_scaled_dot_product_flash_attention_for_cpu") == 7, calls
    with torch.no_grad():
        trained, extra = model(src, lengths, prev)
    torch.testing.assert_close(trained, evaluated, atol=1e-5, rtol=1e-5)
    assert extra["sentence_attn"] == [None]  # not computed in training
    assert fused_only(ops), ops


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_masking_is_finite_in_half_precision(dtype):
    scores = torch.randn(2, 3, dtype=dtype)
    mask = torch.tensor([[True, True, True], [False, True, False]])
    probs = masked_softmax(scores, mask)
    assert probs.dtype == torch.float32 and torch.isfinite(probs).all()
    torch.testing.assert_close(probs[0], torch.full((3,), 1 / 3))  # fully masked: uniform
    assert probs[1, 1] == 0
    # -inf would give NaN on the fully masked row
    assert torch.softmax(scores.float().masked_fill(mask, float("-inf")), -1)[0].isnan().all()
    assert mask_value(dtype) == torch.finfo(dtype).min


def test_mask_dropout_is_dropout_and_keeps_a_boolean_mask():
    """Against the literal definition, on the same uniforms: ``x * (u >= p) / (1 - p)``, gradient
    ``g * (u >= p) / (1 - p)``; about a fraction p dropped; backward keeps one boolean tensor."""
    p, shape = 0.3, (40, 30, 50)
    x = torch.randn(shape, requires_grad=True)
    g = torch.randn(shape)
    torch.manual_seed(5)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        y = mask_dropout(x, p)
    y.backward(g)
    torch.manual_seed(5)
    keep = torch.rand(shape) >= p  # the literal: same draws
    assert torch.equal(y != 0, keep) and torch.equal(x.grad != 0, keep)
    torch.testing.assert_close(y, x.detach() * keep.float() / (1 - p), rtol=1e-6, atol=0)
    torch.testing.assert_close(x.grad, g * keep.float() / (1 - p), rtol=1e-6, atol=0)
    assert abs((y == 0).float().mean().item() - p) < 0.01  # 60,000 draws: sd 0.002
    assert [(t.dtype, t.shape) for t in saved] == [(torch.bool, torch.Size(shape))]
    module = MaskDropout(p)
    assert module.eval()(x) is x and MaskDropout(0.0).train()(x) is x
    module.apply_during_inference = True  # fairseq's --retain-dropout
    assert (module(x) == 0).any()


@pytest.mark.parametrize("arch", ["pht", "vht"])
def test_models_dropout_same_places_and_probabilities(arch, monkeypatch):
    """PHT and VHT (built with dropout 0.3) against the same model with fairseq's own dropout
    modules: the same dropout modules are called, in the same order, with the same p; ours drop
    about a fraction p of their input and scale the rest by 1 / (1 - p); in evaluation mode both
    models give exactly the same logits."""
    import argparse
    import types

    from fairseq.modules import FairseqDropout

    from fairseq_hier.models import hierarchical_transformer as ht

    d = paragraph_dict(60)
    args = argparse.Namespace(encoder_layers=1, decoder_layers=2, encoder_embed_dim=16,
                              decoder_embed_dim=16, encoder_ffn_embed_dim=32,
                              decoder_ffn_embed_dim=32, encoder_attention_heads=2,
                              decoder_attention_heads=2, pooling_heads=2, dropout=0.3,
                              attention_dropout=0.1, activation_dropout=0.2)
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    cls = {"pht": ht.PHTModel, "vht": ht.VHTModel}[arch]
    torch.manual_seed(0)
    ours = cls.build_model(argparse.Namespace(**vars(args)), task)
    with monkeypatch.context() as patch:
        patch.setattr(ht, "use_mask_dropout", lambda model: 0)  # fairseq's dropout modules
        torch.manual_seed(0)
        stock = cls.build_model(argparse.Namespace(**vars(args)), task)
    modules = lambda m: [(n, type(x), x.p) for n, x in m.named_modules()  # noqa: E731
                         if isinstance(x, FairseqDropout)]
    assert [(n, p) for n, _, p in modules(ours)] == [(n, p) for n, _, p in modules(stock)]
    assert {t for _, t, _ in modules(ours)} == {MaskDropout}
    assert {t for _, t, _ in modules(stock)} == {FairseqDropout}
    assert {p for _, _, p in modules(ours)} == {0.3, 0.1, 0.2}
    src, prev = pht_batch(d)

    def calls(model):
        """(module, p) of every dropout applied in a training forward, and its inputs/outputs."""
        seen = []
        hooks = [m.register_forward_hook(lambda m, i, o, n=n: seen.append((n, m.p, i[0], o)))
                 for n, m in model.named_modules() if isinstance(m, FairseqDropout)]
        model.train()
        model(src, None, prev)
        for h in hooks:
            h.remove()
        return seen

    ours_calls, stock_calls = calls(ours), calls(stock)
    assert [(n, p) for n, p, _, _ in ours_calls] == [(n, p) for n, p, _, _ in stock_calls]
    applied = [(n, p, i, o) for n, p, i, o in ours_calls if p > 0]
    assert applied, "no dropout was applied"
    dropped = torch.cat([(o == 0).flatten() for _, _, i, o in applied if i.ne(0).all()])
    assert abs(dropped.float().mean().item() - 0.3) < 0.05, dropped.float().mean()
    for name, p, i, o in applied:
        kept = o != 0
        torch.testing.assert_close(o[kept], i[kept] / (1 - p), msg=name)
    ours.eval(), stock.eval()
    with torch.no_grad():
        assert torch.equal(ours(src, None, prev)[0], stock(src, None, prev)[0])
