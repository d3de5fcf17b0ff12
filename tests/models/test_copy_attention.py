"""Copy attention (OpenNMT's -copy_attn) of ``transformer_copy`` and ``parsingsum_ft``: the mixture
against a per-position loop, normalisation, the head it reads, the defaults (OpenNMT's pre-LN
form and the copy generator's own projection; the whole model against OpenNMT's code written
out is in test_opennmt_ft.py), and a training step through the real fairseq-train CLI."""

import argparse

import pytest
import torch
from conftest import USER_DIR, build_model, make_dict, random_prev_tokens, run_cli, train_args
from tiny_models import FLAT, one_thread  # noqa: F401

from fairseq_hier.modules.copy_attention import TINY, CopyGenerator, copy_mixture

PAD, EOS, BOS = 1, 2, 0


@torch.no_grad()
def literal_mixture(logits, p_copy, attn, src_tokens, specials=(PAD, EOS, BOS)):
    """p(w) = (1 - p_copy) softmax(logits)_w + p_copy sum_{i: src_i = w} a_i / sum_{copyable} a_i,
    one (example, step, word) at a time."""
    b, t, v = logits.shape
    out = torch.zeros(b, t, v, dtype=torch.float64)
    for n in range(b):
        copyable = [i for i in range(src_tokens.size(1)) if int(src_tokens[n, i]) not in specials]
        for s in range(t):
            z = sum(float(attn[n, s, i]) for i in copyable)
            vocab = torch.softmax(logits[n, s].double(), 0)
            pc = float(p_copy[n, s, 0]) if z > 0 else 0.0
            for w in range(v):
                copied = sum(float(attn[n, s, i]) for i in copyable if int(src_tokens[n, i]) == w)
                out[n, s, w] = (1 - pc) * float(vocab[w]) + pc * (copied / z if z > 0 else 0.0)
    return out


