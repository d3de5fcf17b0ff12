"""Oracles for the equations of PHT and VHT, and properties every parameter must have.

Each fused decoder layer is compared with a literal implementation that runs one stock fairseq
MultiheadAttention per paragraph (and, for VHT, per target step) with the layer's own weights,
then applies 000 Eq. 9-10 (PHT) or Eq. 11-13 (VHT) as written. Sizes are small but distinct
(B=2, P=3, L=5, T=4, C=16, H=4).
"""

import argparse
import math
import types
from fractions import Fraction

import pytest
import torch
from fairseq.data import Dictionary
from fairseq.models import ARCH_CONFIG_REGISTRY
from fairseq.modules import MultiheadAttention

import fairseq_hier  # noqa: F401  (registers the models)
from fairseq_hier.models.hierarchical_transformer import (
    HierarchicalTransformerConfig,
    PHTModel,
    VHTModel,
)

B, P, L, T, C, H = 2, 3, 5, 4, 16, 4
MODELS = {"pht": PHTModel, "vht": VHTModel}


def make_dict(n=20):
    d = Dictionary()
    for i in range(n):
        d.add_symbol(f"w{i}")
    return d


def build(arch, layers=2, **extra):
    d = make_dict()
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    args = argparse.Namespace(encoder_layers=layers, decoder_layers=layers, encoder_embed_dim=C,
                              decoder_embed_dim=C, encoder_ffn_embed_dim=2 * C,
                              decoder_ffn_embed_dim=2 * C, encoder_attention_heads=H,
                              decoder_attention_heads=H, pooling_heads=H, **extra)
    torch.manual_seed(0)
    return MODELS[arch].build_model(args, task), d


def encoder_out_fixture(with_paragraphs: bool):
    """Random word states and paragraph embeddings; example 1 lacks paragraph 2 and has short
    paragraphs (padding), example 0 has all three."""
    g = torch.Generator().manual_seed(7)
    words = torch.randn(L, B, P, C, generator=g)
    lengths = torch.tensor([[5, 3, 4], [2, 5, 0]])  # B x P
    padding = torch.arange(L).view(1, 1, L) >= lengths.unsqueeze(-1)  # B x P x L
    words = words.masked_fill(padding.permute(2, 0, 1).unsqueeze(-1), 0.0)
    absent = lengths.eq(0)
    out = {"encoder_out": [words], "word_rows": [], "encoder_padding_mask": [padding],
           "paragraph_out": [], "paragraph_padding_mask": [absent]}
    if with_paragraphs:
        out["paragraph_out"] = [torch.randn(P, B, C, generator=g)]
    return out


def stock_attention(module, query, key, padding_mask, need_weights=False):
    """fairseq's own MultiheadAttention.forward with the weights of ``module``."""
    return MultiheadAttention.forward(module, query=query, key=key, value=key,
                                      key_padding_mask=padding_mask, static_kv=True,
                                      need_weights=need_weights)


def part_one(layer, x):
    residual = x
    x, _ = layer.self_attn(query=x, key=x, value=x, attn_mask=torch.triu(
        torch.full((x.size(0), x.size(0)), float("-inf")), 1), need_weights=False)
    return layer.self_attn_layer_norm(residual + x)


def part_three(layer, x):
    return layer.final_layer_norm(x + layer.fc2(torch.relu(layer.fc1(x))))


def word_context_per_paragraph(layer, x1, enc):
    """Eq. 8 literally: one stock attention per paragraph -> list of P tensors T x B x C.
    An absent paragraph has no words; its context is 0 (it gets zero weight / is masked)."""
    words, padding = enc["encoder_out"][0], enc["encoder_padding_mask"][0]
    contexts = []
    for p in range(P):
        ctx, _ = stock_attention(layer.word_attn, x1, words[:, :, p], padding[:, p])
        absent = padding[:, p].all(-1)  # B
        contexts.append(ctx.masked_fill(absent.view(1, B, 1), 0.0))
    return contexts


