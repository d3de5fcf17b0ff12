"""No host syncs in the per-step decoding path.

At every beam-search step after the first, the code fairseq's ``_generate`` calls into (the
ensemble's ``forward_decoder``, ``reorder_encoder_out`` and ``reorder_incremental_state``, the
search's ``step``, the ``repeat_ngram_blocker``: our models' incremental decoders, our
:class:`TrackingEnsembleModel` / :class:`AlignmentTracker`, :class:`AlignedBeamSearch` and
:class:`PreviousTokenBlocker`) must not read a device tensor on the host.

How that is seen without a GPU (``torch.cuda.set_sync_debug_mode`` is CUDA-only):
:class:`HostReads` records, while one of those calls runs, every operation that needs a tensor's
*value* on the host: ``aten._local_scalar_dense`` (``.item()``, ``bool()``, ``int()``,
``float()``, ``if tensor:``), operations whose output size depends on the data (``nonzero``,
``masked_select``, boolean-mask indexing, ``repeat_interleave`` without a size, ``bincount``,
``unique``), and the Python-level ``Tensor.tolist`` / ``.cpu()`` / ``.numpy()``. Each record names
the first Python frame outside torch. Tensors that are host tensors by construction are exempt,
and so is what is computed from them alone: fairseq's ``torch.onnx.operators.shape_as_tensor``
(its sinusoidal positions read the step number from it; on a GPU it is a CPU tensor) and, on an
accelerator, any CPU tensor. The negative controls below plant each kind of read in our
per-step code and check that it is caught.

fairseq's own ``TransformerDecoder`` (``liu_ht``, ``parsingsum_*``, ``hat_*`` decode with it)
evaluates ``prev_output_tokens.eq(pad).any()`` at every step; removing it would mean copying its
120-line ``extract_features_scriptable``, so it is the one read listed as fairseq's, per step.
"""

import collections
import inspect
import os
import weakref

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

import fairseq_hier  # noqa: F401  (registers the models)
from conftest import TINY_HAT, bos_source, build_model, left_pad, make_dict, paragraph_batch
from conftest import paragraph_dict
from fairseq_hier.generation.alignment import AlignmentTracker
from fairseq_hier.generation.sentence_attention import SentenceAttentionSequenceGenerator
from fairseq_hier.generation.sequence_generator import AttentionAlignmentSequenceGenerator
from fairseq_hier.models.attention_predictor import (AttentionPredictorConfig,
                                                     AttentionPredictorModel)

aten = torch.ops.aten
DATA_DEPENDENT = {aten._local_scalar_dense.default, aten.nonzero.default,
                  aten.masked_select.default, aten.repeat_interleave.Tensor,
                  aten.bincount.default, aten._unique2.default, aten.unique_dim.default,
                  aten.unique_consecutive.default}
TORCH_DIR = os.path.dirname(torch.__file__)
FAIRSEQ_PAD_CHECK = "fairseq/models/transformer/transformer_decoder.py:extract_features_scriptable"
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


DETECTOR = {"_caller", "__torch_dispatch__", "_python_read", "_shape_as_host_tensor"}


def _caller() -> str:
    """``path:function`` of the first frame outside torch and the detector (path from the
    package root: ``fairseq_hier/...``, ``fairseq/...``, ``tests/...``)."""
    frame = inspect.currentframe()
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(TORCH_DIR) and not (name == __file__
                                                   and frame.f_code.co_name in DETECTOR):
            for root in ("site-packages/", os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + "/"):
                name = name.split(root)[-1]
            return f"{name}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


