"""HAT's options and their defaults (paper 004): ``--position-init`` (Sec. 4.1: the added
positions start at random), ``--hierarchical-layers`` (Sec. 3.2: one), and the sentence context
reaching decoder layers that fairseq wraps (FSDP under ``--ddp-backend fully_sharded``, with
``--checkpoint-activations``)."""

import argparse
from unittest import mock

import pytest
import torch
import torch.nn as nn
from fairseq.models import ARCH_MODEL_REGISTRY
from fairseq.modules.checkpoint_activations import checkpoint_wrapper

import fairseq_hier
from conftest import TINY_HAT, bos_source, build_model, left_pad, make_dict
from fairseq_hier.models import hat
from fairseq_hier.recipes.architectures import archs_with

fairseq_hier.register()

D = make_dict(30)
HAT_ARCHS = archs_with(task="hat_summarization")  # the BART presets (HAT's and the plain long)


def preset(arch, **kw):
    args = argparse.Namespace(**kw)
    from fairseq.models import ARCH_CONFIG_REGISTRY

    ARCH_CONFIG_REGISTRY[arch](args)
    return args


# ------------------------------------------------------------------------ defaults pinned
@pytest.mark.parametrize("arch", HAT_ARCHS)
def test_bart_presets_default_to_random_positions(arch):
    assert hat.POSITION_INIT == "random"
    assert preset(arch).position_init == "random"
    assert preset(arch, position_init="tile").position_init == "tile"


@pytest.mark.parametrize("arch", ["hat_bart_base", "hat_bart_large", "hat_transformer_wmt_en_de",
                                  "hat_transformer_iwslt_zh_en"])
def test_hat_presets_default_to_one_hierarchical_layer(arch):
    assert hat.HIERARCHICAL_LAYERS == 1
    assert preset(arch).hierarchical_layers == 1


@pytest.mark.parametrize("arch,flag", [("hat_bart_base", "--position-init"),
                                       ("long_bart_base", "--position-init"),
                                       ("hat_bart_base", "--hierarchical-layers"),
                                       ("hat_transformer_wmt_en_de", "--hierarchical-layers")])
def test_the_options_are_on_the_command_line_with_help(arch, flag):
    parser = argparse.ArgumentParser()
    ARCH_MODEL_REGISTRY[arch].add_args(parser)
    action = next(a for a in parser._actions if flag in a.option_strings)
    assert action.help and "004" in action.help and "Default" in action.help
    assert action.default is None  # the preset states the default
    if flag == "--position-init":
        assert action.choices == ("random", "tile")
        with pytest.raises(SystemExit):
            parser.parse_args([flag, "zeros"])


# ------------------------------------------------------------------ --position-init on load
SHORT = dict(TINY_HAT, encoder_embed_dim=64, decoder_embed_dim=64, max_source_positions=32,
             max_target_positions=32)


def bart_state():
    """A fairseq ``bart_base`` at tiny dims, 32 positions (34-row tables), as a state dict."""
    torch.manual_seed(1)
    return build_model("bart_base", D, **SHORT).state_dict()


def load(arch, state, **kw):
    """(fresh state, loaded state) of ``arch`` with 512 source positions (514 rows)."""
    torch.manual_seed(2)
    model = build_model(arch, D, **dict(SHORT, max_source_positions=512, **kw))
    fresh = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(dict(state), strict=True)
    return fresh, model.state_dict()


@pytest.mark.parametrize("arch", ["hat_bart_base", "long_bart_base"])
def test_random_positions_are_a_fresh_table_and_tile_repeats_barts(arch, caplog):
    bart = bart_state()
    key = "encoder.embed_positions.weight"
    old = bart[key]  # 34 x 64
    with caplog.at_level("INFO"):
        fresh, loaded = load(arch, bart)  # the default: random
    table = loaded[key]
    assert table.shape == (514, 64)
    torch.testing.assert_close(table[:34], old, atol=0, rtol=0)  # BART's rows, both modes
    added = table[34:]  # 480 x 64
    # fairseq's init of a new learned table in BART (init_bert_params): the model's own rows
    torch.testing.assert_close(added, fresh[key][34:], atol=0, rtol=0)
    # normal(0, 0.02): 30720 draws, the standard error of the std is 0.02 / sqrt(2 * 30720)
    assert abs(added.mean().item()) < 0.001 and abs(added.std().item() - 0.02) < 0.0005
    # no added row is a copy of one of BART's rows
    assert torch.cdist(added, old).min().item() > 0.1
    assert "extended (random): ['encoder.embed_positions.weight 34 -> 514 rows'" in caplog.text

    _, tiled = load(arch, bart, position_init="tile")
    table = tiled[key]
    torch.testing.assert_close(table[:34], old, atol=0, rtol=0)
    expected = torch.cat([old[:2], old[2:].repeat(16, 1)[:512]])  # rows 2..33 again and again
    torch.testing.assert_close(table, expected, atol=0, rtol=0)
    for i in range(2, 514):  # the literal rule: position p (from row 2) is BART's p mod 32
        assert torch.equal(table[i], old[2 + (i - 2) % 32])
    # the decoder's table keeps its 34 rows: nothing to extend
    assert tiled["decoder.embed_positions.weight"].shape == (34, 64)


