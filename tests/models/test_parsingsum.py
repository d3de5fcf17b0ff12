"""ParsingSum (paper 003): the dependency matrix on pieces, linguistic-guided attention against a
literal implementation of Eq. 4-7 and of Table 6's fusions (values and gradients), alpha = 0 ==
the plain models on the same weights (``transformer_copy`` / ``liu_ht``), the parse required,
for ``parsingsum_ft`` and ``parsingsum_ht``. Batch invariance (padding and the other examples'
arcs must not reach M), masking, incremental == full decoding and save/load are
tests/models/test_contracts.py's, for every architecture.

Small but distinct sizes (B=2, S=7, H=2, D=4 / C=8) so that a wrong transpose fails.
"""

import argparse
import types

import pytest
import torch

import fairseq_hier  # noqa: F401  (registers the models)
from conftest import paragraph_dict as make_dict
from conftest import random_prev_tokens as prev_tokens
from fairseq_hier.modules.linguistic_attention import (
    LinguisticGuidedAttention,
    dependency_matrix,
    lga_context,
    longest_link,
    make_guide,
)

# one example of 6 pieces + EOS: words 0 (2 pieces), 1, 2 (2 pieces), then "." = word 3;
# word 1 is the root, 0 -> 1, 2 -> 1, 3 -> 1
WORDS = torch.tensor([0, 0, 1, 2, 2, 3, -1])
HEADS = torch.tensor([1, 1, -1, 1, 1, 1, -1])


def test_dependency_matrix_on_pieces_literal():
    m = dependency_matrix(WORDS, HEADS, "word").int()
    expected = torch.tensor([
        # 0a 0b 1  2a 2b 3  EOS
        [1, 1, 1, 0, 0, 0, 0],  # piece of word 0: its own word and its head (1)
        [1, 1, 1, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 1, 0],  # the root: itself and all its dependents' pieces
        [0, 0, 1, 1, 1, 0, 0],
        [0, 0, 1, 1, 1, 0, 0],
        [0, 0, 1, 0, 0, 1, 0],
        [0, 0, 0, 0, 0, 0, 0],  # EOS (not a word) is linked to nothing
    ])
    assert torch.equal(m, expected)
    # piece: the diagonal only for the piece itself; none: the arcs alone
    piece = dependency_matrix(WORDS, HEADS, "piece").int()
    assert piece[0, 1] == 0 and piece[0, 0] == 1 and piece[6, 6] == 0
    none = dependency_matrix(WORDS, HEADS, "none").int()
    assert torch.equal(none, expected - torch.block_diag(torch.ones(2, 2), torch.ones(1, 1),
                                                         torch.ones(2, 2), torch.ones(1, 1),
                                                         torch.zeros(1, 1)).int())
    assert torch.equal(m, m.T)  # undirected (003 Sec. 2.1)
    # Eq. 1 has no self-links: the default is the arcs alone
    assert torch.equal(dependency_matrix(WORDS, HEADS), none)
    assert not dependency_matrix(WORDS, HEADS).diagonal().any()


def literal_lga(attn, x, padding, m, fusion, weight):
    """Eq. 2-7 with loops over examples, heads and query positions: Att (Eq. 5), M repeated over
    heads (Eq. 6, stack_h), LGAtt (Eq. 4 / 10 / 11-12), Context (Eq. 7), then W_O."""
    s, b, c = x.shape
    h, d = attn.num_heads, attn.head_dim
    out = torch.zeros(s, b, c)
    for n in range(b):
        real = [j for j in range(s) if not padding[n, j]]
        q = attn.q_proj(x[:, n]).view(s, h, d)
        k = attn.k_proj(x[:, n]).view(s, h, d)
        v = attn.v_proj(x[:, n]).view(s, h, d)
        stacked = m[n].float().unsqueeze(0).repeat(h, 1, 1)  # Eq. 6: H x S x S
        heads = []
        for z in range(h):
            rows = []
            for i in range(s):
                scores = torch.stack([q[i, z] @ k[j, z] / d ** 0.5 for j in real])
                att = torch.softmax(scores, 0)
                ctx = torch.zeros(d)
                for a, j in zip(att, real):
                    mij = stacked[z, i, j]
                    if fusion == "alpha":
                        lg = weight * mij * a + a  # Eq. 4
                    elif fusion == "direct":
                        lg = weight * mij + a  # Eq. 10
                    else:
                        lg = (1 - mij * a) ** 2 / weight + a  # Eq. 11-12
                    ctx = ctx + lg * v[j, z]  # Eq. 7, no renormalisation
                rows.append(ctx)
            heads.append(torch.stack(rows))  # S x D
        out[:, n] = attn.out_proj(torch.cat(heads, -1))
    return out


