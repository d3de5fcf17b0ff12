"""Liu & Lapata's Hierarchical Transformer (``liu_ht``, paper 002): the global layer against a
literal implementation of Eq. 13-24, the split positional embedding, the flat decoder memory, the
graph. Batch invariance (with and without the graph), masking, incremental == full decoding and
save/load are tests/models/test_contracts.py's, for every architecture.

Small but distinct sizes (B=2, P=3, L=5, T=4, C=16, H=4, D=4) so that a wrong transpose fails.
"""

import argparse
import math
import types

import pytest
import torch
import torch.nn.functional as F

import fairseq_hier  # noqa: F401  (registers the models)
from conftest import paragraph_batch as stack
from conftest import paragraph_dict as make_dict
from conftest import random_prev_tokens as prev_tokens
from fairseq_hier.models.liu_ht import (
    GlobalTransformerLayer,
    LiuHTModel,
    flat_memory,
    graph_weights,
)


def build(graph=False, **overrides):
    d = make_dict()
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    kw = dict(encoder_layers=3, global_layers="1,2", decoder_layers=2, encoder_embed_dim=16,
              decoder_embed_dim=16, encoder_ffn_embed_dim=24, decoder_ffn_embed_dim=24,
              encoder_attention_heads=2, global_heads=4, decoder_attention_heads=2,
              graph_attention=graph, graph_head=1)
    kw.update(overrides)
    torch.manual_seed(0)
    model = LiuHTModel.build_model(argparse.Namespace(**kw), task)
    return model.eval(), d


def paragraphs(d, lengths, width, g):
    """One example: lengths of its paragraphs (0 = absent) -> ``P x width`` padded tokens."""
    out = torch.full((len(lengths), width), d.pad())
    for p, n in enumerate(lengths):
        out[p, :n] = torch.randint(d.nspecial, len(d), (n,), generator=g)
    return out


# ----------------------------------------------------------------- the global layer (Eq. 13-24)
def literal_global_layer(layer, examples, graphs=None):
    """Eq. 13-24 written out with loops over examples, paragraphs, heads and tokens.
    examples: per example, a list of ``L_p x C`` token states of its paragraphs."""
    h, d = layer.num_heads, layer.head_dim
    outputs = []
    for b, paras in enumerate(examples):
        heads = []  # per paragraph, per head: Eq. 16
        for x in paras:
            per_head = []
            for z in range(h):
                a = [layer.pool_scores.weight[z] @ x[j] + layer.pool_scores.bias[z]
                     for j in range(x.size(0))]  # Eq. 13
                alpha = torch.softmax(torch.stack(a), 0)  # Eq. 15
                bz = [(layer.pool_values.weight @ x[j] + layer.pool_values.bias)[z * d:(z + 1) * d]
                      for j in range(x.size(0))]  # Eq. 14
                pooled = sum(alpha[j] * bz[j] for j in range(x.size(0)))
                per_head.append(layer.head_norm(pooled @ layer.pool_proj[z]))  # Eq. 16
            heads.append(per_head)
        m = len(paras)
        contexts = []
        for i in range(m):
            ctx = []
            for z in range(h):
                w_q, w_k, w_v = layer.qkv[z].split(d, dim=-1)
                q = heads[i][z] @ w_q  # Eq. 17
                if graphs is not None and z == layer.graph_head:  # Eq. 24
                    row = graphs[b][i, :m].float()
                    if row.sum() == 0:
                        row = F.one_hot(torch.tensor(i), m).float()
                    weights = row / row.sum()
                else:  # Eq. 20
                    scores = torch.stack([q @ (heads[o][z] @ w_k) / math.sqrt(d) for o in range(m)])
                    weights = torch.softmax(scores, 0)
                ctx.append(sum(weights[o] * (heads[o][z] @ w_v) for o in range(m)))  # Eq. 19-20
            c = layer.context_proj(torch.cat(ctx))  # Eq. 21
            x = paras[i]
            g = layer.fc2(torch.relu(layer.fc1(x + c)))  # Eq. 22
            contexts.append(layer.final_norm(g + x))  # Eq. 23
        outputs.append(contexts)
    return outputs


@pytest.mark.parametrize("with_graph", [False, True])
def test_global_layer_equals_literal_equations(with_graph):
    torch.manual_seed(0)
    layer = GlobalTransformerLayer(16, 4, 24, dropout=0.0, activation_dropout=0.0,
                                   graph_head=1 if with_graph else None).eval()
    lengths = [[5, 2, 4], [3, 5]]  # example 1 has P=2 of the batch's 3
    b, p, l = 2, 3, 5
    present = torch.tensor([[True, True, True], [True, True, False]])
    rows = present.view(-1).nonzero().squeeze(1)  # N = 5
    x = torch.randn(l, rows.numel(), 16)
    mask = torch.ones(rows.numel(), l, dtype=torch.bool)
    flat_lengths = [n for ex in lengths for n in ex]
    for r, n in enumerate(flat_lengths):
        mask[r, :n] = False
    graph = torch.tensor([[[1.0, 0.5, 0.0], [0.5, 1.0, 2.0], [0.0, 2.0, 1.0]],
                          [[0.0, 0.0, 9.0], [3.0, 1.0, 9.0], [9.0, 9.0, 9.0]]])  # row 0 of ex 1:
    # no edge to a present paragraph -> attends to itself; the 9s point at the absent paragraph
    out = layer(x, mask, rows, present, graph if with_graph else None)
    examples, r = [], 0
    for ex in lengths:
        examples.append([x[:n, r + k] for k, n in enumerate(ex)])
        r += len(ex)
    expected = literal_global_layer(layer, examples, graph if with_graph else None)
    r = 0
    for ex, exp in zip(lengths, expected):
        for k, n in enumerate(ex):
            torch.testing.assert_close(out[:n, r + k], exp[k], atol=1e-5, rtol=1e-5)
        r += len(ex)


