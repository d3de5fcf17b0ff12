"""The efficiency table of paper 000 (Table 4, Sec. 5.4): for every architecture at the same
widths and the same source length, parameters, peak training memory, the largest batch that fits
a memory budget, and validation time, written as efficiency.json. Also the measuring tools shared
with the benchmarks (``benchmarks/training_cost.py`` and others import them from here): models at
given widths (:func:`build_model`), synthetic batches (:func:`make_batch`), training steps
(:func:`training_step`), peak memory (:func:`peak_mb`) and the max-batch search
(:func:`largest_batch`). The rows, columns and JSON: docs/evaluation.md, section
fairseq_hier.analysis.efficiency.

May import what docs/design.md allows ``analysis/``; torch and fairseq inside the functions
that measure (the report reads :data:`TABLE_ARCHS` without them).
Command line: ``fairseq-hier-analyse efficiency`` (:mod:`fairseq_hier.cli.analyse`).
"""

import argparse
import contextlib
import os
import sys
import time
import types
from typing import Callable, Dict, Optional, Sequence
from ..errors import HierError
from ..recipes import architectures as table

PARAGRAPH_TOKENS, TARGET_TOKENS = 100, 145
TABLE_ARCHS = ("transformer", "pht", "vht", "liu_ht", "parsingsum_ft", "parsingsum_ht",
               "hat_transformer", "hat_bart")
# row name -> registered architecture (the others are registered under their own name)
REGISTERED = {"transformer-S2": "transformer", "hat": "hat_transformer_iwslt_zh_en",
              "hat_transformer": "hat_transformer_iwslt_zh_en", "hat_bart": "hat_bart_base"}
# the traits of each row's architecture, from the table of architectures
ROWS = TABLE_ARCHS + ("transformer-S2", "hat")
_ROW = {r: table.architecture(REGISTERED.get(r, r)) for r in ROWS}
HIERARCHICAL = tuple(r for r in ROWS if _ROW[r].layout == table.HIERARCHICAL)  # B x P x L
HAT_ARCHS = tuple(r for r in ROWS if _ROW[r].layout == table.SENTENCES)  # a BOS per paragraph
# self-attention over all S tokens (flat positions, shared embeddings)
FLAT_ATTENTION = tuple(r for r in ROWS if _ROW[r].layout in (table.FLAT, table.SENTENCES))
PARSING_ARCHS = tuple(r for r in ROWS if _ROW[r].parse)  # read a dependency parse
DTYPES = ("fp32", "bf16")
VOCAB = 32000
SENTENCE_PIECES = 25  # the synthetic parse's sentence length
# the shared widths (000 Sec. 4.2 for PHT/VHT and their flat baseline)
DIMS = dict(encoder_layers=3, decoder_layers=3, encoder_embed_dim=256, decoder_embed_dim=256,
            encoder_ffn_embed_dim=1024, decoder_ffn_embed_dim=1024, encoder_attention_heads=4,
            decoder_attention_heads=4, dropout=0.3)
TINY = dict(table.TINY_WIDTHS)  # --widths tiny
WIDTHS = ("same", "paper", "tiny")
CUDA_METHOD, CPU_METHOD = "cuda search", "cpu search (peak allocations)"
HAT_DATA_NOTE = ("reads hat_summarization's data (a BOS per sentence), not this data-bin's: "
                 "not validated")


# ----------------------------------------------------------------------------- models, batches
def table_dims(layers: int = 3, embed_dim: int = 256, ffn_dim: Optional[int] = None,
               heads: int = 4, dropout: float = 0.3) -> dict:
    """The table's widths: ``layers`` encoder and decoder layers, d ``embed_dim``, FFN
    ``ffn_dim`` (default 4d), ``heads`` attention (and PHT pooling) heads."""
    if layers < 1 or embed_dim < 1 or heads < 1 or embed_dim % heads:
        raise HierError(f"need layers >= 1 and an embedding dimension divisible by the heads: "
                        f"got layers {layers}, dim {embed_dim}, heads {heads}")
    ffn = ffn_dim or 4 * embed_dim
    return dict(encoder_layers=layers, decoder_layers=layers, encoder_embed_dim=embed_dim,
                decoder_embed_dim=embed_dim, encoder_ffn_embed_dim=ffn, decoder_ffn_embed_dim=ffn,
                encoder_attention_heads=heads, decoder_attention_heads=heads, dropout=dropout,
                pooling_heads=heads)