class HostReads(TorchDispatchMode):
    """Records host reads of device tensors (see the module docstring) while entered."""

    def __init__(self, accelerator: bool):
        super().__init__()
        self.accelerator = accelerator
        self.reads = collections.Counter()  # (what, caller) -> count
        self._host = weakref.WeakValueDictionary()  # id -> host tensor
        self._patched = {}

    def _is_host(self, t: torch.Tensor) -> bool:
        return (self.accelerator and t.device.type == "cpu") or self._host.get(id(t)) is t

    def _mark_host(self, out):
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self._host[id(t)] = t
        return out

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        host = bool(tensors) and all(self._is_host(t) for t in tensors)
        boolean_index = func in (aten.index.Tensor, aten.index_put.default,
                                 aten.index_put_.default) and any(
            t is not None and t.dtype == torch.bool for t in args[1])
        if (func in DATA_DEPENDENT or boolean_index) and not host:
            self.reads[(str(func), _caller())] += 1
        out = func(*args, **kwargs)
        return self._mark_host(out) if host else out

    def _python_reads(self):
        mode = self

        def wrap(name):
            original = getattr(torch.Tensor, name)

            def _python_read(tensor, *args, **kwargs):
                if not mode._is_host(tensor):
                    mode.reads[(f"Tensor.{name}", _caller())] += 1
                return original(tensor, *args, **kwargs)

            return original, _python_read

        shape_as_tensor = torch.onnx.operators.shape_as_tensor

        def _shape_as_host_tensor(x):
            return self._mark_host(shape_as_tensor(x))

        self._patched = {("tensor", name): wrap(name) for name in ("tolist", "cpu", "numpy")}
        self._patched[("onnx", "shape_as_tensor")] = (shape_as_tensor, _shape_as_host_tensor)

    def __enter__(self):
        self._python_reads()
        for (owner, name), (_, patched) in self._patched.items():
            setattr(torch.Tensor if owner == "tensor" else torch.onnx.operators, name, patched)
        return super().__enter__()

    def __exit__(self, *exc):
        for (owner, name), (original, _) in self._patched.items():
            setattr(torch.Tensor if owner == "tensor" else torch.onnx.operators, name, original)
        return super().__exit__(*exc)


def per_step_host_reads(generator, models, sample, accelerator=False):
    """Run ``generator.generate``; return (hypotheses, Counter of host reads made inside the
    per-step calls from the second step on, number of such steps)."""
    reads = collections.Counter()
    state = {"steps": 0}
    ensemble = generator.model

    def watch(owner, name, counts_step=False):
        original = getattr(owner, name)

        def watched(*args, **kwargs):
            if state["steps"] == 0:  # step 0: beam expansion, the decoder's first call
                out = original(*args, **kwargs)
            else:
                with HostReads(accelerator) as mode:
                    out = original(*args, **kwargs)
                reads.update(mode.reads)
            if counts_step:
                state["steps"] += 1
            return out

        setattr(owner, name, watched)

    watch(ensemble, "forward_decoder", counts_step=True)
    watch(ensemble, "reorder_encoder_out")
    watch(ensemble, "reorder_incremental_state")
    watch(generator.search, "step")
    if generator.repeat_ngram_blocker is not None:
        watch(generator.repeat_ngram_blocker, "forward")
    hypos = generator.generate(models, sample)
    return hypos, reads, state["steps"] - 1


# ------------------------------------------------------------------------------ models, batches
DIMS = dict(encoder_layers=1, decoder_layers=2, encoder_embed_dim=16, decoder_embed_dim=16,
            encoder_ffn_embed_dim=32, decoder_ffn_embed_dim=32, encoder_attention_heads=2,
            decoder_attention_heads=2, pooling_heads=2, dropout=0.0, attention_dropout=0.0,
            activation_dropout=0.0)


def paragraph_sample(d, device):
    """B=3 examples of up to P=3 paragraphs x L=5 tokens, absent paragraphs included."""
    g = torch.Generator().manual_seed(0)

    def example(lengths):
        out = torch.full((len(lengths), 5), d.pad())
        for p, n in enumerate(lengths):
            out[p, :n] = torch.randint(d.nspecial, len(d) - 1, (n,), generator=g)
        return out

    src = paragraph_batch(d, [example([5, 3, 4]), example([2, 5, 0]), example([4, 0, 0])])
    return {"id": torch.arange(3, device=device),
            "net_input": {"src_tokens": src.to(device),
                          "src_lengths": src.ne(d.pad()).sum((1, 2)).to(device)}}


