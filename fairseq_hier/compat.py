"""The few fixes fairseq needs on modern torch / Python, in one place.

Checkpoint loading (:func:`patch_checkpoint_loading`). fairseq 0.12 reads checkpoints with a
plain ``torch.load``. On torch >= 2.6 (``weights_only=True`` by default) that refuses fairseq's own
checkpoints, which hold an ``argparse.Namespace`` (``state["args"]``), omegaconf containers and
numpy scalars (``Unsupported global: argparse.Namespace``); upstream fairseq answered with
``weights_only=False``, which runs any code pickled in a downloaded checkpoint. Here the module
``fairseq.checkpoint_utils`` (``load_checkpoint_to_cpu``, ``load_ema_from_checkpoint``) sees a
thin proxy of ``torch`` whose ``load`` is :func:`fairseq_hier.safe_loading.load`: torch's safe
unpickler with the few data classes those checkpoints hold allowed for that call only. A
checkpoint holding any other global is refused in one line naming the global and the file;
``--trust-checkpoint`` (our commands), ``trust_checkpoint=True`` (the API) or
``FAIRSEQ_HIER_TRUST_CHECKPOINT=1`` (fairseq's commands) load it the old way, with a warning.
Every other ``torch.load`` in the process keeps torch's own default; no process-wide switch.

The same loading path turns the failures of a wrong file into one line naming it, for every
command (fairseq-generate, -interactive, -train --restore-file, our commands, the API): a
truncated, corrupt, random-bytes or empty file, a pickle that is not a fairseq checkpoint (a
bare state dict), a checkpoint of another task than the command's (checked in
``load_checkpoint_to_cpu`` before a model is built, when one of the two tasks is ours or the
command asked for one with :func:`fairseq_hier.safe_loading.expecting_task`), and weights that
do not fit the model built (``load_model_ensemble_and_task``: the size mismatch of a model
trained on another dictionary).

Multi-process training: with more than one data-parallel worker, ``Trainer.load_checkpoint``
(resume, ``--restore-file``) loads the checkpoint on rank 0 only and broadcasts it with
``fairseq.distributed.utils.broadcast_object``, whose receiving ranks rebuild it with a plain
``torch.load`` (rank 1 died with ``UnpicklingError: Weights only load failed``).
:func:`patch_distributed_checkpoint_broadcast` gives ``fairseq.distributed.utils`` the safe loader
too; the bytes it loads are the checkpoint rank 0 read safely and pickled itself (its omegaconf
``cfg`` is on the allow list).

fairseq's CPU n-gram blocking (``--no-repeat-ngram-size``, the papers' trigram blocking) has been
a no-op since fairseq commit 8ca4813 (facebookresearch/fairseq#5206, still open): it compares the
last n-1 entries of the whole pre-allocated token buffer (padding) instead of the last n-1
generated tokens. :func:`patch_ngram_blocking` replaces that one method with a vectorised,
correct version; the CUDA extension path is untouched.

``--bf16``: fairseq 0.12's ``options.parse_args_and_arch`` sets ``args.tpu = True`` whenever
``--bf16`` is given, so ``fairseq-train --bf16`` dies in ``utils.get_tpu_device`` (no torch_xla)
on CUDA and CPU alike, and ``fairseq-generate`` / ``fairseq-validate`` / ``fairseq-interactive
--bf16`` ignore the flag (they only know ``--fp16``) and decode in float32.
:func:`patch_bf16_without_tpu` keeps TPU mode for an explicit ``--tpu`` only (the Trainer then
casts model and float inputs to bfloat16 on the chosen device, as it always did), and makes those
three inference commands load their models in bfloat16. Nothing changes without ``--bf16``.

fairseq-fixed's compiled ``batch_by_size`` (Cython 3 build) drops the last partial batch whenever
``--required-batch-size-multiple`` > 1 and the number of examples is not a multiple of it (e.g.
20 examples, batch 8, multiple 8 -> 16 batched): examples vanish silently from training,
validation and fairseq-generate. :func:`patch_batch_by_size` checks the result and, when
examples are missing, rebatches with a plain-Python version of fairseq's own algorithm.

Data-parallel training on CPU (gloo), as our tests and CPU-only machines run it: fairseq wraps
the model for ``--ddp-backend pytorch_ddp`` (alias ``c10d``, the default) in torch's
``DistributedDataParallel(module, device_ids=[device_id], output_device=device_id)``, which torch
rejects for a module on the CPU ("device_ids ... only work with ... GPU modules"), so only
``--ddp-backend legacy_ddp`` (fairseq's own all-reduce, blind to unused parameters) ran there.
:func:`patch_ddp_on_cpu` gives ``fairseq.models.distributed_fairseq_model`` a
``DistributedDataParallel`` that passes ``device_ids=None`` (torch's documented value for CPU
modules) when every parameter of the module is on the CPU; GPU modules are wrapped as before. And
under ``torchrun`` (``RANK`` / ``WORLD_SIZE`` / ``MASTER_*`` set), fairseq's
``_infer_torch_distributed_launch_init`` sets ``device_id = RANK % torch.cuda.device_count()``,
a ``ZeroDivisionError`` without a GPU: :func:`patch_torchrun_on_cpu` uses device 0 there (the
CPU; no CUDA device is ever selected) and leaves the GPU path alone.

fairseq-interactive's ``--input FILE``: fairseq meets a line that is not UTF-8 with a
``UnicodeDecodeError`` traceback; :func:`patch_interactive_input` reads the file first and names
the file and the line.

Pretrained directories (``--finetune-from-model DIR`` / ``--restore-file DIR``, e.g. a Hugging Face
BART directory): fairseq reads checkpoint *files* only. ``checkpoint_utils.load_checkpoint`` passes
a directory on (``PathManager.exists`` holds), but ``Trainer.load_checkpoint`` then finds that
``PathManager.isfile`` does not, logs "No existing checkpoint found" and trains from random
weights. :func:`patch_directory_checkpoints` wraps ``Trainer.load_checkpoint``, and only for a
path that is a directory: the model reads it through its own hook
``checkpoint_from_directory(path) -> checkpoint dict`` (``LongBARTModel`` and ``HATModel``, see
``fairseq_hier/models/hat.py``), and for the duration of that one call the ``fairseq.trainer``
module sees a ``PathManager`` for which that directory is a file and a ``checkpoint_utils`` whose
``load_checkpoint_to_cpu`` returns the model's dict for it (called on the ranks that load, as for
a file). Everything else of the load is fairseq's own code: ``load_state_dict`` (so the model's
``upgrade_state_dict_named``), the broadcast to other ranks, the reset flags, the log lines. A
directory given to a model without the hook is an error of one line instead of a silent start
from random weights. Files, and every other module, are untouched.
"""