def model_options(arch, widths="same", dims=None):
    """Legacy options of ``arch`` (a row name) at ``widths`` (or at ``dims``, e.g.
    :func:`table_dims`); the architecture preset fills the rest."""
    if dims is not None:
        dims = dict(dims)
    elif widths == "tiny":
        dims = dict(TINY)
    elif widths == "paper" and arch == "liu_ht":
        return dict(attention_dropout=0.1, activation_dropout=0.1)  # LiuHTConfig: 002's own
    elif widths == "paper" and arch == "hat":
        return dict(share_all_embeddings=True)  # hat_transformer_iwslt_zh_en: 004's own
    else:
        dims = dict(DIMS)
    if arch != "pht":
        dims.pop("pooling_heads", None)
    if arch in ("liu_ht", "parsingsum_ht"):
        # the top encoder layer global (all of them with one layer), as many pooling heads as
        # attention heads
        dims.update(global_layers=str(dims["encoder_layers"] - 1),
                    global_heads=dims["encoder_attention_heads"],
                    attention_dropout=0.0, activation_dropout=0.0)  # as the others (002 has 0.1)
    if arch in FLAT_ATTENTION:
        # hat_transformer's presets inherit transformer_wmt_en_de_big's 0.1: 0 as the others
        dims.update(share_all_embeddings=True, attention_dropout=0.0, activation_dropout=0.0)
    return dims


def synthetic_dictionary(widths="same", vocab=None):
    """A fairseq Dictionary of ``vocab`` symbols (default: 32,000, 1,000 for tiny widths)."""
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range((vocab or (1000 if widths == "tiny" else VOCAB)) - d.nspecial):
        d.add_symbol(f"w{i}")
    return d


def build_model(arch, max_source_positions, widths="same", dims=None, task=None, vocab=None):
    """``arch`` (a row name: of :data:`TABLE_ARCHS` or benchmarks/training_cost.py's) at ``widths``
    (or ``dims``) for sources of up to ``max_source_positions`` flat tokens; on a fresh
    dictionary of ``vocab`` symbols, or built by ``task`` (its dictionaries, its checks).
    Returns (model, source dictionary)."""
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    import fairseq_hier

    fairseq_hier.register()
    registered = REGISTERED.get(arch, arch)
    args = argparse.Namespace(arch=registered, task="translation",
                              **model_options(arch, widths, dims))
    if arch in FLAT_ATTENTION:  # flat positions: the whole source
        args.max_source_positions, args.max_target_positions = max_source_positions, 1024
    ARCH_CONFIG_REGISTRY[registered](args)
    if task is not None and arch not in HAT_ARCHS:
        model, d = task.build_model(args), task.source_dictionary
    else:  # HAT reads another task's data (a BOS per sentence): only the task's dictionary
        d = task.source_dictionary if task is not None else synthetic_dictionary(widths, vocab)
        dictionaries = types.SimpleNamespace(source_dictionary=d, target_dictionary=d)
        model = ARCH_MODEL_REGISTRY[registered].build_model(args, dictionaries)
    if arch == "transformer-S2":  # fairseq's MultiheadAttention skips the fused kernel when set
        for layer in model.encoder.layers:
            layer.self_attn.skip_embed_dim_check = True
    return model, d


def make_batch(arch, d, batch_size, paragraphs, device, paragraph_tokens=PARAGRAPH_TOKENS,
               target_tokens=TARGET_TOKENS):
    """Random words: ``B x P x L`` paragraphs for the hierarchical models, else ``B x S`` (S = P x
    L, the last token EOS; for the HAT models a BOS opening every paragraph); ``B x T`` targets
    ending in EOS and their shifted decoder inputs. Returns (src, prev_output_tokens, target)."""
    import torch

    g = torch.Generator().manual_seed(0)
    words = lambda *shape: torch.randint(d.nspecial, len(d), shape, generator=g)  # noqa: E731
    if arch in HIERARCHICAL:
        src = words(batch_size, paragraphs, paragraph_tokens)  # B x P x L
    else:
        src = words(batch_size, paragraphs * paragraph_tokens)  # B x S
        if arch in HAT_ARCHS:  # every paragraph a sentence of HAT's
            src[:, ::paragraph_tokens] = d.bos()
        src[:, -1] = d.eos()
    target = torch.cat([words(batch_size, target_tokens - 1),
                        torch.full((batch_size, 1), d.eos())], 1)  # B x T
    prev = torch.cat([torch.full((batch_size, 1), d.eos()), target[:, :-1]], 1)
    return src.to(device), prev.to(device), target.to(device)