def random_parse(n, seed, sentence=5):
    """Word and head ids of ``n`` pieces + EOS: sentences of ``sentence`` pieces, words of 1-2
    pieces, a random tree per sentence (the longest link stays under ``sentence`` pieces)."""
    import random

    rng = random.Random(seed)
    words, heads, word = [], [], 0
    while len(words) < n:
        sizes = []
        while sum(sizes) < min(sentence, n - len(words)):
            sizes.append(min(rng.choice((1, 2)), min(sentence, n - len(words)) - sum(sizes)))
        root = word + rng.randrange(len(sizes))
        for i, size in enumerate(sizes):
            head = -1 if word + i == root else word + rng.randrange(len(sizes))
            words += [word + i] * size
            heads += [root if head == word + i else head] * size
        word += len(sizes)
    return torch.tensor(words + [-1]), torch.tensor(heads + [-1])


def guided(fusion, weight, words, heads, chunked=True, diagonal="word"):
    """A guide whose chunks are as small as the links allow (several windows) or one chunk."""
    return make_guide(words, heads, fusion, weight, diagonal, min_chunk=1 if chunked else 10 ** 6,
                      multiple=1)


FUSIONS = [("alpha", 2.0), ("direct", 0.25), ("gaussian", 8.0), ("gaussian", 0.25)]


@pytest.mark.parametrize("fusion,weight,diagonal", [(f, w, "none") for f, w in FUSIONS]
                         + [("alpha", 2.0, "word")])
@pytest.mark.parametrize("chunked", [True, False])
def test_attention_against_literal_equations(fusion, weight, diagonal, chunked):
    torch.manual_seed(0)
    attn = LinguisticGuidedAttention(8, 2, self_attention=True).eval()
    s = 23
    x = torch.randn(s, 2, 8)
    padding = torch.zeros(2, s, dtype=torch.bool)
    padding[1, 17:] = True  # the second example has 17 pieces (16 + EOS)
    (w0, h0), (w1, h1) = random_parse(s - 1, 0), random_parse(16, 1)
    pad = lambda t: torch.cat([t, t.new_full((s - len(t),), -1)])  # noqa: E731
    words, heads = torch.stack([w0, pad(w1)]), torch.stack([h0, pad(h1)])
    attn.guide = guided(fusion, weight, words, heads, chunked, diagonal)
    assert (attn.guide.num_chunks > 3) == chunked
    out, _ = attn(x, x, x, key_padding_mask=padding, need_weights=False)
    expected = literal_lga(attn, x, padding, dependency_matrix(words, heads, diagonal), fusion,
                           weight)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("fusion,weight", FUSIONS[:3])