import contextlib
import contextvars
import importlib
import logging
import os
import re
import sys
import types
from typing import Optional

import numpy as np

import torch

from . import safe_loading
from .errors import HierError
from .io import iter_lines

_MARK = "_fairseq_hier_checkpoint_torch"
logger = logging.getLogger(__name__)


class _CheckpointTorch(types.ModuleType):
    """``torch`` as seen by one of fairseq's modules: identical, except ``load`` (the safe
    checkpoint loader of :mod:`fairseq_hier.safe_loading`)."""

    def __init__(self, load):
        super().__init__("torch")
        setattr(self, _MARK, True)
        self.load = load

    def __getattr__(self, name):
        return getattr(torch, name)


def _load_checkpoint_file(f, *args, **kwargs):
    """The ``torch.load`` of ``fairseq.checkpoint_utils`` (``load_checkpoint_to_cpu``,
    ``load_ema_from_checkpoint``): safe, and the result a fairseq checkpoint."""
    state = safe_loading.load(f, *args, **kwargs)
    safe_loading.check_fairseq_checkpoint(state, safe_loading.describe_source(f))
    return state


# the task of the command loading a checkpoint (load_model_ensemble_and_task's ``task``), and
# the checkpoint it loaded last (file, what it holds): for the one-line errors of a mismatch
_COMMAND_TASK = contextvars.ContextVar("fairseq_hier_command_task", default=None)
_LAST_LOADED = contextvars.ContextVar("fairseq_hier_last_checkpoint", default=None)


def _registered_task_name(task) -> Optional[str]:
    from fairseq.tasks import TASK_REGISTRY

    return next((name for name, cls in TASK_REGISTRY.items() if cls is type(task)), None)


def _is_ours(task_name: Optional[str]) -> bool:
    from fairseq.tasks import TASK_REGISTRY

    cls = TASK_REGISTRY.get(task_name) if task_name else None
    return cls is not None and cls.__module__.split(".")[0] == __name__.split(".")[0]


