"""``--checkpoint-activations`` for every encoder/decoder stack we build.

fairseq's own stacks (the token encoders of ``pht``/``vht``/HAT/ParsingSum-FT, the decoders of
``liu_ht``/ParsingSum/HAT) are wrapped by fairseq; ours (the PHT/VHT decoder layers, liu_ht's
local and global layers, ParsingSum's LGA layers, HAT's hierarchical encoder layer and its
decoder layer with the sentence sublayer, the attention predictor's layers) by
``fairseq_hier.models.checkpointing.checkpoint_layer``. For each architecture, on CPU, dropout 0:

(a) every layer of every stack is checkpointed: its feed-forward network runs twice in one
    forward + backward (the forward and the recomputation in the backward pass), once without
    the flag;
(b) the loss and every parameter gradient equal those of the same model without checkpointing
    to 1e-6, and no parameter is left without a gradient.

With dropout on, the recomputation must replay the forward's dropout masks: checked for
``pht`` and HAT (whose sentence sublayer has its own dropout). One real ``fairseq-train
--checkpoint-activations`` run of ``pht`` closes the file.
"""

import os
import re
import subprocess

import pytest
import torch
import torch.nn as nn
from conftest import BIN, train_args
from progress import wait_while_progressing
from tiny_models import build_tiny, loss_of, one_thread, stacks  # noqa: F401 (autouse fixture)

from fairseq_hier.models.checkpointing import is_checkpointed

TOL = 1e-6


# every architecture with an encoder/decoder stack (paragraph_ranker has LSTMs only; the
# *_1layer / *_large presets and fairseq's transformer_iwslt_zh_en add no layer type)
ARCHS = ["pht", "vht", "liu_ht", "parsingsum_ht", "parsingsum_ft", "hat_bart_base",
         "hat_transformer_iwslt_zh_en", "long_bart_base", "attention_predictor"]


def ffn_input(layer) -> nn.Linear:
    """The first FFN map of a layer (every layer type here has ``fc1``; the attentions' own
    projections may be bypassed by torch's fused attention)."""
    return layer.fc1


def run(arch, checkpoint, **overrides):
    """(model, loss, {name: grad}, calls of each layer's FFN in forward+backward)."""
    model, d = build_tiny(arch, checkpoint_activations=checkpoint, **overrides)
    layers = stacks(model)
    calls = [0] * len(layers)
    hooks = [ffn_input(layer).register_forward_hook(
        lambda *_, i=i: calls.__setitem__(i, calls[i] + 1)) for i, layer in enumerate(layers)]
    torch.manual_seed(1)  # dropout (when on) draws from here
    loss = loss_of(arch, model, d)
    loss.backward()
    for h in hooks:
        h.remove()
    grads = {n: p.grad for n, p in model.named_parameters() if p.requires_grad}
    return model, loss.detach(), grads, calls


@pytest.mark.parametrize("arch", ARCHS)
def test_every_stack_is_checkpointed_and_gradients_are_unchanged(arch):
    plain, loss, grads, plain_calls = run(arch, False)
    model, ck_loss, ck_grads, calls = run(arch, True)
    layers = stacks(model)
    assert len(layers) >= 2
    # (a) each layer wrapped, and recomputed in the backward pass
    assert [is_checkpointed(layer) for layer in layers] == [True] * len(layers)
    assert not any(is_checkpointed(layer) for layer in stacks(plain))
    assert plain_calls == [1] * len(layers)
    assert calls == [2] * len(layers), calls
    # (b) same loss, same gradients, every parameter has one
    missing = sorted(n for n, g in grads.items() if g is None)
    assert not missing, missing
    assert ck_grads.keys() == grads.keys()
    assert (ck_loss - loss).abs().item() <= TOL * max(1.0, loss.abs().item())
    worst = max((ck_grads[n] - g).abs().max().item() for n, g in grads.items())
    assert worst <= TOL, worst
    assert max(g.abs().max().item() for g in grads.values()) > 1e-3  # the check is not vacuous


@pytest.mark.parametrize("arch,overrides", [
    ("pht", dict(dropout=0.3, attention_dropout=0.2)),
    ("hat_transformer_iwslt_zh_en", dict(dropout=0.3))])
