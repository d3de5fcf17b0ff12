"""003's FT as OpenNMT builds it (Fabbri et al.'s fork, code/OpenNMT-py-baselines): the whole of
``transformer_copy`` and ``parsingsum_ft`` (default form) against OpenNMT's pre-LN encoder and
decoder layers, LayerNorm and copy generator written out from its code, one head and one
position at a time; and checkpoints of the earlier default form (post-LN, tied projection)
loading and decoding as they were trained.

OpenNMT files (Alex-Fabbri/Multi-News, code/OpenNMT-py-baselines/onmt/): modules/util_class.py
(LayerNorm), modules/multi_headed_attn.py, modules/position_ffn.py, encoders/transformer.py,
decoders/transformer.py, modules/copy_generator.py.
"""

import argparse

import pytest
import torch
from conftest import run_cli, train_args
from test_parsingsum import build, flat_batch, literal_lga
from conftest import random_prev_tokens as prev_tokens

from fairseq_hier.modules.linguistic_attention import dependency_matrix
from fairseq_hier.modules.opennmt_layer_norm import OpenNMTLayerNorm


def onmt_layer_norm(x, norm):
    """util_class.py LayerNorm.forward: ``a_2 * (x - mean) / (std + eps) + b_2``, eps 1e-6,
    torch's default (unbiased) ``std``, one vector at a time."""
    rows = []
    for v in x.reshape(-1, x.size(-1)):
        c = v.numel()
        mean = sum(float(e) for e in v) / c
        std = (sum((float(e) - mean) ** 2 for e in v) / (c - 1)) ** 0.5
        rows.append(norm.weight * (v - mean) / (std + 1e-6) + norm.bias)
    return torch.stack(rows).view_as(x)


def onmt_attention(attn, query, memory, key_padding, causal=False):
    """multi_headed_attn.py: per head, ``softmax(q k^T / sqrt(d))`` over the unmasked keys,
    context, then the final linear; returns (output ``Tq x C``, head 0's weights ``Tq x Tk``,
    OpenNMT's "top_attn"). query ``Tq x C``, memory ``Tk x C`` (one example), key_padding
    ``Tk`` bool."""
    h, d = attn.num_heads, attn.head_dim
    q = attn.q_proj(query).view(-1, h, d) / d ** 0.5
    k, v = attn.k_proj(memory).view(-1, h, d), attn.v_proj(memory).view(-1, h, d)
    heads, top = [], None
    for z in range(h):
        rows, weights = [], []
        for i in range(q.size(0)):
            keys = [j for j in range(k.size(0)) if not key_padding[j] and not (causal and j > i)]
            a = torch.softmax(torch.stack([q[i, z] @ k[j, z] for j in keys]), 0)
            rows.append(sum(a[n] * v[j, z] for n, j in enumerate(keys)))
            full = torch.zeros(k.size(0))
            full[keys] = a
            weights.append(full)
        heads.append(torch.stack(rows))
        top = torch.stack(weights) if z == 0 else top
    return attn.out_proj(torch.cat(heads, -1)), top


def onmt_ffn(layer, x):
    """position_ffn.py: ``w_2(relu(w_1(LN(x)))) + x`` (dropout off)."""
    return layer.fc2(torch.relu(layer.fc1(onmt_layer_norm(x, layer.final_layer_norm)))) + x


def onmt_encoder(model, x, padding, self_attention):
    """encoders/transformer.py: each layer ``out = attn(LN(x)) + x; ffn(out)``, then the
    encoder's LayerNorm. x: ``S x C`` (one example)."""
    for layer in model.encoder.layers:
        normed = onmt_layer_norm(x, layer.self_attn_layer_norm)
        x = onmt_ffn(layer, self_attention(layer.self_attn, normed, padding) + x)
    return onmt_layer_norm(x, model.encoder.layer_norm)


def onmt_decoder(model, y, memory, src_padding):
    """decoders/transformer.py: each layer LN_1, causal self-attention + residual, LN_2, context
    attention + residual, ffn; then the decoder's LayerNorm. The copy attention is the last
    layer's context attention, head 0 (``attns["copy"] = attn``)."""
    for layer in model.decoder.layers:
        normed = onmt_layer_norm(y, layer.self_attn_layer_norm)
        query = onmt_attention(layer.self_attn, normed, normed, torch.zeros(len(y), dtype=bool),
                               causal=True)[0] + y
        mid, top = onmt_attention(layer.encoder_attn,
                                  onmt_layer_norm(query, layer.encoder_attn_layer_norm), memory,
                                  src_padding)
        y = onmt_ffn(layer, mid + query)
    return onmt_layer_norm(y, model.decoder.layer_norm), top


def onmt_copy_generator(model, hidden, attn, src, copyable):
    """copy_generator.py forward: ``prob = softmax(linear(h))``, ``p_copy = sigmoid(linear_copy
    (h))``, ``prob * (1 - p_copy)`` plus ``attn * p_copy`` added at each source word's id (a
    shared vocabulary: the src_map is the identity on ids). Our two deviations, listed in the
    recipe README: the padding logit is not set to -inf, and the attention is renormalised over
    the copyable tokens (fairseq's EOS is not one)."""
    gen = model.decoder
    prob = torch.softmax(gen.output_projection(hidden), -1)  # linear: its own weights and bias
    p_copy = torch.sigmoid(gen.copy_generator.switch(hidden))  # T x 1
    a = attn * copyable
    a = a / a.sum(-1, keepdim=True)
    out = prob * (1 - p_copy)
    for t in range(hidden.size(0)):
        for i, word in enumerate(src.tolist()):
            out[t, word] += p_copy[t, 0] * a[t, i]
    return out