def _check_loaded_task(state, source: str) -> None:
    """A checkpoint of another task than the one expected (:func:`safe_loading.expecting_task`)
    or, when one of the two is a task of ours, than the command's: one line, before a model is
    built (our tasks read their own source layouts, so a model of another task cannot decode
    them)."""
    expected = safe_loading.expected_task()
    if expected is None:
        command = _COMMAND_TASK.get()
        saved, _ = safe_loading.checkpoint_task_and_arch(state)
        if command is not None and (_is_ours(command) or _is_ours(saved)):
            expected = command
    if expected is not None:
        safe_loading.check_task(state, source, expected)
    _LAST_LOADED.set((source, safe_loading.describe_checkpoint(state)))


_SIZE_MISMATCH = re.compile(r"size mismatch for (\S+): copying a param with shape "
                            r"torch\.Size\((\[.*?\])\) from checkpoint, the shape in current "
                            r"model is torch\.Size\((\[.*?\])\)")


def _weights_mismatch(error: RuntimeError, source: str, what: str) -> HierError:
    """torch's ``Error(s) in loading state_dict`` (a size mismatch, missing or unexpected
    weights) -> one line naming the checkpoint, what it holds and the first problem."""
    problems = [line.strip() for line in str(error).splitlines()[1:] if line.strip()]
    first = problems[0] if problems else str(error).splitlines()[0]
    size = _SIZE_MISMATCH.match(first)
    if size is not None:
        first = (f"{size.group(1)} is {size.group(2)} in the checkpoint, {size.group(3)} in the "
                 f"model built here")
    elif len(first) > 160:
        first = first[:157] + "..."
    more = f", and {len(problems) - 1} more" if len(problems) > 1 else ""
    return HierError(f"checkpoint {source} holds {what} that does not fit the model built here "
                     f"({first}{more}): was it trained on other data (another dictionary) or with "
                     f"other model options?")


def patch_checkpoint_loading() -> bool:
    """fairseq's checkpoint loading, safe and with one-line errors (see the module docstring):
    ``fairseq.checkpoint_utils`` sees a ``torch`` whose ``load`` is the safe loader, and its
    ``load_checkpoint_to_cpu`` / ``load_model_ensemble_and_task`` check what a checkpoint holds
    against what the command expects. Idempotent. Returns True when active."""
    from fairseq import checkpoint_utils

    if not getattr(checkpoint_utils.torch, _MARK, False):
        checkpoint_utils.torch = _CheckpointTorch(_load_checkpoint_file)

    original_load = checkpoint_utils.load_checkpoint_to_cpu
    if not getattr(original_load, "_fairseq_hier", False):
        def load_checkpoint_to_cpu(path, *args, **kwargs):
            try:
                state = original_load(path, *args, **kwargs)
            except (KeyError, IndexError, TypeError, AttributeError) as e:
                # fairseq's upgrade of old layouts (_upgrade_state_dict) indexing what is absent
                raise safe_loading.UnreadableCheckpoint(
                    f"checkpoint {path} is not a fairseq checkpoint fairseq can read: "
                    f"{type(e).__name__}: {e}") from None
            _check_loaded_task(state, str(path))
            return state

        load_checkpoint_to_cpu._fairseq_hier = True
        load_checkpoint_to_cpu.__doc__ = original_load.__doc__
        checkpoint_utils.load_checkpoint_to_cpu = load_checkpoint_to_cpu

    original_ensemble = checkpoint_utils.load_model_ensemble_and_task
    if not getattr(original_ensemble, "_fairseq_hier", False):
        def load_model_ensemble_and_task(filenames, arg_overrides=None, task=None, strict=True,
                                         suffix="", num_shards=1, state=None):
            command = _registered_task_name(task) if task is not None else None
            token, last = _COMMAND_TASK.set(command), _LAST_LOADED.set(None)
            try:
                if state is not None:  # loaded by the caller: checked here
                    _check_loaded_task(state, str(filenames[0]))
                return original_ensemble(filenames, arg_overrides, task, strict, suffix,
                                         num_shards, state)
            except RuntimeError as e:
                source, what = _LAST_LOADED.get() or (str(filenames[0]), "a model")
                if str(e).startswith("Neither args nor cfg exist"):  # no options to build from
                    raise safe_loading.UnreadableCheckpoint(
                        f"checkpoint {source} is not a fairseq checkpoint: it has no 'cfg' (or "
                        f"'args'), the options its model is built from") from None
                if not str(e).startswith("Error(s) in loading state_dict"):
                    raise
                raise _weights_mismatch(e, source, what) from None
            finally:
                _LAST_LOADED.reset(last)
                _COMMAND_TASK.reset(token)

        load_model_ensemble_and_task._fairseq_hier = True
        load_model_ensemble_and_task.__doc__ = original_ensemble.__doc__
        checkpoint_utils.load_model_ensemble_and_task = load_model_ensemble_and_task
    return True


