"""Safe checkpoint loading with one-line errors: ``fairseq.checkpoint_utils`` reads checkpoints
through a thin proxy of ``torch`` whose ``load`` is :func:`fairseq_hier.safe_loading.load`, and its
``load_checkpoint_to_cpu`` / ``load_model_ensemble_and_task`` name the file and what it holds when
it is not a fairseq checkpoint, belongs to another task or does not fit the model built. Why and
how: docs/fairseq-fixes.md, section "Safe checkpoint loading". Imports ``safe_loading``,
``errors``; torch, fairseq.
"""

import contextvars
import re
import types
from typing import Optional

import torch

from .. import safe_loading
from ..errors import HierError

_MARK = "_fairseq_hier_checkpoint_torch"


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
    """fairseq's checkpoint loading, safe and with one-line errors (docs/fairseq-fixes.md):
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
