"""PHT and VHT: shapes, multi-head pooling, presets and the registry. Masking, batch invariance,
incremental == full decoding and save/load are tests/models/test_contracts.py's, for every
architecture.

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
