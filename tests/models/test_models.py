"""Properties of PHT and VHT: masking, batch invariance, incremental == full decoding, shapes.

Small but distinct sizes (B=2, P=3, L=5, T=4, C=16) so that a wrong transpose fails.
"""

import argparse
import types

import pytest
import torch

import fairseq_hier  # noqa: F401  (registers the models)
from fairseq_hier.models.hierarchical_transformer import PHTModel, VHTModel
from fairseq_hier.modules.multihead_pooling import MultiHeadPooling
from conftest import paragraph_batch as batch
from conftest import paragraph_dict as make_dict
from conftest import random_prev_tokens as prev_tokens

MODELS = {"pht": PHTModel, "vht": VHTModel}


def build(arch, layers=2, dim=16, heads=4):
    d = make_dict()
    task = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
    args = argparse.Namespace(encoder_layers=layers, decoder_layers=layers, encoder_embed_dim=dim,
                              decoder_embed_dim=dim, encoder_ffn_embed_dim=2 * dim,
                              decoder_ffn_embed_dim=2 * dim, encoder_attention_heads=heads,
                              decoder_attention_heads=heads, pooling_heads=heads)
    torch.manual_seed(0)
    model = MODELS[arch].build_model(args, task)
    model.eval()
    return model, d


def random_paragraphs(d, lengths, max_len=None, generator=None):
    """lengths: list of paragraph lengths (0 = absent) -> P x L tensor padded with pad."""
    max_len = max_len or max(lengths)
    out = torch.full((len(lengths), max_len), d.pad())
    for p, n in enumerate(lengths):
        out[p, :n] = torch.randint(d.nspecial, len(d), (n,), generator=generator)
    return out


@pytest.fixture(params=["pht", "vht"])
def arch(request):
    return request.param


def test_shapes_and_attention_distribution(arch):
    model, d = build(arch)
    g = torch.Generator().manual_seed(0)
    src = batch(d, [random_paragraphs(d, [5, 3, 4], generator=g),
                    random_paragraphs(d, [2, 5, 0], generator=g)])  # B=2, P=3, L=5
    logits, extra = model(src, None, prev_tokens(d, 2, 4))
    assert logits.shape == (2, 4, len(d))
    attn = extra["attn"][0]
    assert attn.shape == (2, 4, 3)  # B x T x P
    torch.testing.assert_close(attn.sum(-1), torch.ones(2, 4))
    assert (attn[1, :, 2] == 0).all(), "absent paragraph must get exactly zero weight"
    assert (attn[0] > 0).all()


def test_padding_and_absent_paragraphs_do_not_leak(arch):
    """Changing what sits under padded tokens / absent paragraphs in the encoder output leaves
    every decoder output bit-for-bit unchanged (zero attention weight, not just small)."""
    model, d = build(arch)
    g = torch.Generator().manual_seed(0)
    src = batch(d, [random_paragraphs(d, [5, 2, 0], generator=g)], num_p=3, num_l=5)
    prev = prev_tokens(d, 1, 4)
    enc = model.encoder(src)
    clean, clean_extra = model.decoder(prev, enc)
    pad_mask = enc["encoder_padding_mask"][0]  # B x P x L
    noisy = dict(enc)
    words = enc["encoder_out"][0].clone()  # L x B x P x C
    words[pad_mask.permute(2, 0, 1)] = 1e4 * torch.randn(int(pad_mask.sum()), words.size(-1))
    noisy["encoder_out"] = [words]
    if enc["paragraph_out"]:
        para = enc["paragraph_out"][0].clone()  # P x B x C
        para[2] = 1e4
        noisy["paragraph_out"] = [para]
    out, extra = model.decoder(prev, noisy)
    assert torch.equal(out, clean)
    assert torch.equal(extra["attn"][0], clean_extra["attn"][0])


def test_batch_invariance(arch):
    """An example decodes the same alone as next to a longer example (more, longer paragraphs)."""
    model, d = build(arch)
    g = torch.Generator().manual_seed(3)
    short = random_paragraphs(d, [3, 2], generator=g)
    long = random_paragraphs(d, [7, 7, 6, 5], generator=g)
    prev = prev_tokens(d, 2, 5)
    alone, alone_extra = model(batch(d, [short]), None, prev[:1])
    together, together_extra = model(batch(d, [short, long]), None, prev)
    torch.testing.assert_close(together[0], alone[0], atol=1e-5, rtol=1e-5)
    attn = together_extra["attn"][0][0]  # T x P (P = 4 in the batch)
    torch.testing.assert_close(attn[:, :2], alone_extra["attn"][0][0], atol=1e-5, rtol=1e-5)
    assert (attn[:, 2:] == 0).all()