# ---------------------------------------------------------------- --hierarchical-layers N
def n_params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("arch", ["hat_bart_base", "hat_transformer_iwslt_zh_en"])
def test_two_hierarchical_layers_add_exactly_one_layer(arch):
    torch.manual_seed(0)
    one = build_model(arch, D, **TINY_HAT)
    two = build_model(arch, D, **TINY_HAT, hierarchical_layers=2)
    assert len(one.encoder.hierarchical_layers) == 1
    assert len(two.encoder.hierarchical_layers) == 2
    layer = n_params(one.encoder.hierarchical_layers[0])
    c, ffn = 16, 32
    assert layer == 4 * (c * c + c) + 2 * c + (c * ffn + ffn + ffn * c + c) + 2 * c
    assert n_params(two) - n_params(one) == layer
    src = left_pad([bos_source(3, 4, 2), bos_source(5)])
    prev = torch.tensor([[2, 11, 12, 13], [2, 14, 15, 16]])
    calls = []
    for i, lay in enumerate(two.encoder.hierarchical_layers):
        lay.register_forward_hook(lambda *_, i=i: calls.append(i))
    two.eval()
    with torch.no_grad():
        out, extra = two(src, src.ne(1).sum(1), prev)
        encoded = two.encoder(src, src.ne(1).sum(1))
    assert calls == [0, 1, 0, 1]  # both layers, in order, once per encoder pass
    assert out.shape == (2, 4, len(D)) and torch.isfinite(out).all()
    # the stack: layer 1 reads layer 0's output (N x B x C)
    positions, mask = hat.sentence_positions(src, D.bos())
    tokens = encoded["encoder_out"][0].transpose(0, 1)  # B x S x C
    x = tokens.gather(1, positions.unsqueeze(-1).expand(-1, -1, c)).transpose(0, 1)
    for lay in two.encoder.hierarchical_layers:
        x = lay(x, mask)
    torch.testing.assert_close(encoded["sentence_out"][0], x, atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="--hierarchical-layers must be 1 or more, got 0"):
        build_model(arch, D, **TINY_HAT, hierarchical_layers=0)


def test_a_one_layer_checkpoint_with_the_single_layer_keys_loads():
    torch.manual_seed(0)
    model = build_model("hat_transformer_iwslt_zh_en", D, **TINY_HAT)
    state = {k.replace("encoder.hierarchical_layers.0.", "encoder.hierarchical_layer."): v + 1
             for k, v in model.state_dict().items()}
    model.upgrade_state_dict(state)
    model.load_state_dict(state, strict=True)
    weight = model.encoder.hierarchical_layers[0].fc1.weight
    torch.testing.assert_close(weight, state["encoder.hierarchical_layers.0.fc1.weight"])