def test_banded_gradients_equal_the_explicit_form(fusion, weight):
    """The banded path in float32 as it trains on this device (on CPU the fused kernel that
    returns the log-sum-exp) + checkpointed windows has the gradients of Eq. 4-7 written out with
    the S x S maps (lga_context)."""
    torch.manual_seed(1)
    words, heads = random_parse(30, 2)
    words, heads = words.unsqueeze(0).repeat(2, 1), heads.unsqueeze(0).repeat(2, 1)
    s = words.size(1)
    keep = torch.ones(2, s, dtype=torch.bool)
    keep[1, 25:] = False
    guide = guided(fusion, weight, words, heads)
    assert guide.num_chunks > 3
    q, k, v = (torch.randn(2, 2, s, 4, requires_grad=True) for _ in range(3))
    results = []
    for banded in (True, False):
        ctx = LinguisticGuidedAttention._lga_forward(q, k, v, keep, guide) if banded else \
            lga_context(q, k, v, keep.view(2, 1, 1, s), guide.dense(), fusion, weight)
        (ctx * torch.arange(4.0)).sum().backward()
        results.append([ctx.detach()] + [t.grad.clone() for t in (q, k, v)])
        for t in (q, k, v):
            t.grad = None
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kernel", ["fused_lse", "anchored"])
@pytest.mark.parametrize("fusion,weight", [("alpha", 2.0), ("gaussian", 0.25)])
def test_banded_gradients_in_double_precision(kernel, fusion, weight, monkeypatch):
    """Both kernels of the banded path (the fused kernel returning the log-sum-exp, with its
    gradient folded into the kernel's backward; the anchored kernel of other devices) give the
    values and the q / k / v gradients of Eq. 4-7 written out (lga_context) to 1e-10 in float64,
    padding included, and torch's gradcheck passes on the fused one."""
    from fairseq_hier.modules import linguistic_attention

    monkeypatch.setattr(linguistic_attention, "fused_lse_supported",
                        lambda q: kernel == "fused_lse")
    torch.manual_seed(3)
    words, heads = random_parse(26, 4)
    words, heads = words.unsqueeze(0).repeat(2, 1), heads.unsqueeze(0).repeat(2, 1)
    s = words.size(1)
    keep = torch.ones(2, s, dtype=torch.bool)
    keep[1, 19:] = False
    words[1, 19:], heads[1, 19:] = -1, -1
    guide = guided(fusion, weight, words, heads)
    assert guide.num_chunks > 3
    q, k, v = (torch.randn(2, 2, s, 3, dtype=torch.float64, requires_grad=True) for _ in range(3))
    up = torch.randn(2, 2, s, 3, dtype=torch.float64)  # an arbitrary upstream gradient
    results = []
    for banded in (True, False):
        ctx = LinguisticGuidedAttention._lga_forward(q, k, v, keep, guide) if banded else \
            lga_context(q, k, v, keep.view(2, 1, 1, s), guide.dense(), fusion, weight)
        results.append([ctx.detach(), *torch.autograd.grad((ctx * up).sum(), (q, k, v))])
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-10)
    if kernel == "fused_lse":
        small = tuple(t[:, :1, :12].detach().clone().requires_grad_() for t in (q, k, v))
        g = guided(fusion, weight, words[:, :12], heads[:, :12])
        assert torch.autograd.gradcheck(
            lambda *x: LinguisticGuidedAttention._lga_forward(*x, keep[:, :12], g), small)


def test_longest_link_sets_the_chunks():
    words, heads = WORDS.unsqueeze(0), HEADS.unsqueeze(0)
    assert longest_link(words, heads, "word") == 3  # piece 5 (word 3) -> piece 2 (its head)
    heads_cut = torch.tensor([[1, 1, -1, 9, 9, 1, -1]])  # head word 9 is not in the row
    assert longest_link(words, heads_cut, "none") == 3
    assert longest_link(torch.full((1, 4), -1), torch.full((1, 4), -1), "word") == 0  # no word
    guide = make_guide(torch.arange(300).unsqueeze(0), torch.full((1, 300), -1), "alpha", 2.0,
                       "word")
    assert (guide.chunk, guide.num_chunks, guide.width) == (64, 5, 64)  # no link: no halo
    guide = make_guide(torch.arange(300).unsqueeze(0), torch.full((1, 300), 5), "alpha", 2.0,
                       "none")  # piece 299 -> word 5: a link of 294 pieces
    assert (guide.chunk, guide.num_chunks, guide.width) == (300, 1, 300)
    heads = torch.arange(300).sub(20).clamp(min=-1).unsqueeze(0)  # each word -> 20 before
    guide = make_guide(torch.arange(300).unsqueeze(0), heads, "alpha", 2.0, "none")
    assert (guide.chunk, guide.num_chunks, guide.width) == (64, 5, 64 + 2 * 24)


# ------------------------------------------------------------------------------ the models
FT_DIMS = dict(encoder_layers=2, decoder_layers=2, encoder_embed_dim=16, decoder_embed_dim=16,
               encoder_ffn_embed_dim=24, decoder_ffn_embed_dim=24, encoder_attention_heads=2,
               decoder_attention_heads=2, dropout=0.0, max_source_positions=64,
               max_target_positions=64)