def parse_inputs(arch, src) -> dict:
    """ParsingSum's extra inputs for ``src`` (``B x S`` or ``B x P x L``): a synthetic dependency
    parse, one word per piece (the word id = its flat position), sentences of
    :data:`SENTENCE_PIECES` pieces, every word headed by the one before it (the first: root);
    the last flat piece is EOS (-1). Other models: ``{}``."""
    import torch

    if arch not in PARSING_ARCHS:
        return {}
    shape = src.shape
    s = src[0].numel()
    words = torch.arange(s)
    heads = torch.where(words % SENTENCE_PIECES == 0, torch.full_like(words, -1), words - 1)
    words[-1] = heads[-1] = -1
    as_src = lambda v: v.view(shape[1:]).unsqueeze(0).expand(shape).to(src.device)  # noqa: E731
    return {"src_words": as_src(words), "src_heads": as_src(heads)}


# ----------------------------------------------------------------------------- steps, memory
def autocast(device, dtype):
    """bf16: torch.autocast to bfloat16 (weights, gradients and Adam stay float32); fp32: none."""
    import torch

    if dtype == "fp32":
        return contextlib.nullcontext()
    if dtype != "bf16":
        raise HierError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return torch.autocast(device_type=device, dtype=torch.bfloat16)


def training_step(model, lr, src_tokens, src_lengths, prev_output_tokens, target, dtype="fp32",
                  optimizer=None, extra=None):
    """One Adam training step (cross-entropy) of ``model`` on a fixed batch, as a closure; the
    forward and the loss under ``dtype``'s autocast; ``optimizer``: reuse one (else a new Adam);
    ``extra``: more forward keyword arguments (ParsingSum's parse, :func:`parse_inputs`)."""
    import torch
    import torch.nn.functional as F

    opt = optimizer or torch.optim.Adam(model.parameters(), lr=lr)
    device = target.device.type
    extra = extra or {}

    def step():
        opt.zero_grad(set_to_none=False)
        with autocast(device, dtype):
            logits, _ = model(src_tokens, src_lengths, prev_output_tokens, **extra)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), target.view(-1))
        loss.backward()
        opt.step()

    return step


def cpu_peak_mb(fn):
    """Peak of the net bytes allocated while ``fn`` runs, from torch.profiler's memory events."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    current = peak = 0
    for e in sorted(events, key=lambda e: e.start_ns()):
        current += e.nbytes()
        peak = max(peak, current)
    return peak / 2**20


def peak_mb(fn, device):
    """Peak MB allocated while ``fn`` runs, above what was allocated before (CUDA: the caching
    allocator's counters; CPU: :func:`cpu_peak_mb`)."""
    import torch

    if device != "cuda":
        return cpu_peak_mb(fn)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 2**20


def tensors_mb(tensors) -> float:
    """MiB held by ``tensors`` (each storage counted once; None skipped)."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        key = (t.untyped_storage().data_ptr(), t.device)
        if key not in seen:
            seen.add(key)
            total += t.untyped_storage().nbytes()
    return total / 2**20


def held_mb(model, optimizer, batch) -> float:
    """What a training step starts from: parameters, gradients, the optimizer's state and the
    batch's tensors, in MiB."""
    import torch

    state = [v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v)]
    params = list(model.parameters())
    return tensors_mb(params + [p.grad for p in params] + state + list(batch))


def is_oom(error):
    """Whether ``error`` is an out-of-memory (CUDA's, or CPU's allocator failing)."""
    import torch

    return isinstance(error, (torch.cuda.OutOfMemoryError, MemoryError)) or (
        isinstance(error, RuntimeError) and "can't allocate memory" in str(error))