def alignment_generator(arch, device, **options):
    d = paragraph_dict()
    torch.manual_seed(0)
    extra = dict(global_layers="1", global_heads=2, encoder_layers=2) if arch == "liu_ht" else {}
    model = build_model(arch, d, **{**DIMS, **extra}).eval().to(device)
    predictor = AttentionPredictorModel(AttentionPredictorConfig(
        input_dim=16, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_embed_dim=16,
        dropout=0.0)).eval().to(device)
    if options.get("strategy") != "attalign":
        predictor = None
    generator = AttentionAlignmentSequenceGenerator(
        [model], d, predictor=predictor, beam_size=3, max_len_b=8, min_len=2, **options)
    return generator.to(device), model, paragraph_sample(d, device)


ALIGNED = dict(strategy="attalign", live_beams=True, block_previous=2, block_allowed=[5])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("arch,options", [
    ("pht", ALIGNED),  # the attention-alignment generator, every per-step option on
    ("vht", dict(strategy="strcov", live_beams=True)),
    ("liu_ht", {}),  # our generator with fairseq's TransformerDecoder
])
def test_hierarchical_decoding_steps_read_nothing_on_the_host(arch, options, device):
    generator, model, sample = alignment_generator(arch, device, **options)
    hypos, reads, steps = per_step_host_reads(generator, [model], sample, device != "cpu")
    assert [len(h) for h in hypos] == [3, 3, 3] and steps >= 7  # the steps really ran
    ours = {key: n for key, n in reads.items() if FAIRSEQ_PAD_CHECK not in key[1]}
    assert ours == {}, f"host reads in the per-step path over {steps} steps: {ours}"
    fairseqs = sum(reads.values())
    # fairseq's TransformerDecoder: one `.any()` per step; our HierarchicalDecoder: none
    assert fairseqs == (steps if arch == "liu_ht" else 0), reads


def test_hat_decoding_steps_read_nothing_on_the_host_but_fairseqs_pad_check():
    d = make_dict(30)
    torch.manual_seed(0)
    model = build_model("hat_transformer_iwslt_zh_en", d, **TINY_HAT).eval()
    src = left_pad([bos_source(3, 4), bos_source(5), bos_source(2, 2, 2)])
    sample = {"id": torch.arange(3), "net_input": {"src_tokens": src,
                                                   "src_lengths": src.ne(d.pad()).sum(1)}}
    generator = SentenceAttentionSequenceGenerator([model], d, beam_size=3, max_len_b=8,
                                                   min_len=2)
    hypos, reads, steps = per_step_host_reads(generator, [model], sample)
    assert [len(h) for h in hypos] == [3, 3, 3] and steps >= 7
    assert reads == {("aten._local_scalar_dense.default", FAIRSEQ_PAD_CHECK): steps}, reads


# ------------------------------------------------------------------ the detector catches reads
@pytest.mark.parametrize("planted", ["item", "nonzero", "tolist", "mask_index"])
def test_a_planted_host_read_is_caught(monkeypatch, planted):
    """Each kind of read, planted in our per-step code, is counted at every step after the
    first (so the clean runs above are not clean because the detector is blind)."""
    def plant(alpha):
        if planted == "item":
            return alpha * (1.0 if float(alpha.sum()) > 0 else 0.0)
        if planted == "nonzero":
            return alpha.index_select(0, alpha.sum(-1).gt(-1).nonzero().squeeze(1))
        if planted == "tolist":
            return alpha.new_tensor(alpha.tolist())
        return alpha.masked_fill(alpha < 0, 0.0)[alpha.sum(-1) > -1]

    update = AlignmentTracker.update
    monkeypatch.setattr(AlignmentTracker, "update",
                        lambda self, alpha: update(self, plant(alpha)))
    generator, model, sample = alignment_generator("pht", "cpu", **ALIGNED)
    hypos, reads, steps = per_step_host_reads(generator, [model], sample)
    assert [len(h) for h in hypos] == [3, 3, 3]
    caught = {what: n for (what, where), n in reads.items() if where.endswith(":plant")}
    assert sum(caught.values()) == steps and steps >= 7, reads