def test_graph_weights_normalise_rows_mask_absent_and_self_loop_isolated():
    graph = torch.tensor([[[0.0, 2.0, 6.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]])
    present = torch.tensor([[True, True, False]])
    w = graph_weights(graph, present)
    expected = torch.tensor([[[0.0, 1.0, 0.0],  # 6.0 points at the absent paragraph: dropped
                              [0.0, 1.0, 0.0],  # isolated: itself
                              [0.5, 0.5, 0.0]]])
    torch.testing.assert_close(w, expected)


def test_split_positional_embedding_token_position_then_rank():
    """Eq. 9-10 in hiersumm's layout: x0 = sqrt(d) w + [e_j ; e_i], sinusoids of d/2 each."""
    model, d = build()
    enc = model.encoder
    tokens = torch.full((2, 3), d.pad())  # the pad embedding is zero: x0 = pe
    x = enc.embed(tokens, torch.tensor([0, 4]))  # ranks 1 and 5

    def sinusoid(pos, dim):  # fairseq's layout: [sin ..., cos ...]
        half = dim // 2
        freq = torch.exp(torch.arange(half) * -(math.log(10000) / (half - 1)))
        return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)])

    for n, rank in ((0, 1), (1, 5)):
        for j in range(3):
            expected = torch.cat([sinusoid(j + 1, 8), sinusoid(rank, 8)])
            torch.testing.assert_close(x[n, j], expected, atol=1e-6, rtol=1e-6)
    no_pp, _ = build(no_paragraph_position=True)
    x = no_pp.encoder.embed(tokens, torch.tensor([0, 4]))
    torch.testing.assert_close(x[1, 2], sinusoid(3, 16), atol=1e-6, rtol=1e-6)  # w/o PP


def test_flat_memory_is_the_concatenation_of_real_tokens():
    l, c = 4, 3
    lengths = [[4, 1], [2], [3, 4, 1]]  # per example (B=3), present paragraphs only
    example = torch.tensor([0, 0, 1, 2, 2, 2])
    x = torch.randn(l, 6, c)
    mask = torch.ones(6, l, dtype=torch.bool)
    for r, n in enumerate(n for ex in lengths for n in ex):
        mask[r, :n] = False
    memory, memory_mask = flat_memory(x, mask, example, 3)
    assert memory.shape == (8, 3, c) and memory_mask.shape == (3, 8)
    r = 0
    for b, ex in enumerate(lengths):
        expected = torch.cat([x[:n, r + k] for k, n in enumerate(ex)])
        r += len(ex)
        assert torch.equal(memory[: len(expected), b], expected)
        assert memory_mask[b].tolist() == [False] * len(expected) + [True] * (8 - len(expected))
        assert (memory[len(expected):, b] == 0).all()


# ------------------------------------------------------------------------ the whole model
def test_graph_changes_the_output_and_is_required():
    model, d = build(graph=True)
    g = torch.Generator().manual_seed(4)
    src = stack(d, [paragraphs(d, [4, 3, 5], 5, g)], 3, 5)
    prev = prev_tokens(d, 1, 4)
    a, _ = model(src, None, prev, paragraph_graph=torch.eye(3).unsqueeze(0))
    b, _ = model(src, None, prev, paragraph_graph=torch.ones(1, 3, 3))
    assert (a - b).abs().max() > 1e-4
    with pytest.raises(ValueError, match="pass the task's --paragraph-graph"):
        model(src, None, prev)


def test_paper_defaults_and_layer_kinds():
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY, MODEL_REGISTRY

    assert MODEL_REGISTRY["liu_ht"] is LiuHTModel and ARCH_MODEL_REGISTRY["liu_ht"] is LiuHTModel
    args = argparse.Namespace()
    ARCH_CONFIG_REGISTRY["liu_ht"](args)
    assert (args.encoder_layers, args.global_layers, args.encoder_embed_dim) == (7, "5,6", 256)
    assert (args.encoder_ffn_embed_dim, args.encoder_attention_heads) == (1024, 8)
    assert (args.dropout, args.attention_dropout, args.decoder_layers) == (0.1, 0.1, 6)
    d = make_dict()
    model = LiuHTModel.build_model(args, types.SimpleNamespace(source_dictionary=d,
                                                               target_dictionary=d))
    kinds = [type(layer).__name__ for layer in model.encoder.layers]
    assert kinds == ["TransformerEncoderLayerBase"] * 5 + ["GlobalTransformerLayer"] * 2
    assert model.encoder.embed_tokens is model.decoder.embed_tokens  # shared, tied output
    assert len(model.decoder.layers) == 6


@pytest.mark.parametrize("flags,message", [
    (dict(global_layers="1,7"), r"--global-layers 1,7: indices \[7\] are outside 0..2"),
    (dict(global_layers="a"), "--global-layers must be comma-separated layer indices"),
    (dict(graph_attention=True, graph_head=4), r"--graph-head 4 must be in 0..3"),
])
def test_bad_options_are_named(flags, message):
    with pytest.raises(ValueError, match=message):
        build(**flags)