def plain_attention(attn, x, padding):
    return onmt_attention(attn, x, x, padding)[0]


@pytest.mark.parametrize("arch", ["transformer_copy", "parsingsum_ft"])
@torch.no_grad()
def test_default_form_is_opennmts_transformer_written_out(arch):
    model, d = build(arch)
    assert all(isinstance(m, OpenNMTLayerNorm) for m in (
        model.encoder.layer_norm, model.decoder.layer_norm,
        model.encoder.layers[0].final_layer_norm, model.decoder.layers[0].encoder_attn_layer_norm))
    # trained-looking norms and a projection that is not the embeddings
    for name, p in model.named_parameters():
        if "layer_norm" in name:
            p.add_(torch.randn_like(p) * 0.3)
    assert model.decoder.output_projection.weight is not model.decoder.embed_tokens.weight
    g = torch.Generator().manual_seed(4)
    src, words, heads = flat_batch(d, g)
    prev = prev_tokens(d, 2, 5)
    if arch == "parsingsum_ft":
        m = dependency_matrix(words, heads, "none")
        lprobs, _ = model(src, None, prev, src_words=words, src_heads=heads)
    else:
        lprobs, _ = model(src, None, prev)
    enc_x = model.encoder.forward_embedding(src)[0]  # B x S x C
    dec = model.decoder
    dec_x = dec.embed_scale * dec.embed_tokens(prev) + dec.embed_positions(prev)  # B x T x C
    padding = src.eq(d.pad())
    for n in range(2):
        if arch == "parsingsum_ft":  # Eq. 2-7 on LN(x), in OpenNMT's pre-LN layer
            def self_attention(attn, x, pad, n=n):
                return literal_lga(attn, x.unsqueeze(1), pad.unsqueeze(0), m[n:n + 1], "alpha",
                                   2.0)[:, 0]
        else:
            self_attention = plain_attention
        memory = onmt_encoder(model, enc_x[n], padding[n], self_attention)
        hidden, top = onmt_decoder(model, dec_x[n], memory, padding[n])
        copyable = ~torch.isin(src[n], torch.tensor([d.pad(), d.eos(), d.bos()]))
        expected = onmt_copy_generator(model, hidden, top, src[n], copyable)
        torch.testing.assert_close(lprobs[n].exp(), expected, atol=2e-6, rtol=1e-5)


def test_layer_norm_is_opennmts_not_torchs():
    norm = OpenNMTLayerNorm(6)
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2.0, 6))
        norm.bias.copy_(torch.linspace(-1.0, 1.0, 6))
    x = torch.randn(2, 3, 6) * 3
    torch.testing.assert_close(norm(x), onmt_layer_norm(x, norm))
    torch.testing.assert_close(norm(x.half()), onmt_layer_norm(x, norm).half(), atol=2e-3,
                               rtol=2e-3)
    torch_ln = torch.nn.LayerNorm(6)
    torch_ln.load_state_dict(norm.state_dict())  # the same keys, another function
    assert (torch_ln(x) - norm(x)).abs().max() > 1e-2  # sqrt(5/6): std divides by C - 1


def test_earlier_checkpoints_load_as_they_were_trained(data_bin, tmp_path):
    """A checkpoint of the form that was the default before OpenNMT's (post-LN, the projection
    tied to the embeddings), whose saved options lack --ft-form and --copy-projection, loads
    post-LN and tied and gives the outputs of the same checkpoint with those options written;
    a checkpoint of one form built as the other stops with one line naming the option."""
    from fairseq import checkpoint_utils

    run_cli("fairseq-train", *train_args(data_bin, "transformer_copy", tmp_path, 1,
                                         ["--ft-form", "post-ln", "--copy-projection", "tied"]))
    state = torch.load(tmp_path / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert "encoder.layer_norm.weight" not in state["model"]
    args = state["cfg"]["model"]
    assert isinstance(args, argparse.Namespace) and args.encoder_normalize_before is False
    del args.ft_form, args.copy_projection  # as saved before the options existed
    torch.save(state, tmp_path / "earlier.pt")
    # the options written as OpenNMT's form (the post-LN flags gone): built pre-LN
    args.ft_form, args.copy_projection = "opennmt", "own"
    del args.encoder_normalize_before, args.decoder_normalize_before
    torch.save(state, tmp_path / "mismatch.pt")

    def load(name):
        return checkpoint_utils.load_model_ensemble_and_task(
            [str(tmp_path / name)], arg_overrides={"data": str(data_bin)})[0][0].eval()

    written, earlier = load("checkpoint_last.pt"), load("earlier.pt")
    assert earlier.encoder.layer_norm is None and earlier.decoder.layer_norm is None
    assert type(earlier.encoder.layers[0].self_attn_layer_norm) is torch.nn.LayerNorm
    assert earlier.decoder.output_projection.weight is earlier.decoder.embed_tokens.weight
    src = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 11, 2, 1]])
    prev = torch.tensor([[2, 5, 6], [2, 7, 8]])
    with torch.no_grad():
        torch.testing.assert_close(earlier(src, None, prev)[0], written(src, None, prev)[0],
                                   atol=0, rtol=0)
    with pytest.raises(ValueError, match="checkpoint's layers are post-LN .* --ft-form post-ln"):
        load("mismatch.pt")