def test_dropout_masks_are_replayed_in_the_recomputation(arch, overrides):
    _, loss, grads, _ = run(arch, False, **overrides)
    _, ck_loss, ck_grads, calls = run(arch, True, **overrides)
    _, other_loss, _, _ = run(arch, False, **{k: v * 0.5 for k, v in overrides.items()})
    assert abs(other_loss.item() - loss.item()) > 1e-3  # dropout is really on
    assert (ck_loss - loss).abs().item() <= TOL * max(1.0, loss.abs().item())
    worst = max((ck_grads[n] - g).abs().max().item() for n, g in grads.items())
    assert worst <= TOL, worst


def test_offloading_checkpoints_too_and_gives_the_same_gradients():
    """``--offload-activations`` implies checkpointing (as in fairseq); on CPU the copies are
    no-ops, so loss and gradients must equal those without checkpointing."""
    _, loss, grads, _ = run("pht", False)
    model, off_loss, off_grads, calls = run("pht", False, offload_activations=True)
    assert calls == [2] * len(calls)
    assert all(is_checkpointed(layer) for layer in stacks(model))
    assert (off_loss - loss).abs().item() <= TOL
    assert max((off_grads[n] - g).abs().max().item() for n, g in grads.items()) <= TOL


def test_hat_decoder_layer_checkpoints_its_sentence_sublayer():
    """The sentence context reaches the recomputation: the decoder clears the layer's attribute
    after the forward, so a wrapper around ``forward`` would recompute without the sentence
    sublayer (and torch would refuse the mismatching recomputation)."""
    model, d = build_tiny("hat_transformer_iwslt_zh_en", checkpoint_activations=True)
    layer = model.decoder.layers[0]
    assert hasattr(layer, "precheckpoint_layer_forward")
    assert not hasattr(layer, "precheckpoint_forward")
    calls = []
    layer.sentence_attn.register_forward_hook(lambda *_: calls.append(layer._sentence_context))
    loss_of("hat_transformer_iwslt_zh_en", model, d).backward()
    assert len(calls) == 2 and all(c is not None for c in calls)  # forward and recomputation
    assert layer._sentence_context is None  # cleared again after the recomputation
    assert layer.sentence_attn.q_proj.weight.grad.abs().max() > 0


def test_every_hierarchical_encoder_layer_is_checkpointed():
    """``--hierarchical-layers 2``: both layers over the sentence states are checkpointed
    (recomputed in the backward pass)."""
    model, d = build_tiny("hat_bart_base", checkpoint_activations=True, hierarchical_layers=2)
    layers = model.encoder.hierarchical_layers
    assert len(layers) == 2 and all(is_checkpointed(layer) for layer in layers)
    calls = [0, 0]
    for i, layer in enumerate(layers):
        ffn_input(layer).register_forward_hook(lambda *_, i=i: calls.__setitem__(i, calls[i] + 1))
    loss_of("hat_bart_base", model, d).backward()
    assert calls == [2, 2]
    assert all(layer.fc1.weight.grad.abs().max() > 0 for layer in layers)


def test_fairseq_train_checkpoint_activations_end_to_end(data_bin, tmp_path):
    """One real run: the flag is accepted by a hierarchical model's parser and trains; the
    losses it logs equal those of the same run without checkpointing (dropout 0). Both runs
    at once (one process each)."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    procs, log_files = {}, {}
    for flag in ((), ("--checkpoint-activations",)):
        args = train_args(data_bin, "pht", tmp_path / str(bool(flag)), 2, extra=(
            "--cpu", "--dropout", "0", "--no-save", "--disable-validation", *flag))
        log_files[bool(flag)] = tmp_path / f"{bool(flag)}.log"
        with open(log_files[bool(flag)], "w") as out:
            procs[bool(flag)] = subprocess.Popen(
                [str(BIN / "fairseq-train"), *map(str, args)], env=env, text=True, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)
    codes = wait_while_progressing(list(procs.values()), list(log_files.values()))
    logs = {k: log_files[k].read_text() for k in procs}
    for k, code in zip(procs, codes):
        assert code == 0, logs[k][-3000:]
    assert "checkpoint_activations=False" in logs[False]
    assert "checkpoint_activations=True" in logs[True], logs[True][-2000:]
    losses = {k: re.findall(r"train_inner \|.* loss=([\d.]+),.* num_updates=(\d+),", v)
              for k, v in logs.items()}
    assert len(losses[True]) == 2 and losses[True] == losses[False], losses