def test_mixture_equals_the_literal_loop():
    g = torch.Generator().manual_seed(0)
    b, t, s, v = 2, 3, 6, 11
    logits = torch.randn(b, t, v, generator=g)
    p_copy = torch.rand(b, t, 1, generator=g)
    # repeated words (5 twice), EOS and padding in the source
    src = torch.tensor([[5, 7, 5, 9, 4, EOS], [8, 6, 10, EOS, PAD, PAD]])
    scores = torch.randn(b, t, s, generator=g).masked_fill(src.eq(PAD).unsqueeze(1), float("-inf"))
    attn = torch.softmax(scores, -1)
    copyable = ~torch.isin(src, torch.tensor([PAD, EOS, BOS]))
    probs = copy_mixture(logits, p_copy, attn, src, copyable)
    expected = literal_mixture(logits, p_copy, attn, src)
    torch.testing.assert_close(probs.double(), expected, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(probs.sum(-1), torch.ones(b, t))
    # nothing copyable in a row: generation only; p_copy = 0 gives the plain softmax
    only_eos = torch.tensor([[EOS, PAD, PAD, PAD, PAD, PAD]] * 2)
    torch.testing.assert_close(copy_mixture(logits, p_copy, attn, only_eos,
                                            only_eos.ne(EOS) & only_eos.ne(PAD)),
                               torch.softmax(logits, -1))
    torch.testing.assert_close(copy_mixture(logits, torch.zeros(b, t, 1), attn, src, copyable),
                               torch.softmax(logits, -1))
    with pytest.raises(ValueError, match=r"expected attn \(2, 3, 6\)"):
        copy_mixture(logits, p_copy, attn[:, :, :4], src, copyable)


def test_generator_is_in_float32_and_floored():
    torch.manual_seed(0)
    gen = CopyGenerator(8, (PAD, EOS, BOS))
    logits = torch.randn(1, 2, 9).half()
    logits[0, 0, 3] = -1e4  # underflows in the softmax
    attn = torch.softmax(torch.randn(1, 2, 4), -1).half()
    out = gen(logits, torch.randn(1, 2, 8), attn, torch.tensor([[5, 6, 7, EOS]]))
    assert out.dtype == torch.float32 and torch.isfinite(out).all()
    assert out[0, 0, 3] == torch.log(torch.tensor(TINY))


def tiny(arch, **kw):
    d = make_dict(24)
    torch.manual_seed(0)
    return build_model(arch, d, **dict(FLAT, **kw)).eval(), d


def flat_source(d, g):
    src = torch.randint(d.nspecial, len(d), (2, 7), generator=g)
    src[:, -1] = d.eos()
    src[1, 5:] = d.pad()
    src[1, 4] = d.eos()
    return src


def test_output_is_the_mixture_over_head_zero_of_the_last_layer():
    model, d = tiny("transformer_copy")
    g = torch.Generator().manual_seed(1)
    src, prev = flat_source(d, g), random_prev_tokens(d, 2, 5)
    lprobs, extra = model(src, None, prev)
    torch.testing.assert_close(lprobs.exp().sum(-1), torch.ones(2, 5))
    assert lprobs.dtype == torch.float32
    assert torch.equal(model.get_normalized_probs((lprobs, extra), log_probs=True),
                       torch.log_softmax(lprobs, -1))
    # the decoder's own pieces: features, logits and fairseq's alignment of the first head
    enc = model.encoder(src, src_lengths=None)
    assert torch.equal(enc["src_tokens"][0], src)
    x, plain = model.decoder.extract_features(prev, enc, alignment_heads=1)
    gen = model.decoder.copy_generator
    expected = literal_mixture(model.decoder.output_layer(x), torch.sigmoid(gen.switch(x)),
                               plain["attn"][0], src)
    torch.testing.assert_close(lprobs.exp().double(), expected, atol=1e-6, rtol=1e-5)
    # head 0, not fairseq's head average
    _, averaged = model.decoder.extract_features(prev, enc)
    assert (averaged["attn"][0] - extra["attn"][0]).abs().max() > 1e-4
    torch.testing.assert_close(extra["attn"][0], plain["attn"][0])


def test_defaults_flags_and_registry():
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY, MODEL_REGISTRY
    from fairseq.models.transformer import TransformerModel

    from fairseq_hier.models.parsingsum import ParsingSumFTModel
    from fairseq_hier.models.transformer_copy import TransformerCopyModel

    assert MODEL_REGISTRY["transformer_copy"] is TransformerCopyModel
    assert ARCH_MODEL_REGISTRY["transformer_copy"] is TransformerCopyModel
    assert MODEL_REGISTRY["transformer"] is TransformerModel  # fairseq's name stays fairseq's
    for arch in ("transformer_copy", "parsingsum_ft"):
        args = argparse.Namespace()
        ARCH_CONFIG_REGISTRY[arch](args)
        assert args.copy_attention is True
        # Fabbri's run_train_transformer.sh: -layers 4 -rnn_size 512 -share_embeddings, OpenNMT's
        # 8 heads and FFN 2048; 003's dropout 0.1, which OpenNMT also applies to the attention
        # weights and inside the FFN; OpenNMT's Transformer is pre-LN with final LayerNorms
        assert (args.encoder_layers, args.decoder_layers, args.encoder_embed_dim,
                args.encoder_attention_heads, args.encoder_ffn_embed_dim, args.dropout,
                args.attention_dropout, args.activation_dropout, args.share_all_embeddings) == \
            (4, 4, 512, 8, 2048, 0.1, 0.1, 0.1, True)
        assert (args.ft_form, args.copy_projection) == ("opennmt", "own")
        assert args.encoder_normalize_before is True and args.decoder_normalize_before is True
        # today's fairseq form stays an option: post-LN, no attention / ReLU dropout
        old = argparse.Namespace(ft_form="post-ln", copy_projection="tied")
        ARCH_CONFIG_REGISTRY[arch](old)
        assert (old.encoder_normalize_before, old.decoder_normalize_before,
                old.attention_dropout, old.activation_dropout) == (False, False, 0.0, 0.0)
    for cls in (TransformerCopyModel, ParsingSumFTModel):
        parser = argparse.ArgumentParser()
        cls.add_args(parser)
        parsed = parser.parse_args([])
        # the architecture fills them
        assert (parsed.copy_attention, parsed.ft_form, parsed.copy_projection) == (None,) * 3
        assert parser.parse_args(["--copy-attention"]).copy_attention is True
        assert parser.parse_args(["--no-copy-attention"]).copy_attention is False
        assert parser.parse_args(["--ft-form", "post-ln"]).ft_form == "post-ln"
        assert parser.parse_args(["--copy-projection", "tied"]).copy_projection == "tied"
    assert tiny("parsingsum_ft")[0].decoder.copy_generator is not None


def test_no_copy_attention_is_fairseqs_transformer_on_the_same_weights():
    """--ft-form post-ln --copy-projection tied (the form before OpenNMT's became the default)
    without copy is fairseq's transformer; with copy it adds the switch only."""
    old_form = dict(ft_form="post-ln", copy_projection="tied")
    plain_copy, d = tiny("transformer_copy", copy_attention=False, **old_form)
    assert plain_copy.decoder.copy_generator is None
    base, _ = tiny("transformer", share_all_embeddings=True, encoder_layers=2, decoder_layers=2)
    base.load_state_dict(plain_copy.state_dict())
    g = torch.Generator().manual_seed(2)
    src, prev = flat_source(d, g), random_prev_tokens(d, 2, 4)
    torch.testing.assert_close(plain_copy(src, None, prev)[0], base(src, None, prev)[0])
    copying, _ = tiny("transformer_copy", **old_form)
    assert set(copying.state_dict()) - set(base.state_dict()) == {
        "decoder.copy_generator.switch.weight", "decoder.copy_generator.switch.bias"}
    # the default (OpenNMT's form) adds the final LayerNorms and the projection's bias
    assert set(tiny("transformer_copy")[0].state_dict()) - set(base.state_dict()) == {
        "decoder.copy_generator.switch.weight", "decoder.copy_generator.switch.bias",
        "encoder.layer_norm.weight", "encoder.layer_norm.bias", "decoder.layer_norm.weight",
        "decoder.layer_norm.bias", "decoder.output_projection.bias"}
    # weights saved without the copy switch (a checkpoint older than the option) load as the
    # plain model they were trained as
    copying.load_state_dict(plain_copy.state_dict())
    assert copying.decoder.copy_generator is None
    torch.testing.assert_close(copying(src, None, prev)[0], base(src, None, prev)[0])


def test_training_step_through_fairseq_train(data_bin, tmp_path):
    """fairseq-train with label_smoothed_cross_entropy (the recipe's criterion) on the copy
    mixture: finite losses; --no-copy-attention trains the plain model."""
    common = ["--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1"]
    out = run_cli("fairseq-train", *train_args(data_bin, "transformer_copy", tmp_path / "ck", 3,
                                               common))
    losses = [float(line.split("loss=")[1].split(",")[0].split()[0])
              for line in out.stdout.splitlines() if "| train_inner |" in line or
              ("train_inner" in line and "loss=" in line)]
    assert losses and all(0 < x < 100 for x in losses), out.stdout[-2000:]
    state = torch.load(tmp_path / "ck" / "checkpoint_last.pt", map_location="cpu",
                       weights_only=False)
    assert "decoder.copy_generator.switch.weight" in state["model"]
    run_cli("fairseq-train", *train_args(data_bin, "transformer_copy", tmp_path / "plain", 1,
                                         [*common, "--no-copy-attention"]))
    plain = torch.load(tmp_path / "plain" / "checkpoint_last.pt", map_location="cpu",
                       weights_only=False)
    assert not any("copy_generator" in k for k in plain["model"])
    # the checkpoint decodes through fairseq-generate (the copy mixture as the output) with
    # 003's FT decoding (Wu's length penalty, stepwise summary coverage): the task's options
    # choose our generator
    ft = run_cli("fairseq-generate", data_bin, "--user-dir", USER_DIR, "--task",
                 "hierarchical_summarization", "--path", tmp_path / "ck" / "checkpoint_last.pt",
                 "--gen-subset", "test", "--beam", "2", "--max-len-b", "6", "--batch-size", "4",
                 "--num-workers", "0", "--length-penalty-form", "wu", "--lenpen", "0.9",
                 "--coverage-penalty", "summary", "--coverage-beta", "5")
    assert "decoding penalties: length penalty wu, coverage beta 5.0" in ft.stdout
    assert sum(line.startswith("H-") for line in ft.stdout.splitlines()) == 8
    bad = run_cli("fairseq-generate", data_bin, "--user-dir", USER_DIR, "--task",
                  "hierarchical_summarization", "--path", tmp_path / "ck" / "checkpoint_last.pt",
                  "--gen-subset", "test", "--coverage-penalty", "summary", "--coverage-beta",
                  "-1", "--num-workers", "0", check=False)
    assert bad.returncode != 0 and "--coverage-beta" in bad.stdout