def pht_oracle(layer, x, enc):
    x1 = part_one(layer, x)
    phi, absent = enc["paragraph_out"][0], enc["paragraph_padding_mask"][0]
    x_para, a_para = stock_attention(layer.paragraph_attn, x1, phi, absent, need_weights=True)  # Eq. 7
    contexts = word_context_per_paragraph(layer, x1, enc)  # Eq. 8
    x_int = sum(a_para[:, :, p].t().unsqueeze(-1) * contexts[p] for p in range(P))  # Eq. 9
    x2 = layer.cross_attn_layer_norm(x1 + x_para + x_int)  # Eq. 10
    return part_three(layer, x2), a_para


def vht_oracle(layer, x, enc, authors: bool):
    x1 = part_one(layer, x)
    contexts = word_context_per_paragraph(layer, x1, enc)  # Eq. 8: P x (T x B x C)
    absent = enc["paragraph_padding_mask"][0]
    rank = layer.rank_encoding(P)  # P x C
    outputs, weights = [], []
    for t in range(x.size(0)):  # Eq. 11-12, one target step at a time
        dynamic = torch.stack([contexts[p][t] + rank[p] for p in range(P)])  # P x B x C
        if authors:
            dynamic = layer.dynamic_layer_norm(x1[t].unsqueeze(0) + dynamic)
        x_para, a = stock_attention(layer.paragraph_attn, x1[t: t + 1], dynamic, absent,
                                    need_weights=True)
        outputs.append(x_para)
        weights.append(a)  # B x 1 x P
    x2 = layer.cross_attn_layer_norm(x1 + torch.cat(outputs))  # Eq. 13
    return part_three(layer, x2), torch.cat(weights, 1)


@pytest.mark.parametrize("arch,option", [("pht", None), ("vht", "paper"), ("vht", "authors")])
def test_fused_decoder_layer_equals_literal_equations(arch, option):
    extra = {} if option is None else {"dynamic_paragraph_embedding": option}
    model, _ = build(arch, **extra)
    model.eval()
    layer = model.decoder.layers[0]
    enc = encoder_out_fixture(with_paragraphs=arch == "pht")
    x = torch.randn(T, B, C, generator=torch.Generator().manual_seed(3))
    causal = torch.triu(torch.full((T, T), float("-inf")), 1)
    with torch.no_grad():
        ours, ours_attn = layer(x, enc, None, causal, None)
        if arch == "pht":
            expected, expected_attn = pht_oracle(layer, x, enc)
        else:
            expected, expected_attn = vht_oracle(layer, x, enc, authors=option == "authors")
    torch.testing.assert_close(ours, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours_attn, expected_attn, atol=1e-5, rtol=1e-5)
    assert (ours_attn[1, :, 2] == 0).all()


def test_vht_paper_and_authors_forms_differ_and_have_their_parameters():
    paper, _ = build("vht", dynamic_paragraph_embedding="paper")
    authors, _ = build("vht", dynamic_paragraph_embedding="authors")
    assert paper.decoder.layers[0].dynamic_layer_norm is None
    assert authors.decoder.layers[0].dynamic_layer_norm is not None
    n_paper = sum(p.numel() for p in paper.parameters())
    n_authors = sum(p.numel() for p in authors.parameters())
    assert n_authors - n_paper == 2 * 2 * C  # one LayerNorm (weight + bias) per decoder layer


def batch_with_one_paragraph_examples(d):
    """B=3: a three-paragraph example, a one-paragraph example, a one-paragraph one-token one."""
    g = torch.Generator().manual_seed(11)
    src = torch.full((3, 3, 4), d.pad())
    src[0] = torch.randint(d.nspecial, len(d), (3, 4), generator=g)
    src[0, 2, 2:] = d.pad()
    src[1, 0] = torch.randint(d.nspecial, len(d), (4,), generator=g)
    src[2, 0, 0] = d.nspecial
    prev = torch.randint(d.nspecial, len(d), (3, 5), generator=g)
    prev[:, 0] = d.eos()
    return src, prev


@pytest.mark.parametrize("arch,extra", [
    ("pht", {}), ("vht", {}), ("vht", {"dynamic_paragraph_embedding": "authors"}),
    ("pht", {"separate_output_projection": True}), ("vht", {"untie_embeddings": True})])