def free_memory(device):
    import gc

    import torch

    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def largest_batch(fits, limit):
    """The largest batch size for which ``fits(size)`` holds (fits is assumed monotone), trying
    1, 2, 4, ... and ``limit``, then bisecting between the last size that fitted and the first
    that did not. Returns (size, whether ``limit`` fitted, i.e. the search stopped there); 0 if
    even 1 does not fit."""
    low, size = 0, 1  # low fits (0: trivially)
    while fits(size):
        low = size
        if size >= limit:
            return low, True
        size = min(2 * size, limit)
    high = size  # the first size that did not fit
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low, False


def cap_cuda_memory(cap_gib):
    """Cap this process's CUDA caching allocator at ``cap_gib`` (the max-batch budget)."""
    import torch

    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap_gib * 2**30 / total))


def cuda_fits(model, dictionary, arch, tokens, dtype, optimizer, log=None):
    """``fits(batch_size)`` for :func:`largest_batch` on CUDA: a training step of ``model``
    (twice: the first also allocates Adam's state) at that batch, out-of-memory caught and the
    cache emptied. The allocator must be capped first (:func:`cap_cuda_memory`)."""
    import torch

    paragraphs = tokens // PARAGRAPH_TOKENS

    def fits(batch_size):
        def attempt():
            src, prev, target = make_batch(arch, dictionary, batch_size, paragraphs, "cuda")
            step = training_step(model, 1e-4, src, None, prev, target, dtype, optimizer,
                                 parse_inputs(arch, src))
            step()
            step()
            torch.cuda.synchronize()

        try:
            attempt()
            ok = True
        except torch.cuda.OutOfMemoryError:
            ok = False
        free_memory("cuda")
        if log:
            log(f"max batch {arch} {dtype}: batch {batch_size} {'fits' if ok else 'OOM'}")
        return ok

    return fits


# ----------------------------------------------------------------------------- the table
class Measured:
    """One architecture at the table's widths on ``device``: its model, an Adam optimizer whose
    state exists (one warm-up step at batch 1), and :meth:`step_mb`, the peak MiB of a training
    step at a batch size (model, gradients, Adam state and batch included), cached."""

    def __init__(self, arch, tokens, dims, device, dtype="fp32", task=None, vocab=None):
        import torch

        if tokens % PARAGRAPH_TOKENS or tokens <= 0:
            raise HierError(f"tokens must be a positive multiple of {PARAGRAPH_TOKENS}, "
                            f"got {tokens}")
        torch.manual_seed(0)
        self.arch, self.tokens, self.device, self.dtype = arch, tokens, device, dtype
        self.model, self.dictionary = build_model(arch, tokens + 8, dims=dims, task=task,
                                                  vocab=vocab)
        self.model.to(device).train()
        self.params = sum(p.numel() for p in self.model.parameters())
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.peaks: Dict[int, float] = {}
        self.step(1)()  # warm-up: gradients and Adam state allocated

    def batch(self, batch_size):
        return make_batch(self.arch, self.dictionary, batch_size, self.tokens // PARAGRAPH_TOKENS,
                          self.device)

    def step(self, batch_size, batch=None):
        src, prev, target = batch or self.batch(batch_size)
        return training_step(self.model, 1e-4, src, None, prev, target, self.dtype,
                             self.optimizer, parse_inputs(self.arch, src))

    def step_mb(self, batch_size) -> float:
        """Peak MiB of one training step at ``batch_size``, everything included (cached)."""
        if batch_size not in self.peaks:
            self.peaks[batch_size] = step_total_mb(self, batch_size)
        return self.peaks[batch_size]


def step_total_mb(measured: Measured, batch_size: int) -> float:
    """The measurement behind :meth:`Measured.step_mb` (tests replace it with a known function).
    CUDA: ``max_memory_allocated`` over the step; CPU: :func:`held_mb` + :func:`cpu_peak_mb`."""
    import torch

    batch = measured.batch(batch_size)
    step = measured.step(batch_size, batch)
    if measured.device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() / 2**20
    return held_mb(measured.model, measured.optimizer, batch) + cpu_peak_mb(step)