def patch_distributed_checkpoint_broadcast() -> bool:
    """Resuming a multi-process run: ``fairseq.distributed.utils`` (``_broadcast_object_slow``,
    which rebuilds the checkpoint rank 0 read on ranks > 0) sees the safe loader as
    ``torch.load``. Every other module keeps torch's own. Idempotent."""
    from fairseq.distributed import utils as distributed_utils

    if not getattr(distributed_utils.torch, _MARK, False):
        distributed_utils.torch = _CheckpointTorch(safe_loading.load_broadcast)
    return True


# ------------------------------------------------------------------------------------- --bf16
_INFERENCE_CLIS = ("fairseq_cli.generate", "fairseq_cli.validate", "fairseq_cli.interactive")
_ORIGINAL_MAINS = {}


def _tpu_requested(input_args) -> bool:
    """Whether ``--tpu`` itself is on the command line (fairseq's parser takes no abbreviations)."""
    argv = sys.argv[1:] if input_args is None else input_args
    return any(str(arg) == "--tpu" for arg in argv)


def _wants_bf16(cfg) -> bool:
    """``--bf16`` (or ``--memory-efficient-bf16``) without ``--fp16`` / ``--tpu``, from a
    FairseqConfig or an argparse Namespace."""
    common = getattr(cfg, "common", cfg)
    return (bool(getattr(common, "bf16", False) or getattr(common, "memory_efficient_bf16", False))
            and not getattr(common, "fp16", False) and not getattr(common, "tpu", False))


@contextlib.contextmanager
def _models_loaded_in_bf16():
    """While active, the models fairseq's ``checkpoint_utils.load_model_ensemble(_and_task)``
    return are cast to bfloat16 (``load_model_ensemble`` calls the other one)."""
    from fairseq import checkpoint_utils

    original = checkpoint_utils.load_model_ensemble_and_task

    def load_model_ensemble_and_task(*args, **kwargs):
        models, cfg, task = original(*args, **kwargs)
        models = [model.to(dtype=torch.bfloat16) for model in models]
        dtypes = sorted({str(p.dtype) for model in models for p in model.parameters()})
        logger.info(f"--bf16: {len(models)} model(s) loaded in {', '.join(dtypes)} "
                    f"(fairseq 0.12 would keep them in float32 outside TPU mode)")
        return models, cfg, task

    checkpoint_utils.load_model_ensemble_and_task = load_model_ensemble_and_task
    try:
        yield
    finally:
        checkpoint_utils.load_model_ensemble_and_task = original


class _Bf16InferenceMain:
    """``main`` of fairseq-generate / -validate / -interactive: with ``--bf16``, the models it
    loads are in bfloat16. A picklable object (fairseq's ``call_main`` may hand ``main`` to
    ``torch.multiprocessing.spawn``): it keeps the module name and finds the original there."""

    def __init__(self, module_name: str):
        self.module_name = module_name
        self._fairseq_hier = True

    def __call__(self, cfg, *args, **kwargs):
        main = _ORIGINAL_MAINS.get(self.module_name)
        if main is None:  # unpickled in a process where the patch was not applied
            main = importlib.import_module(self.module_name).main
        if not _wants_bf16(cfg):
            return main(cfg, *args, **kwargs)
        with _models_loaded_in_bf16():
            return main(cfg, *args, **kwargs)