def test_every_parameter_receives_a_gradient(arch, extra):
    model, d = build(arch, **extra)
    model.train()
    src, prev = batch_with_one_paragraph_examples(d)
    logits, _ = model(src, None, prev)
    logits.float().logsumexp(-1).mean().backward()
    for name, param in model.named_parameters():
        assert param.grad is not None, f"{name} got no gradient"
        assert torch.isfinite(param.grad).all(), f"{name}: non-finite gradient"
        assert param.grad.abs().sum() > 0, f"{name}: zero gradient"


def test_one_paragraph_batch_is_finite():
    """Only one-paragraph examples: the paragraph softmax is trivially 1; nothing becomes NaN."""
    for arch in MODELS:
        model, d = build(arch)
        model.train()
        src, prev = batch_with_one_paragraph_examples(d)
        logits, extra = model(src[1:, :1], None, prev[1:])
        logits.sum().backward()
        assert torch.equal(extra["attn"][0], torch.ones(2, 5, 1))
        assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


@pytest.mark.parametrize("arch", ["pht", "vht"])
def test_bf16_autocast_forward_backward_finite(arch):
    model, d = build(arch)
    model.train()
    src, prev = batch_with_one_paragraph_examples(d)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits, extra = model(src, None, prev)
        loss = torch.nn.functional.cross_entropy(logits.float().view(-1, logits.size(-1)),
                                                 prev.roll(-1, 1).reshape(-1))
    assert logits.dtype == torch.bfloat16
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    torch.testing.assert_close(extra["attn"][0].float().sum(-1), torch.ones(3, 5), atol=1e-2,
                               rtol=0)


def test_separate_output_projection_keeps_embeddings_shared():
    model, d = build("pht", separate_output_projection=True)
    assert model.encoder.token_encoder.embed_tokens is model.decoder.embed_tokens
    proj = model.decoder.output_projection
    assert proj is not None and proj.bias is not None and proj.weight.shape == (len(d), C)
    untied, _ = build("pht", untie_embeddings=True)
    assert untied.encoder.token_encoder.embed_tokens is not untied.decoder.embed_tokens
    assert untied.decoder.output_projection.bias is None
    tied, _ = build("pht")
    assert tied.decoder.output_projection is None
    n = {name: sum(p.numel() for p in m.parameters())
         for name, m in (("tied", tied), ("separate", model), ("untied", untied))}
    assert n["separate"] - n["tied"] == len(d) * C + len(d)  # weight + bias
    assert n["untied"] - n["tied"] == 2 * len(d) * C  # decoder embedding + output weight


def expected_parameters(arch, vocab, layers=2, c=C, ffn=2 * C, authors=False):
    """Parameter count from the papers' architecture, counted by hand."""
    attention = 4 * (c * c + c)  # q, k, v, out projections with biases
    norm = 2 * c
    ffn_block = (c * ffn + ffn) + (ffn * c + c)
    encoder_layer = attention + norm + ffn_block + norm
    decoder_layer = attention + norm + 2 * attention + norm + ffn_block + norm  # self, word, para
    if authors:
        decoder_layer += norm
    pooling = (c * c + c) + c + (c * c + c) + ffn_block + norm  # W1, w2 (per head), W3, FFN, LN
    total = vocab * c + layers * (encoder_layer + decoder_layer)
    return total + (pooling if arch == "pht" else 0)


@pytest.mark.parametrize("arch,authors", [("pht", False), ("vht", False), ("vht", True)])
def test_parameter_count_matches_the_architecture(arch, authors):
    extra = {"dynamic_paragraph_embedding": "authors"} if authors else {}
    model, d = build(arch, **extra)
    count = sum(p.numel() for p in model.parameters())
    assert count == expected_parameters(arch, len(d), authors=authors)