# ------------------------------------------------ the sentence context through wrapped layers
class HoldingWrapper(nn.Module):
    """What FSDP (fairscale's FullyShardedDataParallel, not installed here) does to a layer: holds
    it as a submodule, forwards calls to it, reads missing attributes through to it, and keeps
    attributes set on itself."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)


SRC = left_pad([bos_source(3, 4, 2), bos_source(5)])
PREV = torch.tensor([[2, 11, 12, 13], [2, 14, 15, 16]])


def decode(model):
    """Decoder output ``B x T x V`` and the number of sentence-attention calls."""
    calls = []
    hooks = [layer.sentence_attn.register_forward_hook(lambda *_: calls.append(1))
             for layer in model.decoder.sentence_layers()]
    out, extra = model(SRC, SRC.ne(1).sum(1), PREV)
    for h in hooks:
        h.remove()
    return out, extra, len(calls)


@pytest.mark.parametrize("arch", ["hat_bart_base", "hat_transformer_iwslt_zh_en"])
def test_wrapped_decoder_layers_run_the_sentence_attention(arch):
    torch.manual_seed(0)
    model = build_model(arch, D, **TINY_HAT).eval()
    with torch.no_grad():
        plain, plain_extra, plain_calls = decode(model)
        layers = model.decoder.sentence_layers()
        saved = [layer.sentence_attn.out_proj.weight.clone() for layer in layers]
        for layer in layers:
            layer.sentence_attn.out_proj.weight.zero_()
        without, _, _ = decode(model)
        for layer, w in zip(layers, saved):
            layer.sentence_attn.out_proj.weight.copy_(w)
        assert plain_calls == 2 and (plain - without).abs().max() > 1e-3  # it matters
        # fairseq's --checkpoint-activations wrapper (in place), then a holding wrapper (FSDP)
        for i, layer in enumerate(model.decoder.layers):
            model.decoder.layers[i] = HoldingWrapper(checkpoint_wrapper(layer))
        assert model.decoder.sentence_layers() == layers
        wrapped, extra, calls = decode(model)
    assert calls == 2
    torch.testing.assert_close(wrapped, plain, atol=0, rtol=0)
    torch.testing.assert_close(extra["sentence_attn"][0], plain_extra["sentence_attn"][0],
                               atol=0, rtol=0)
    assert all(layer._sentence_context is None for layer in layers)  # cleared afterwards


def test_fully_sharded_with_checkpoint_activations_trains_through_the_sentence_attention():
    """The decoder as ``build_decoder_layer`` builds it under ``--ddp-backend fully_sharded
    --checkpoint-activations`` (each layer's ``layer_forward`` checkpointed, then wrapped by
    ``fsdp_wrap``, here the holding wrapper): loss and gradients equal those of the plain model,
    and the sentence attention runs in the forward and in the recomputation."""
    def run(wrap):
        torch.manual_seed(0)
        if wrap:
            with mock.patch.object(hat, "fsdp_wrap", lambda m, **_: HoldingWrapper(m)):
                model = build_model("hat_bart_base", D, **TINY_HAT, checkpoint_activations=True)
            assert all(isinstance(layer, HoldingWrapper) for layer in model.decoder.layers)
        else:
            model = build_model("hat_bart_base", D, **TINY_HAT)
        out, _, calls = decode(model)
        loss = out.log_softmax(-1).mean()
        calls_before = calls
        counted = []
        hooks = [layer.sentence_attn.register_forward_hook(lambda *_: counted.append(1))
                 for layer in model.decoder.sentence_layers()]
        loss.backward()
        for h in hooks:
            h.remove()
        grads = {n.replace(".module.", "."): p.grad for n, p in model.named_parameters()}
        return loss.detach(), grads, calls_before, len(counted)

    loss, grads, calls, recomputed = run(False)
    w_loss, w_grads, w_calls, w_recomputed = run(True)
    assert (calls, recomputed) == (2, 0)
    assert (w_calls, w_recomputed) == (2, 2)  # forward, then the recomputation of each layer
    torch.testing.assert_close(w_loss, loss, atol=1e-6, rtol=0)
    assert w_grads.keys() == grads.keys()
    for name, g in grads.items():
        torch.testing.assert_close(w_grads[name], g, atol=1e-6, rtol=0, msg=name)
    g = w_grads["decoder.layers.0.sentence_attn.q_proj.weight"]
    assert g is not None and g.abs().max() > 0


def test_a_layer_without_its_context_is_an_error():
    torch.manual_seed(0)
    model = build_model("hat_bart_base", D, **TINY_HAT).eval()
    layer = model.decoder.sentence_layers()[0]
    x = torch.zeros(4, 2, 16)
    encoder_out = model.encoder(SRC, SRC.ne(1).sum(1))
    with pytest.raises(ValueError, match="a HAT decoder layer ran without its sentence context"):
        layer(x, encoder_out["encoder_out"][0], encoder_out["encoder_padding_mask"][0])
    model.decoder.layers[1] = HoldingWrapper(nn.Linear(16, 16))
    with pytest.raises(ValueError, match="HAT decoder layer 1 is a HoldingWrapper that holds no "
                                         "HATDecoderLayer"):
        decode(model)