def max_batch(measured: Measured, budget_gib: float, limit: int, log=None) -> dict:
    """The largest training batch under ``budget_gib``: ``{"max_batch", "max_batch_at_limit",
    "max_batch_method"}`` (module docstring)."""
    if measured.device == "cuda":
        cap_cuda_memory(budget_gib)
        fits = cuda_fits(measured.model, measured.dictionary, measured.arch, measured.tokens,
                         measured.dtype, measured.optimizer, log)
        method = CUDA_METHOD
    else:
        budget_mb = budget_gib * 1024

        def fits(batch_size):
            mb = measured.step_mb(batch_size)
            if log:
                log(f"max batch {measured.arch}: batch {batch_size} peaks at {mb:.1f} MiB "
                    f"({'fits' if mb <= budget_mb else 'over'} {budget_mb:.1f})")
            return mb <= budget_mb

        method = CPU_METHOD
    size, at_limit = largest_batch(fits, limit)
    return {"max_batch": size, "max_batch_at_limit": at_limit, "max_batch_method": method}


def valid_batches_synthetic(measured: Measured, examples: int, batch_size: int):
    """``examples`` synthetic examples in batches of ``batch_size``: (src, prev, target) each."""
    done = 0
    while done < examples:
        n = min(batch_size, examples - done)
        yield measured.batch(n)
        done += n


def loss_forward(model, src, prev, target, dtype, extra, pad=None):
    """The validation loss (cross-entropy, padding ignored) of one batch; returns it as float."""
    import torch.nn.functional as F

    with autocast(target.device.type, dtype):
        logits, _ = model(src, None, prev, **extra)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), target.reshape(-1),
                               ignore_index=-100 if pad is None else pad, reduction="sum")
    return loss


def valid_seconds(measured: Measured, examples: int, batch_size: int, task=None,
                  repeats: int = 1) -> dict:
    """Seconds of the loss forward over the validation examples (eval mode, no gradients, one
    untimed warm-up batch): ``examples`` synthetic ones, or the whole ``valid`` split of
    ``task``'s data; the fastest of ``repeats`` passes (timeit's rule: the others were slowed
    by the machine, not by the model). Returns ``{"valid_seconds"`` (wall; CUDA synchronised),
    ``"valid_cpu_seconds"`` (CPU: this process's CPU time of that pass, robust to time stolen
    by other processes; CUDA: null), ``"valid_examples", "valid_batch_size", "valid_repeats"}``."""
    import torch

    model, device = measured.model, measured.device
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if task is None:
        batches = [(src, prev, target, parse_inputs(measured.arch, src), None)
                   for src, prev, target in valid_batches_synthetic(measured, examples, batch_size)]
    else:
        batches = list(data_batches(task, batch_size, device))
    count = sum(b[0].size(0) for b in batches)
    passes = []
    model.eval()
    try:
        with torch.no_grad():
            src, prev, target, extra, pad = batches[0]
            loss_forward(model, src, prev, target, measured.dtype, extra, pad)  # warm-up
            for _ in range(repeats):
                sync()
                start, cpu_start = time.perf_counter(), time.process_time()
                for src, prev, target, extra, pad in batches:
                    loss_forward(model, src, prev, target, measured.dtype, extra, pad)
                sync()
                passes.append((time.perf_counter() - start, time.process_time() - cpu_start))
    finally:
        model.train()
    wall, cpu = min(passes)
    return {"valid_seconds": round(wall, 4),
            "valid_cpu_seconds": None if device == "cuda" else round(cpu, 4),
            "valid_examples": count, "valid_batch_size": batch_size, "valid_repeats": repeats}


def data_batches(task, batch_size, device):
    """The ``valid`` split of ``task`` (loaded) in batches of ``batch_size`` examples, each as
    (src_tokens, prev_output_tokens, target, other net_input keys, padding index)."""
    from fairseq import utils

    dataset = task.dataset("valid")
    iterator = task.get_batch_iterator(dataset, max_sentences=batch_size, max_tokens=None,
                                       ignore_invalid_inputs=False, seed=1, num_workers=0)
    for sample in iterator.next_epoch_itr(shuffle=False):
        if device == "cuda":
            sample = utils.move_to_cuda(sample)
        net = dict(sample["net_input"])
        src, prev = net.pop("src_tokens"), net.pop("prev_output_tokens")
        net.pop("src_lengths", None)
        yield src, prev, sample["target"], net, task.target_dictionary.pad()