def test_presets_set_every_paper_default():
    """Every field of the config, for every preset: the paper's value, except the layer count of
    the 1-layer presets."""
    defaults = {f: getattr(HierarchicalTransformerConfig, f)
                for f in HierarchicalTransformerConfig.__dataclass_fields__ if not f.startswith("_")}
    paper = {"encoder_embed_dim": 256, "encoder_ffn_embed_dim": 1024, "encoder_layers": 3,
             "encoder_attention_heads": 4, "decoder_embed_dim": 256, "decoder_ffn_embed_dim": 1024,
             "decoder_layers": 3, "decoder_attention_heads": 4, "pooling_heads": 4, "dropout": 0.3,
             "attention_dropout": 0.0, "activation_dropout": 0.0, "activation_fn": "relu",
             "untie_embeddings": False, "separate_output_projection": False,
             "dynamic_paragraph_embedding": "paper", "no_scale_embedding": False,
             "max_source_positions": 1024, "max_target_positions": 1024,
             # not the papers': fairseq's memory options, off by default
             "checkpoint_activations": False, "offload_activations": False}
    assert set(paper) == set(defaults), "a config field has no stated paper value in this test"
    for name, layers in (("pht", 3), ("vht", 3), ("pht_1layer", 1), ("vht_1layer", 1)):
        args = argparse.Namespace()
        ARCH_CONFIG_REGISTRY[name](args)
        expected = dict(paper, encoder_layers=layers, decoder_layers=layers)
        assert {f: getattr(args, f) for f in paper} == expected, name
    # a preset never overrides what the user set
    args = argparse.Namespace(dropout=0.1, encoder_layers=6)
    ARCH_CONFIG_REGISTRY["pht_1layer"](args)
    assert (args.dropout, args.encoder_layers, args.decoder_layers) == (0.1, 6, 1)


def test_reorder_encoder_out_composes_rows_and_keeps_word_states():
    """Beam reordering selects the masks but not the L x B x P x C word states: their row index
    is composed, and the words read through it equal an eager index_select."""
    model, d = build("pht")
    model.eval()
    src, _ = batch_with_one_paragraph_examples(d)
    enc = model.encoder(src)
    first = model.encoder.reorder_encoder_out(enc, torch.tensor([0, 0, 1, 2, 2]))
    second = model.encoder.reorder_encoder_out(first, torch.tensor([4, 1, 2]))
    assert second["encoder_out"][0] is enc["encoder_out"][0]
    assert second["word_rows"][0].tolist() == [2, 0, 1]
    words = enc["encoder_out"][0]
    assert torch.equal(model.encoder.word_states(second), words[:, [2, 0, 1]])
    assert torch.equal(second["encoder_padding_mask"][0], enc["encoder_padding_mask"][0][[2, 0, 1]])