HT_DIMS = dict(encoder_layers=3, global_layers="2", decoder_layers=2, encoder_embed_dim=16,
               decoder_embed_dim=16, encoder_ffn_embed_dim=24, decoder_ffn_embed_dim=24,
               encoder_attention_heads=2, global_heads=2, decoder_attention_heads=2, dropout=0.0,
               attention_dropout=0.0, activation_dropout=0.0)


def build(arch, **overrides):
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    d = make_dict()
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    args = argparse.Namespace(**(FT_DIMS if arch in ("parsingsum_ft", "transformer_copy")
                                 else HT_DIMS), **overrides)
    ARCH_CONFIG_REGISTRY[arch](args)
    torch.manual_seed(0)
    return ARCH_MODEL_REGISTRY[arch].build_model(args, task).eval(), d


def flat_example(d, words, g):
    """tokens (last = EOS) for a list of word ids per piece (-1 = EOS)."""
    tokens = torch.randint(d.nspecial, len(d) - 1, (len(words),), generator=g)
    tokens[-1] = d.eos()
    return tokens


def flat_batch(d, g):
    words = [torch.tensor([0, 0, 1, 2, 2, 3, -1]), torch.tensor([0, 1, 1, 2, -1])]
    heads = [torch.tensor([1, 1, -1, 1, 1, 1, -1]), torch.tensor([-1, 0, 0, 1, -1])]
    tokens = [flat_example(d, w, g) for w in words]
    pad = lambda xs, v: torch.stack([torch.cat([x, x.new_full((7 - len(x),), v)])  # noqa: E731
                                     for x in xs])
    return pad(tokens, d.pad()), pad(words, -1), pad(heads, -1)


def hier_batch(d, g):
    """2 examples, up to 3 paragraphs x 5 pieces; word ids per example, -1 on padding."""
    src = torch.full((2, 3, 5), d.pad())
    words = torch.full((2, 3, 5), -1)
    heads = torch.full((2, 3, 5), -1)
    layout = {(0, 0): ([0, 0, 1, 2], [1, 1, -1, 1]), (0, 1): ([3, 4, 4, 5, 6], [4, -1, -1, 4, 4]),
              (1, 0): ([0, 1], [-1, 0]), (1, 1): ([2, 3, 3], [3, -1, -1]),
              (1, 2): ([4, 5, 6, 7, 7], [5, -1, 5, 5, 5])}
    for (b, p), (w, h) in layout.items():
        n = len(w)
        src[b, p, :n] = torch.randint(d.nspecial, len(d) - 1, (n,), generator=g)
        words[b, p, :n], heads[b, p, :n] = torch.tensor(w), torch.tensor(h)
    return src, words, heads


@pytest.mark.parametrize("arch,plain,form", [("parsingsum_ft", "transformer_copy", {}),
                                             ("parsingsum_ft", "transformer_copy",
                                              {"ft_form": "post-ln", "copy_projection": "tied"}),
                                             ("parsingsum_ht", "liu_ht", {})])
def test_alpha_zero_is_the_plain_model_on_the_same_weights(arch, plain, form):
    """LGA in either --ft-form of parsingsum_ft: OpenNMT's pre-LN layers (the default) and
    fairseq's post-LN ones (Eq. 8-9)."""
    lga, d = build(arch, lga_alpha=0.0, **form)
    base, _ = build(plain, **form)
    if arch == "parsingsum_ft":
        assert lga.encoder.layers[0].normalize_before is (not form)
        assert (lga.encoder.layer_norm is None) is bool(form)
    base.load_state_dict(lga.state_dict())  # same parameter names: LGA adds none
    g = torch.Generator().manual_seed(2)
    src, words, heads = (flat_batch if arch == "parsingsum_ft" else hier_batch)(d, g)
    prev = prev_tokens(d, 2, 4)
    ours, _ = lga(src, None, prev, src_words=words, src_heads=heads)
    theirs, _ = base(src, None, prev)
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=1e-6)
    # and alpha > 0 changes the output
    lga.encoder.lga.lga_alpha = 2.0
    changed, _ = lga(src, None, prev, src_words=words, src_heads=heads)
    assert (changed - theirs).abs().max() > 1e-3


