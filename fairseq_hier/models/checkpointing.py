"""Activation checkpointing of our own layers: ``--checkpoint-activations`` and
``--offload-activations``, the flags fairseq's Transformer stacks already honour.

Our layers use torch's non-reentrant checkpoint in place of fairseq's wrapper, keeping parameter
names. Why, what offloading moves, and ``torch.no_grad()``: docs/precision-and-distributed.md,
section fairseq_hier.models.checkpointing. Imports torch, fairseq.
"""

import functools
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn as nn
from fairseq.dataclass import FairseqDataclass
from torch.utils.checkpoint import checkpoint
from ..errors import HierError


@dataclass
class ActivationCheckpointConfig(FairseqDataclass):
    """The two options of fairseq's ``TransformerConfig``, for the model configs of ours that do
    not derive from it (``pht``/``vht``, ``liu_ht``/``parsingsum_ht``, ``attention_predictor``)."""

    checkpoint_activations: bool = field(
        default=False, metadata={"help": "checkpoint the activations of every encoder and decoder "
                                         "layer: recompute them in the backward pass instead of "
                                         "storing them (less memory, about one more forward)"})
    offload_activations: bool = field(
        default=False, metadata={"help": "checkpoint activations and keep each layer's inputs on "
                                         "the CPU until the backward pass; sets "
                                         "--checkpoint-activations"})


def checkpoints_activations(cfg) -> bool:
    """Whether ``cfg`` asks for checkpointing (``--offload-activations`` implies it, as in
    fairseq's Transformer)."""
    return bool(getattr(cfg, "checkpoint_activations", False)
                or getattr(cfg, "offload_activations", False))


def checkpoint_layer(layer: nn.Module, cfg, method: str = "forward") -> nn.Module:
    """``layer`` with its ``method`` checkpointed when ``cfg`` (a fairseq ``TransformerConfig``,
    one of our configs or a namespace) sets ``checkpoint_activations`` or
    ``offload_activations``; unchanged otherwise. ``method`` is the bound method to wrap (HAT
    wraps ``layer_forward``, the part of its forward that takes the sentence context as an
    argument)."""
    if not checkpoints_activations(cfg):
        return layer
    offload = bool(getattr(cfg, "offload_activations", False))
    marker = f"precheckpoint_{method}"  # fairseq's wrapper marks its layers precheckpoint_forward
    if hasattr(layer, marker):
        raise HierError(f"{type(layer).__name__}.{method} is already checkpointed")
    original = getattr(layer, method)
    setattr(layer, marker, original)
    setattr(layer, method, functools.partial(_checkpointed_call, original, offload))
    return layer


def is_checkpointed(layer: nn.Module) -> bool:
    """Whether ``layer`` was wrapped by :func:`checkpoint_layer` or fairseq's wrapper."""
    return any(name.startswith("precheckpoint_") for name in vars(layer))


def _checkpointed_call(function, offload: bool, *args, **kwargs):
    """``function(*args, **kwargs)`` under torch's non-reentrant checkpoint (with grad on)."""
    if not torch.is_grad_enabled():  # nothing is stored for a backward pass
        return function(*args, **kwargs)
    if not offload:
        return checkpoint(function, *args, use_reentrant=False, **kwargs)
    devices = [a.device if torch.is_tensor(a) else None for a in args]
    kw_devices = {k: v.device for k, v in kwargs.items() if torch.is_tensor(v)}

    def run(*cpu_args, **cpu_kwargs):  # recomputed in the backward pass: copies back included
        args = [_to(a, d) for a, d in zip(cpu_args, devices)]
        kwargs = {k: _to(v, kw_devices.get(k)) for k, v in cpu_kwargs.items()}
        return function(*args, **kwargs)

    cpu_args = [_to(a, torch.device("cpu")) for a in args]
    cpu_kwargs = {k: _to(v, torch.device("cpu")) for k, v in kwargs.items()}
    return checkpoint(run, *cpu_args, use_reentrant=False, **cpu_kwargs)


def _to(value: Any, device) -> Any:
    """A tensor moved to ``device`` (differentiably); anything else as is."""
    return value.to(device) if torch.is_tensor(value) and device is not None else value