def test_word_attention_cache_is_contiguous_and_skips_absent_paragraphs():
    """The keys/values cached at step 0 are contiguous (fairseq leaves enc-dec caches alone when
    the row count is unchanged) and exactly zero for absent paragraphs (never projected)."""
    model, d = build("pht")
    model.eval()
    src, prev = batch_with_one_paragraph_examples(d)
    enc = model.encoder.reorder_encoder_out(model.encoder(src), torch.tensor([0, 0, 1, 1, 2, 2]))
    state = {}
    model.decoder(prev[[0, 0, 1, 1, 2, 2], :1], enc, incremental_state=state)
    attn = model.decoder.layers[0].word_attn
    cache = attn._get_input_buffer(state)
    for key in ("prev_key", "prev_value"):
        kv = cache[key]  # B x H x P x L x D
        assert kv.shape == (6, H, 3, 4, C // H) and kv.is_contiguous()
        assert torch.equal(kv[2:, :, 1:], torch.zeros_like(kv[2:, :, 1:]))  # absent paragraphs
        assert kv[0, :, 2].abs().sum() > 0
    model.decoder.reorder_incremental_state_scripting(state, torch.tensor([1, 0, 3, 2, 5, 4]))
    assert attn._get_input_buffer(state)["prev_key"].is_contiguous()


def test_old_vht_checkpoint_with_dynamic_layer_norm_gets_a_clear_error():
    paper, _ = build("vht")
    authors, _ = build("vht", dynamic_paragraph_embedding="authors")
    with pytest.raises(ValueError, match="fairseq-hier 0.1's dynamic paragraph embedding"):
        paper.load_state_dict(authors.state_dict())
    authors.load_state_dict(authors.state_dict())  # the authors' form itself loads


def test_all_present_fast_path_equals_the_gathered_projection():
    """With every paragraph present the words are projected without a gathered copy; the keys,
    values and outputs equal those of the gathering path (forced here by an identity row index),
    and gradients flow to the word states the same way."""
    model, _ = build("pht")
    attn = model.decoder.layers[0].word_attn
    g = torch.Generator().manual_seed(5)
    words = torch.randn(L, B, P, C, generator=g, requires_grad=True)
    padding = torch.arange(L).view(1, 1, L) >= torch.tensor([[5, 3, 4], [2, 5, 1]]).unsqueeze(-1)
    query = torch.randn(T, B, C, generator=g)
    weights = torch.softmax(torch.randn(B, T, P, generator=g), -1)
    fast = attn(query, words, padding, paragraph_weights=weights)
    (grad_fast,) = torch.autograd.grad(fast.sum(), words)
    gathered = attn(query, words, padding, word_rows=torch.arange(B), paragraph_weights=weights)
    (grad_gathered,) = torch.autograd.grad(gathered.sum(), words)
    torch.testing.assert_close(fast, gathered, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(grad_fast, grad_gathered, atol=1e-6, rtol=1e-6)
    k_fast, v_fast = attn._keys_values(words, padding, None, None)
    k_gathered, v_gathered = attn._keys_values(words, padding, torch.arange(B), None)
    assert k_fast.is_contiguous() and k_fast.shape == (B, H, P, L, C // H)
    torch.testing.assert_close(k_fast, k_gathered, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(v_fast, v_gathered, atol=1e-6, rtol=1e-6)


# ------------------------------------------- 000 Eq. 2-6: pooling and ranking encoding, literally
def literal_rank_encoding(num_paragraphs, dim):
    """R of Eq. 6 as the module computes it, written out with math.sin/cos: rank r = 1..P, in
    fairseq's sinusoid (``SinusoidalPositionalEmbedding.get_embedding``, also its word positions of
    Eq. 1), sines of the C/2 frequencies then their cosines, frequency i = 10000^(-i / (C/2 - 1));
    an odd C leaves the last column 0. P x C lists. (Where it differs from the formula 000 cites:
    :func:`vaswani_encoding` and the tests after it.)"""
    half = dim // 2
    rows = []
    for rank in range(1, num_paragraphs + 1):
        row = [0.0] * dim
        for i in range(half):
            angle = rank * math.exp(-i * math.log(10000.0) / (half - 1))
            row[i] = math.sin(angle)
            row[half + i] = math.cos(angle)
        rows.append(row)
    return rows


def literal_pooling(pool, states, padding):
    """Eq. 2-5 with one Python loop per paragraph and per head: ``states`` L x N x C, padding
    N x L (True = pad). Returns N x C."""
    seq_len, n, c = states.shape
    h, d = pool.num_heads, pool.head_dim
    out = []
    for j in range(n):
        keep = [t for t in range(seq_len) if not padding[j, t]]
        c_p = states[keep, j]  # n_p x C
        projected = c_p @ pool.w1.weight.t() + pool.w1.bias  # Eq. 2: C_p W_1
        heads = []
        for i in range(h):
            head = projected[:, i * d:(i + 1) * d]  # HeadSplit: n_p x d_head
            scores = head @ pool.head_query[i]  # head_p^i w_2^i: n_p
            weights = torch.softmax(scores, 0)
            heads.append(weights @ head)  # Eq. 3: Softmax(.)^T head_p^i, d_head
        phi = torch.cat(heads) @ pool.w3.weight.t() + pool.w3.bias  # Eq. 4: W_3 [phi^0; ...]
        ffn = pool.fc2(torch.relu(pool.fc1(phi)))
        out.append(torch.nn.functional.layer_norm(phi + ffn, (c,), pool.layer_norm.weight,
                                                  pool.layer_norm.bias, eps=1e-5))  # Eq. 5
    return torch.stack(out)


@pytest.mark.parametrize("dim", [16, 15])
def test_rank_encoding_equals_literal_sinusoid(dim):
    from fairseq_hier.modules.rank_encoding import RankEncoding

    enc = RankEncoding(dim, init_size=4)
    for p in (3, 130):  # 130 > init_size: the table grows
        r = enc(p)
        assert r.shape == (p, dim)
        expected = torch.tensor(literal_rank_encoding(p, dim), dtype=torch.float64)
        err = (r.double() - expected).abs().max()
        assert err < 2e-5, err  # float32 table against float64 math.sin at ranks up to 130
    if dim % 2:
        assert torch.all(enc(130)[:, -1] == 0)


def vaswani_encoding(positions, dim):
    """The positional encoding 000 cites for R (Eq. 6: "generated by the positional encoding
    function (Vaswani et al., 2017)"), Vaswani et al. Sec. 3.5 written out:
    PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)): sines and
    cosines interleaved. (Also 002's code at positions 0, 1, ...: nlpyang/hiersumm
    src/abstractive/neural.py lines 54-57, ``pe[:, 0::2] = torch.sin(position.float() *
    div_term)``, used by liu_ht's token and paragraph positions.) ``positions`` x d lists
    (d even)."""
    rows = []
    for pos in positions:
        row = [0.0] * dim
        for i in range(dim // 2):
            row[2 * i] = math.sin(pos / 10000 ** (2 * i / dim))
            row[2 * i + 1] = math.cos(pos / 10000 ** (2 * i / dim))
        rows.append(row)
    return rows


def wiki_sum_encoding(positions, dim):
    """The authors' code (yema2018/wiki_sum, sen_encoder.py ``get_angles`` and
    ``positional_encoding``, lines 7-27): ``angle_rates = 1 / np.power(10000, (2 * (i//2)) / np.float32(d_model))``, then
    ``np.concatenate([sines of the even columns, cosines of the odd columns])``; my_model.py adds
    ``positional_encoding(para_num, d_model)`` to the paragraph vectors (line 47-53), positions
    0..P-1. ``positions`` x d lists (d even)."""
    rows = []
    for pos in positions:
        angles = [pos / 10000 ** (2 * (i // 2) / dim) for i in range(dim)]
        rows.append([math.sin(a) for a in angles[0::2]] + [math.cos(a) for a in angles[1::2]])
    return rows


def sines_then_cosines(dim):
    """The channel permutation from the interleaved layout to sines-then-cosines: column j of
    the latter is column ``perm[j]`` of the former (sin of frequency j, then cos of frequency j)."""
    return list(range(0, dim, 2)) + list(range(1, dim, 2))


@pytest.mark.parametrize("dim", [16, 256])
def test_rank_encoding_against_the_formula_000_cites(dim):
    """Where our R (fairseq's sinusoid at ranks 1..P) differs from Vaswani et al.'s formula:
    (1) the channel layout, a fixed permutation (sines first, then cosines); (2) the frequency
    scale: channel pair j turns at 10000^(-j/(C/2-1)) in ours, 10000^(-2j/C) = 10000^(-j/(C/2))
    in the formula, equal only for j = 0; so the two are NOT equal up to a permutation. The
    frequencies are read back from the module (rank 1: sin w, cos w), not assumed."""
    from fairseq_hier.modules.rank_encoding import RankEncoding

    half, perm = dim // 2, sines_then_cosines(dim)
    ours = RankEncoding(dim)(40).double()  # ranks 1..40 x C
    paper = torch.tensor(vaswani_encoding(range(1, 41), dim), dtype=torch.float64)[:, perm]
    # the frequency of each channel pair, read from rank 1's row: atan2(sin w, cos w) = w
    w_ours = torch.atan2(ours[0, :half], ours[0, half:])
    w_paper = torch.atan2(paper[0, :half], paper[0, half:])
    j = torch.arange(half, dtype=torch.float64)
    torch.testing.assert_close(w_ours, 10000.0 ** (-j / (half - 1)), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(w_paper, 10000.0 ** (-j / half), atol=1e-12, rtol=1e-12)
    # every pair but the first turns slower in ours, by the factor 10000^(-j / (half (half-1)))
    torch.testing.assert_close(w_ours / w_paper, 10000.0 ** (-j / (half * (half - 1))),
                               atol=1e-6, rtol=1e-5)
    assert w_ours[0] == pytest.approx(1.0, abs=1e-6) and bool(torch.all(w_ours[1:] < w_paper[1:]))
    # permuted, the formula matches ours exactly on the channels of frequency 1 (sin r, cos r)
    same = (ours - paper).abs().max(0).values < 1e-6
    assert same.nonzero().flatten().tolist() == [0, half]
    # elsewhere apart: by up to 0.11 at C = 256 (000's d) over ranks 1..40, more at C = 16
    assert (ours - paper).abs().max() > 0.05
    # no other fixed permutation gives ours either: a permutation keeps the set of frequencies,
    # and the two sets (exponents of 1/10000, read back above) share only frequency 1
    ours_exponents = {Fraction(k, half - 1) for k in range(half)}
    assert ours_exponents & {Fraction(m, half) for m in range(half)} == {0}


def test_rank_encoding_against_the_authors_code():
    """The authors' code (yema2018/wiki_sum) differs from the formula only in the layout (the
    permutation above: it concatenates the sines and the cosines, as fairseq does), and from
    ours in the frequencies (the formula's) and the origin: its top-ranked paragraph gets
    position 0 (sin 0 = 0, cos 0 = 1), ours rank 1."""
    from fairseq_hier.modules.rank_encoding import RankEncoding

    dim, n = 16, 30
    authors = torch.tensor(wiki_sum_encoding(range(n), dim), dtype=torch.float64)
    formula = torch.tensor(vaswani_encoding(range(n), dim), dtype=torch.float64)
    torch.testing.assert_close(authors, formula[:, sines_then_cosines(dim)], atol=1e-12, rtol=0)
    assert authors[0].tolist() == [0.0] * (dim // 2) + [1.0] * (dim // 2)  # the top paragraph
    ours = RankEncoding(dim)(n).double()  # ranks 1..n
    assert (ours[0] - authors[0]).abs().max() > 0.5  # rank 1 is position 1, not 0
    # ours shifted to the authors' origin still differs: the frequencies
    shifted = torch.tensor(wiki_sum_encoding(range(1, n + 1), dim), dtype=torch.float64)
    assert (ours - shifted).abs().max() > 0.5
    torch.testing.assert_close(ours[:, [0, dim // 2]], shifted[:, [0, dim // 2]], atol=1e-6,
                               rtol=0)


@pytest.mark.parametrize("fused", [True, False])
def test_multi_head_pooling_equals_per_head_loop(fused):
    from fairseq_hier.modules.multihead_pooling import MultiHeadPooling

    torch.manual_seed(3)
    pool = MultiHeadPooling(C, H, 2 * C, dropout=0.0).eval()
    pool.fused = fused
    for p in pool.parameters():  # biases and LayerNorm away from their 0/1 initialisation
        torch.nn.init.normal_(p, std=0.5)
    n = 5
    states = torch.randn(L, n, C, dtype=torch.float32)
    lengths = torch.tensor([5, 1, 3, 4, 2])
    padding = torch.arange(L).view(1, L) >= lengths.view(n, 1)  # N x L
    with torch.no_grad():
        got = pool(states, padding)
        want = literal_pooling(pool, states, padding)
    assert got.shape == (n, C)
    assert torch.allclose(got, want, atol=1e-5), (got - want).abs().max()
    # padding states do not leak in
    with torch.no_grad():
        noisy = states.masked_fill(padding.t().unsqueeze(-1), 1e3)
        assert torch.allclose(pool(noisy, padding), want, atol=1e-5)


def test_pht_paragraph_embeddings_are_pooling_plus_rank():
    """Eq. 2-6 through the PHT encoder: Phi_p = pooling of paragraph p's encoder states + R_p;
    an absent paragraph is R only (masked in the decoder)."""
    model, d = build("pht")
    model.eval()
    g = torch.Generator().manual_seed(5)
    tokens = torch.randint(4, len(d), (B, P, L), generator=g)
    lengths = torch.tensor([[5, 3, 4], [2, 5, 0]])  # example 1 lacks paragraph 2
    tokens = tokens.masked_fill(torch.arange(L).view(1, 1, L) >= lengths.unsqueeze(-1), d.pad())
    with torch.no_grad():
        out = model.encoder(tokens)
        phi = out["paragraph_out"][0]  # P x B x C
        words = out["encoder_out"][0]  # L x B x P x C
        rank = torch.tensor(literal_rank_encoding(P, C))
        for b in range(B):
            for p in range(P):
                n = int(lengths[b, p])
                if n == 0:
                    assert torch.allclose(phi[p, b], rank[p], atol=1e-5)
                    continue
                states = words[:, b, p].unsqueeze(1)  # L x 1 x C
                padding = (torch.arange(L) >= n).view(1, L)
                want = literal_pooling(model.encoder.pooling, states, padding)[0] + rank[p]
                assert torch.allclose(phi[p, b], want, atol=1e-5), (b, p)