@pytest.mark.parametrize("arch", ["parsingsum_ft", "parsingsum_ht"])
def test_the_parse_is_required(arch):
    model, d = build(arch)
    g = torch.Generator().manual_seed(6)
    src, words, heads = (flat_batch if arch == "parsingsum_ft" else hier_batch)(d, g)
    with pytest.raises(ValueError, match="pass the task's --dependency-parse NAME"):
        model(src, None, prev_tokens(d, 2, 3))
    with pytest.raises(ValueError, match="do not match the source pieces"):
        model(src, None, prev_tokens(d, 2, 3), src_words=words[:, :-1], src_heads=heads[:, :-1])


def test_papers_settings_and_registry():
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY, MODEL_REGISTRY

    from fairseq_hier.models.parsingsum import ParsingSumFTModel, ParsingSumHTModel

    assert MODEL_REGISTRY["parsingsum_ft"] is ParsingSumFTModel
    assert MODEL_REGISTRY["parsingsum_ht"] is ParsingSumHTModel
    assert ARCH_MODEL_REGISTRY["parsingsum_ft"] is ParsingSumFTModel
    assert ARCH_MODEL_REGISTRY["parsingsum_ht"] is ParsingSumHTModel
    ft = argparse.Namespace()
    ARCH_CONFIG_REGISTRY["parsingsum_ft"](ft)
    assert (ft.encoder_layers, ft.decoder_layers, ft.dropout, ft.lga_alpha) == (4, 4, 0.1, 2.0)
    assert (ft.encoder_embed_dim, ft.encoder_attention_heads, ft.lga_fusion) == (512, 8, "alpha")
    assert (ft.lga_diagonal, ft.copy_attention) == ("none", True)  # Eq. 1; 003's FT copies
    # 003 Sec. 3.2 "we follow FT model settings": FT's OpenNMT form (pre-LN, final LayerNorms)
    assert (ft.ft_form, ft.copy_projection, ft.encoder_normalize_before,
            ft.decoder_normalize_before) == ("opennmt", "own", True, True)
    ht = argparse.Namespace()
    ARCH_CONFIG_REGISTRY["parsingsum_ht"](ht)
    assert (ht.encoder_layers, ht.global_layers, ht.encoder_attention_heads, ht.lga_alpha) == \
        (8, "6,7", 8, 3.0)
    assert ht.lga_diagonal == "none" and not hasattr(ht, "copy_attention")
    model, _ = build("parsingsum_ht")
    kinds = [type(layer).__name__ for layer in model.encoder.layers]
    assert kinds == ["LGAEncoderLayer", "LGAEncoderLayer", "GlobalTransformerLayer"]


def test_attention_dropout_in_training_takes_the_written_out_path():
    """With --attention-dropout > 0 in training, the dropout acts on LGAtt (Eq. 4-7 written out,
    the dense M built once per batch), the same as lga_context under the same RNG state."""
    torch.manual_seed(0)
    attn = LinguisticGuidedAttention(8, 2, dropout=0.3, self_attention=True).train()
    x = torch.randn(7, 1, 8)
    attn.guide = guided("alpha", 2.0, WORDS.unsqueeze(0), HEADS.unsqueeze(0))
    torch.manual_seed(5)
    out, _ = attn(x, x, x, need_weights=False)
    split = lambda t: t.view(7, 1, 2, 4).permute(1, 2, 0, 3)  # noqa: E731
    q, k, v = split(attn.q_proj(x)), split(attn.k_proj(x)), split(attn.v_proj(x))
    torch.manual_seed(5)
    ctx = lga_context(q, k, v, torch.ones(1, 1, 1, 7, dtype=torch.bool), attn.guide.dense(),
                      "alpha", 2.0, 0.3)
    expected = attn.out_proj(ctx.permute(2, 0, 1, 3).reshape(7, 1, 8))
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-6)
    assert attn.guide.dense() is attn.guide.dense()