def test_incremental_equals_full_with_beam_reorder(arch):
    """Step-by-step decoding with the cache (and a beam reorder that also shrinks the batch, as
    fairseq does when sentences finish) matches the full forward to 1e-5."""
    model, d = build(arch)
    g = torch.Generator().manual_seed(5)
    src = batch(d, [random_paragraphs(d, [4, 2, 3], generator=g),
                    random_paragraphs(d, [5, 1, 0], generator=g),
                    random_paragraphs(d, [2, 3, 1], generator=g)])
    prev = prev_tokens(d, 3, 6)
    enc = model.encoder(src)
    state = {}
    steps_logits, steps_attn = [], []
    order = torch.arange(3)
    for t in range(6):
        if t == 3:  # reorder: drop example 1, swap the others
            new_order = torch.tensor([2, 0])
            model.decoder.reorder_incremental_state_scripting(state, new_order)
            enc = model.encoder.reorder_encoder_out(enc, new_order)
            order = order[new_order]
        logits, extra = model.decoder(prev[order, : t + 1], enc, incremental_state=state)
        steps_logits.append(logits[:, -1])
        steps_attn.append(extra["attn"][0][:, -1])
    full, full_extra = model(src[order], None, prev[order])
    torch.testing.assert_close(torch.stack(steps_logits[3:], 1), full[:, 3:], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(torch.stack(steps_attn[3:], 1), full_extra["attn"][0][:, 3:],
                               atol=1e-5, rtol=1e-5)
    full_all, _ = model(src, None, prev)
    torch.testing.assert_close(torch.stack(steps_logits[:3], 1), full_all[:, :3], atol=1e-5,
                               rtol=1e-5)


def test_multihead_pooling_ignores_padding_and_uses_per_head_queries():
    torch.manual_seed(0)
    pool = MultiHeadPooling(embed_dim=8, num_heads=2, ffn_dim=16, dropout=0.0).eval()
    x = torch.randn(5, 3, 8)  # L=5, N=3, C=8
    mask = torch.tensor([[False] * 5, [False, False, True, True, True], [False] + [True] * 4])
    out = pool(x, mask)
    assert out.shape == (3, 8)
    x2 = x.clone()
    x2[mask.t()] = 1e3
    assert torch.equal(pool(x2, mask), out)
    # a one-token paragraph pools to exactly that token (weights = 1)
    single = pool.w3(pool.w1(x[0, 2]))
    ffn = pool.fc2(torch.relu(pool.fc1(single)))
    torch.testing.assert_close(out[2], pool.layer_norm(single + ffn))


def test_presets_and_paper_defaults():
    from fairseq.models import ARCH_CONFIG_REGISTRY

    for name, layers in (("pht", 3), ("vht", 3), ("pht_1layer", 1), ("vht_1layer", 1)):
        args = argparse.Namespace()
        ARCH_CONFIG_REGISTRY[name](args)
        assert (args.encoder_layers, args.decoder_layers) == (layers, layers)
        assert (args.encoder_embed_dim, args.encoder_ffn_embed_dim) == (256, 1024)
        assert (args.decoder_attention_heads, args.dropout) == (4, 0.3)
        assert args.untie_embeddings is False


def test_registered_names_map_to_our_classes():
    from fairseq.models import ARCH_MODEL_REGISTRY, MODEL_REGISTRY
    from fairseq.tasks import TASK_REGISTRY

    from fairseq_hier.tasks.hierarchical_summarization import HierarchicalSummarizationTask

    assert MODEL_REGISTRY["pht"] is PHTModel and MODEL_REGISTRY["vht"] is VHTModel
    for arch, cls in (("pht", PHTModel), ("pht_1layer", PHTModel), ("vht", VHTModel),
                      ("vht_1layer", VHTModel)):
        assert ARCH_MODEL_REGISTRY[arch] is cls
    assert TASK_REGISTRY["hierarchical_summarization"] is HierarchicalSummarizationTask

    from fairseq_hier.models.hat import HATModel, HATTransformerModel, LongBARTModel

    assert (MODEL_REGISTRY["hat"], MODEL_REGISTRY["long_bart"], MODEL_REGISTRY["hat_transformer"]) \
        == (HATModel, LongBARTModel, HATTransformerModel)
    for arch, cls in (("hat_bart_large", HATModel), ("hat_bart_base", HATModel),
                      ("long_bart_large", LongBARTModel), ("long_bart_base", LongBARTModel),
                      ("hat_transformer_wmt_en_de", HATTransformerModel),
                      ("hat_transformer_iwslt_zh_en", HATTransformerModel)):
        assert ARCH_MODEL_REGISTRY[arch] is cls
    from fairseq_hier.tasks.hat_summarization import HATSummarizationTask

    assert TASK_REGISTRY["hat_summarization"] is HATSummarizationTask


def test_shared_embeddings_by_default_and_parameter_count():
    model, d = build("pht")
    assert model.encoder.token_encoder.embed_tokens is model.decoder.embed_tokens
    assert model.decoder.output_projection is None