def patch_bf16_without_tpu() -> None:
    """``--bf16`` means bfloat16 on the current device (CUDA or CPU), not TPU mode; ``--tpu``
    keeps its meaning. Scope: ``fairseq.options.parse_args_and_arch`` (fairseq's command-line
    parsing), the ``main`` of fairseq-generate, -validate and -interactive, and one log line of
    the Trainer (the dtype it trains in). Idempotent."""
    from fairseq import options

    if not getattr(options.parse_args_and_arch, "_fairseq_hier", False):
        original = options.parse_args_and_arch

        def parse_args_and_arch(parser, input_args=None, parse_known=False,
                                suppress_defaults=False, modify_parser=None):
            out = original(parser, input_args=input_args, parse_known=parse_known,
                           suppress_defaults=suppress_defaults, modify_parser=modify_parser)
            args = out[0] if parse_known else out
            # fairseq 0.12 sets args.tpu whenever --bf16 is given ("implies --tpu")
            if getattr(args, "bf16", False) and getattr(args, "tpu", False) \
                    and not _tpu_requested(input_args):
                args.tpu = False
            return out

        parse_args_and_arch._fairseq_hier = True
        parse_args_and_arch.__doc__ = original.__doc__
        options.parse_args_and_arch = parse_args_and_arch

    from fairseq.trainer import Trainer

    if not getattr(Trainer.__init__, "_fairseq_hier", False):
        trainer_init = Trainer.__init__

        def __init__(self, cfg, *args, **kwargs):
            trainer_init(self, cfg, *args, **kwargs)
            if cfg.common.bf16 and not self.tpu:  # say what the Trainer made of --bf16
                # self._model: the `model` property would build the DDP wrapper here
                dtypes = sorted({str(p.dtype) for p in self._model.parameters()})
                logger.info(f"--bf16: training in {', '.join(dtypes)} on {self.device} "
                            f"(not TPU mode; --tpu selects it)")

        __init__._fairseq_hier = True
        Trainer.__init__ = __init__

    for name in _INFERENCE_CLIS:
        module = importlib.import_module(name)
        if not getattr(module.main, "_fairseq_hier", False):
            _ORIGINAL_MAINS[name] = module.main
            module.main = _Bf16InferenceMain(name)


def _no_repeat_ngram(self, tokens, lprobs, bsz: int, beam_size: int, step: int):
    """Ban every token that would complete an n-gram already generated by that hypothesis.

    tokens: ``(bsz*beam) x (max_len+2)`` buffer, valid up to column ``step``; lprobs:
    ``(bsz*beam) x V``, updated in place.
    """
    n = self.no_repeat_ngram_size
    if step + 2 - n < 0:
        return lprobs
    generated = tokens[:, : step + 1]  # K x (step+1)
    prefixes = generated.unfold(1, n - 1, 1)  # K x (step+3-n) x (n-1): every (n-1)-gram
    # earlier (n-1)-grams equal to the last one, and the token that followed each of them
    match = (prefixes[:, :-1] == prefixes[:, -1:]).all(-1)  # K x (step+2-n)
    following = generated[:, n - 1 :]  # K x (step+2-n)
    banned = torch.zeros_like(lprobs).scatter_add_(1, following, match.to(lprobs.dtype)) > 0
    return lprobs.masked_fill_(banned, float("-inf"))


def patch_ngram_blocking() -> None:
    """Fix fairseq's CPU ``--no-repeat-ngram-size`` (fairseq#5206). Idempotent."""
    from fairseq.ngram_repeat_block import NGramRepeatBlock

    NGramRepeatBlock._no_repeat_ngram = _no_repeat_ngram