def setup_data_task(data_bin, arch, tokens, dependency_parse=None, task_args=()):
    """The ``hierarchical_summarization`` task on ``data_bin`` with its ``valid`` split loaded,
    cut to ``tokens`` source tokens (``tokens / 100`` paragraphs of 100; flat: ``tokens``), for
    ``arch`` (ParsingSum's models get ``--dependency-parse``); ``task_args``: more task flags."""
    from fairseq import options, tasks

    import fairseq_hier

    fairseq_hier.register()
    flags = [str(data_bin), "--task", "hierarchical_summarization",
             "--max-paragraphs", str(tokens // PARAGRAPH_TOKENS),
             "--max-paragraph-tokens", str(PARAGRAPH_TOKENS),
             "--max-source-positions", str(tokens), *task_args]
    if arch in PARSING_ARCHS:
        if not dependency_parse:
            raise HierError(f"--data: {arch} reads the source's dependency parse: pass "
                            f"--dependency-parse NAME (the data-bin's valid.parse.NAME.*) or "
                            f"leave {arch} out of --archs")
        flags += ["--dependency-parse", dependency_parse]
    parser = options.get_validation_parser()
    args = options.parse_args_and_arch(parser, flags)
    task = tasks.setup_task(args)
    task.load_dataset("valid")
    return task


def efficiency_row(arch, tokens, dims, budget_gib, device, dtype="fp32", peak_batch=1,
                   valid_examples=64, valid_batch_size=8, limit=1024, data=None,
                   dependency_parse=None, task_args=(), vocab=None, search=True, log=None,
                   valid_repeats=1) -> dict:
    """One row of the table (module docstring)."""
    task = None
    if data is not None and arch not in HAT_ARCHS:
        task = setup_data_task(data, arch, tokens, dependency_parse, task_args)
    elif data is not None:  # HAT: the data-bin's dictionary, no validation on its data
        task = setup_data_task(data, "transformer", tokens, None, task_args)
    measured = Measured(arch, tokens, dims, device, dtype, task, vocab)
    row = {"arch": arch, "params": measured.params,
           "params_mb": round(measured.params * 4 / 2**20, 2)}
    row.update(max_batch(measured, budget_gib, limit, log) if search else
               {"max_batch": None, "max_batch_at_limit": None, "max_batch_method": "not searched"})
    if device == "cuda":
        free_memory(device)
    row.update(peak_mem_mb=None, peak_batch=peak_batch)
    try:  # on CUDA under the budget's cap: peak_batch may not fit
        row["peak_mem_mb"] = round(measured.step_mb(peak_batch), 2)
    except Exception as error:  # noqa: BLE001 - only out-of-memory is a result
        if not is_oom(error):
            raise
        row["peak_note"] = f"out of memory at batch {peak_batch}"
    free_memory(device)
    row.update(valid_seconds=None, valid_cpu_seconds=None, valid_examples=0,
               valid_batch_size=valid_batch_size, valid_repeats=valid_repeats)
    if data is not None and arch in HAT_ARCHS:
        row["valid_note"] = HAT_DATA_NOTE
    else:
        row["valid_note"] = f"valid split of {data}" if data is not None else "synthetic"
        try:
            row.update(valid_seconds(measured, valid_examples, valid_batch_size,
                                     task if data is not None else None, valid_repeats))
        except Exception as error:  # noqa: BLE001 - only out-of-memory is a result
            if not is_oom(error):
                raise
            row["valid_note"] += f"; out of memory at validation batch {valid_batch_size}"
    del measured
    free_memory(device)
    return row


def device_name(device: str) -> str:
    import torch

    return f"cuda: {torch.cuda.get_device_name(0)}" if device == "cuda" else "cpu"


def efficiency_table(archs: Sequence[str] = TABLE_ARCHS, tokens: int = 1600,
                     budget_gib: float = 11.0, layers: int = 3, embed_dim: int = 256,
                     device: str = "cpu", dtype: str = "fp32", peak_batch: int = 1,
                     valid_examples: int = 64, valid_batch_size: int = 8, limit: int = 1024,
                     data: Optional[str] = None, dependency_parse: Optional[str] = None,
                     task_args: Sequence[str] = (), vocab: Optional[int] = None,
                     heads: int = 4, search: bool = True, log: Optional[Callable] = None,
                     valid_repeats: int = 1) -> dict:
    """Every row, measured one after the other in this process; the efficiency.json object."""
    dims = table_dims(layers, embed_dim, heads=heads)
    unknown = [a for a in archs if a not in TABLE_ARCHS]
    if unknown:
        raise HierError(f"unknown architecture(s) {unknown}; choose from {', '.join(TABLE_ARCHS)}")
    if tokens <= 0 or tokens % PARAGRAPH_TOKENS:
        raise HierError(f"--tokens must be a positive multiple of {PARAGRAPH_TOKENS}, "
                        f"got {tokens}")
    parsing = [a for a in archs if a in PARSING_ARCHS]
    if data is not None and parsing and not dependency_parse:
        raise HierError(f"--data: {', '.join(parsing)} read(s) the source's dependency parse: "
                        f"pass --dependency-parse NAME (the data-bin's valid.parse.NAME.*) or "
                        f"leave them out of --archs")
    rows = []
    for arch in archs:
        start = time.perf_counter()
        rows.append(efficiency_row(arch, tokens, dims, budget_gib, device, dtype, peak_batch,
                                   valid_examples, valid_batch_size, limit, data,
                                   dependency_parse, task_args, vocab, search, log,
                                   valid_repeats))
        if log:
            log(f"{arch}: measured in {time.perf_counter() - start:.1f} s: {rows[-1]}")
    return {"device": device_name(device), "tokens": tokens, "budget_gib": budget_gib,
            "dtype": dtype, "layers": layers, "embed_dim": embed_dim, "heads": heads,
            "target_tokens": TARGET_TOKENS,
            "vocab": _dictionary_size(data) if data is not None else (vocab or VOCAB),
            "data": None if data is None else str(data), "rows": rows}


def _dictionary_size(data: str) -> int:
    """Symbols of a data-bin's source dictionary (what the rows' models use with ``--data``)."""
    from fairseq.data import Dictionary

    return len(Dictionary.load(os.path.join(str(data), "dict.src.txt")))


def format_table(result: dict) -> str:
    """The table as 000's Table 4 lays it out (max batch, parameters, validation time), with our
    extra columns; then one line saying how each was measured."""
    cpu = result["device"] == "cpu"
    head = ["model", "max batch", "params (M)", "params (MB)", "peak MiB", "valid (s)"]
    lines = [head + (["valid (cpu-s)"] if cpu else [])]
    for r in result["rows"]:
        mb = "-" if r["max_batch"] is None else (
            f"{r['max_batch']}{'+' if r['max_batch_at_limit'] else ''}")
        peak = "OOM" if r["peak_mem_mb"] is None else f"{r['peak_mem_mb']:.1f} (b{r['peak_batch']})"
        row = [r["arch"], mb, f"{r['params'] / 1e6:.2f}", f"{r['params_mb']:.1f}", peak]
        for key in ("valid_seconds",) + (("valid_cpu_seconds",) if cpu else ()):
            row.append("-" if r.get(key) is None else f"{r[key]:.3f}")
        lines.append(row)
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    text = "\n".join("  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths))) for row in lines)
    rows = result["rows"]
    method = rows[0]["max_batch_method"] if rows else ""
    examples = max((r["valid_examples"] for r in rows), default=0)
    data = result["data"]
    return (f"{text}\n{result['device']}, {result['dtype']}, {result['tokens']} source tokens "
            f"(paragraphs of {PARAGRAPH_TOKENS}) + {result['target_tokens']} target, "
            f"{result['layers']}+{result['layers']} layers, d {result['embed_dim']}; max batch: "
            f"{method} under {result['budget_gib']:g} GiB ('+': stopped at the search limit); "
            f"peak: one Adam step at batch b, model and optimizer state included; valid: "
            f"seconds of the loss forward over {examples} "
            + ("synthetic examples" if data is None else f"valid examples of {data}"))


def log_stderr(message: str) -> None:
    print(f"efficiency: {message}", file=sys.stderr, flush=True)