def _batch_by_size_python(indices, num_tokens, max_tokens, max_sentences, bsz_mult):
    """fairseq's batching algorithm (data_utils_fast.batch_by_size_*) in plain Python."""
    max_tokens = max_tokens if max_tokens and max_tokens > 0 else float("inf")
    max_sentences = max_sentences if max_sentences and max_sentences > 0 else float("inf")
    batches, batch, lens = [], [], []
    for idx, n in zip(indices.tolist(), num_tokens.tolist()):
        if n > max_tokens:
            raise HierError(f"sentence at index {idx} of size {n} exceeds max_tokens limit of {max_tokens}!")
        if batch and (len(batch) + 1 > max_sentences or max(max(lens), n) * (len(batch) + 1) > max_tokens):
            keep = max(bsz_mult * (len(batch) // bsz_mult), len(batch) % bsz_mult)
            batches.append(np.array(batch[:keep], dtype=np.int64))
            batch, lens = batch[keep:], lens[keep:]
        batch.append(idx)
        lens.append(n)
    if batch:
        batches.append(np.array(batch, dtype=np.int64))
    return batches


def patch_batch_by_size() -> None:
    """Keep every example when fairseq's compiled batching drops a partial batch. Idempotent."""
    from fairseq.data import data_utils

    original = data_utils.batch_by_size
    if getattr(original, "_fairseq_hier", False):
        return

    def batch_by_size(indices, num_tokens_fn, num_tokens_vec=None, max_tokens=None,
                      max_sentences=None, required_batch_size_multiple=1, fixed_shapes=None):
        batches = original(indices, num_tokens_fn, num_tokens_vec, max_tokens, max_sentences,
                           required_batch_size_multiple, fixed_shapes)
        indices = np.asarray(indices, dtype=np.int64)
        if fixed_shapes is not None or sum(len(b) for b in batches) == len(indices):
            return batches
        if num_tokens_vec is None:
            num_tokens_vec = np.fromiter((num_tokens_fn(i) for i in indices), np.int64, len(indices))
        else:
            num_tokens_vec = np.asarray(num_tokens_vec, dtype=np.int64)
        logger.info(f"fairseq's compiled batch_by_size kept {sum(len(b) for b in batches)} of "
                    f"{len(indices)} examples; rebatching in Python so none is dropped")
        return _batch_by_size_python(indices, num_tokens_vec, max_tokens, max_sentences,
                                     required_batch_size_multiple)

    batch_by_size._fairseq_hier = True
    data_utils.batch_by_size = batch_by_size


# ------------------------------------------------------------- data-parallel training on CPU
class _DeviceAwareDDP(torch.nn.parallel.DistributedDataParallel):
    """torch's DistributedDataParallel as fairseq builds it, except that a module whose
    parameters are all on the CPU gets ``device_ids=None`` / ``output_device=None`` (the only
    values torch accepts for CPU modules) instead of fairseq's ``[device_id]``."""

    _fairseq_hier = True

    def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
        if all(p.device.type == "cpu" for p in module.parameters()):
            device_ids = output_device = None
        super().__init__(module, device_ids, output_device, *args, **kwargs)


def patch_ddp_on_cpu() -> None:
    """``--ddp-backend pytorch_ddp`` / ``c10d`` on CPU workers (gloo): scope
    ``fairseq.models.distributed_fairseq_model`` only. Idempotent."""
    from fairseq.models import distributed_fairseq_model

    if not getattr(distributed_fairseq_model.DistributedDataParallel, "_fairseq_hier", False):
        distributed_fairseq_model.DistributedDataParallel = _DeviceAwareDDP


def patch_torchrun_on_cpu() -> None:
    """``torchrun ... fairseq-train --cpu`` without a GPU: device 0 instead of fairseq's
    ``RANK % torch.cuda.device_count()`` (a division by zero). Idempotent."""
    from fairseq.distributed import utils as distributed_utils

    original = distributed_utils._infer_torch_distributed_launch_init
    if getattr(original, "_fairseq_hier", False):
        return

    def _infer_torch_distributed_launch_init(cfg):
        if torch.cuda.device_count() > 0:
            return original(cfg)
        cfg.distributed_init_method = "env://"
        cfg.distributed_world_size = int(os.environ["WORLD_SIZE"])
        cfg.distributed_rank = int(os.environ["RANK"])
        cfg.device_id = 0  # the CPU: no CUDA device is selected for --cpu
        cfg.distributed_no_spawn = True  # the processes are torchrun's

    _infer_torch_distributed_launch_init._fairseq_hier = True
    distributed_utils._infer_torch_distributed_launch_init = _infer_torch_distributed_launch_init


# --------------------------------------------------------------- flattened --fp16 on the CPU
def patch_fp16_flat_on_cpu() -> None:
    """``fairseq-train --fp16`` on a machine without CUDA: fairseq 0.12's
    ``FP16Optimizer.build_fp32_params`` keys its flattened float32 master copy by
    ``torch.cuda.current_device()`` ("Torch not compiled with CUDA enabled" on a CPU-only torch),
    although the copy itself is made on the parameters' device (``params[0].new(...)``). The
    key must be what fairseq later groups the parameters by when it copies gradients and
    weights (``p.device.index``): for parameters that are all on the CPU that is ``None`` (a key
    0 would leave every gradient uncopied). GPU runs are untouched. Idempotent."""
    from unittest import mock

    from fairseq.optim import fp16_optimizer

    mixin = fp16_optimizer._FP16OptimizerMixin
    original = mixin.__dict__["build_fp32_params"].__func__
    if getattr(original, "_fairseq_hier", False):
        return

    def build_fp32_params(cls, args, params, flatten=True):
        if flatten and params and all(p.device.type == "cpu" for p in params):
            with mock.patch.object(torch.cuda, "current_device", lambda: params[0].device.index):
                return original(cls, args, params, flatten)
        return original(cls, args, params, flatten)

    build_fp32_params._fairseq_hier = True
    mixin.build_fp32_params = classmethod(build_fp32_params)


# ------------------------------------------------------------ pretrained checkpoint directories
class _ModuleProxy(types.ModuleType):
    """A module as seen by one other module: identical, except the attributes given."""

    def __init__(self, module, **overrides):
        super().__init__(module.__name__)
        self._module = module
        self.__dict__.update(overrides)

    def __getattr__(self, name):
        return getattr(self._module, name)


class _PathsWithDirectory:
    """fairseq's ``PathManager`` for which one directory is a file."""

    def __init__(self, paths, directory: str):
        self._paths, self._directory = paths, directory

    def __getattr__(self, name):
        return getattr(self._paths, name)

    def isfile(self, path) -> bool:
        return path == self._directory or self._paths.isfile(path)


@contextlib.contextmanager
def _directory_as_checkpoint(directory: str, read):
    """While active, ``fairseq.trainer`` loads ``directory`` as a checkpoint file holding
    ``read()`` (called only where the Trainer reads the file)."""
    from unittest import mock

    from fairseq import trainer as trainer_module

    checkpoint_utils = trainer_module.checkpoint_utils
    original = checkpoint_utils.load_checkpoint_to_cpu

    def load_checkpoint_to_cpu(path, *args, **kwargs):
        return read() if path == directory else original(path, *args, **kwargs)

    utils = _ModuleProxy(checkpoint_utils, load_checkpoint_to_cpu=load_checkpoint_to_cpu)
    paths = _PathsWithDirectory(trainer_module.PathManager, directory)
    with mock.patch.object(trainer_module, "checkpoint_utils", utils), \
            mock.patch.object(trainer_module, "PathManager", paths):
        yield


def patch_directory_checkpoints() -> None:
    """``Trainer.load_checkpoint`` of a directory reads it through the model's
    ``checkpoint_from_directory`` hook (see the module docstring). Idempotent."""
    from fairseq.trainer import Trainer

    original = Trainer.load_checkpoint
    if getattr(original, "_fairseq_hier", False):
        return

    def load_checkpoint(self, filename, *args, **kwargs):
        if not os.path.isdir(filename):
            return original(self, filename, *args, **kwargs)
        model = self.get_model()
        read = getattr(model, "checkpoint_from_directory", None)
        if read is None:
            raise HierError(f"{filename} is a directory, and {type(model).__name__} reads "
                            f"checkpoint files only (Hugging Face BART directories initialise "
                            f"the hat and long_bart models)")
        with _directory_as_checkpoint(filename, lambda: read(filename)):
            return original(self, filename, *args, **kwargs)

    load_checkpoint._fairseq_hier = True
    load_checkpoint.__doc__ = original.__doc__
    Trainer.load_checkpoint = load_checkpoint


# ------------------------------------------------------------- fairseq-interactive's --input
def patch_interactive_input() -> None:
    """fairseq-interactive reads ``--input`` through ``fileinput`` as UTF-8, and a line that is
    not dies in a ``UnicodeDecodeError`` traceback that names neither the file nor the line.
    ``fairseq_cli.interactive.buffered_read`` first reads the file through
    :func:`fairseq_hier.io.iter_lines`: a missing or non-UTF-8 file is one line naming the file
    and the line. Scope: that one function. Idempotent."""
    module = importlib.import_module("fairseq_cli.interactive")
    original = module.buffered_read
    if getattr(original, "_fairseq_hier", False):
        return

    def buffered_read(input, buffer_size):
        if input != "-":  # standard input: decoded as Python decodes sys.stdin
            for _ in iter_lines(input):  # raises at the first line that is not UTF-8
                pass
        yield from original(input, buffer_size)

    buffered_read._fairseq_hier = True
    module.buffered_read = buffered_read


def apply_all() -> None:
    """Every fix above, in one call (idempotent). Called when the plugin registers."""
    patch_interactive_input()
    patch_checkpoint_loading()
    patch_distributed_checkpoint_broadcast()
    patch_bf16_without_tpu()
    patch_ngram_blocking()
    patch_batch_by_size()
    patch_ddp_on_cpu()
    patch_torchrun_on_cpu()
    patch_fp16_flat_on_cpu()
    patch_directory_checkpoints()
