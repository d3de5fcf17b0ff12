"""Checkpoints are loaded without running code, and a file that is not a checkpoint is one line.

Every checkpoint is read with torch's safe unpickler plus the allow list of
:func:`checkpoint_globals`; another global is :class:`UnsafeCheckpoint`, an unreadable file or a
pickle that is no checkpoint :class:`UnreadableCheckpoint`; :func:`trusting` is the way around
(``--trust-checkpoint``, ``FAIRSEQ_HIER_TRUST_CHECKPOINT=1``). Why and how: docs/inference.md,
section fairseq_hier.safe_loading.
Imports ``fairseq_hier.errors``; torch, numpy, omegaconf and fairseq inside functions.
"""

import argparse
import collections
import contextlib
import contextvars
import functools
import logging
import os
import re
import typing
from collections.abc import Mapping
from typing import Iterator, List, Optional

from .errors import HierError

# torch is imported by the functions that load: the commands and the summarizer import this
# module (trusting) at start-up, before they need torch

logger = logging.getLogger(__name__)

#: environment variable: ``1`` loads every checkpoint as a trusted file (fairseq's own commands)
TRUST_ENV = "FAIRSEQ_HIER_TRUST_CHECKPOINT"
TRUST_HINT = (f"pass --trust-checkpoint ({TRUST_ENV}=1 for fairseq's commands, "
              f"trust_checkpoint=True in the Python API) if you trust the file")

_TRUSTED = contextvars.ContextVar("fairseq_hier_trusted_checkpoints", default=False)


class UnsafeCheckpoint(HierError):
    """A checkpoint that would call a function or build a class outside the allow list."""


class UnreadableCheckpoint(HierError):
    """A file that is not a (fairseq) checkpoint: truncated, corrupt, or something else."""


# ----------------------------------------------------------------------------- the allow list
def _numpy_globals() -> list:
    """numpy scalars (``best``, ``val_loss`` of metrics computed with numpy), dtypes and arrays,
    under the names numpy 1.x (``numpy.core``) and 2.x (``numpy._core``) pickle them with."""
    import numpy as np

    try:  # numpy >= 2
        multiarray = np._core.multiarray
    except AttributeError:  # pragma: no cover - numpy 1.x
        multiarray = np.core.multiarray
    out = [np.dtype, np.ndarray]
    for package in ("numpy.core", "numpy._core"):
        out += [(multiarray.scalar, f"{package}.multiarray.scalar"),
                (multiarray._reconstruct, f"{package}.multiarray._reconstruct")]
    dtypes = getattr(np, "dtypes", None)  # numpy >= 1.25: one class per dtype
    if dtypes is not None:
        out += [getattr(dtypes, name) for name in dir(dtypes) if name.endswith("DType")
                and isinstance(getattr(dtypes, name), type)]
    return out


def _omegaconf_globals() -> list:
    """omegaconf's containers, their metadata and value nodes: fairseq's ``cfg``, as
    ``load_checkpoint_to_cpu`` rebuilds it (and rank 0 broadcasts it to the other ranks), and
    as some fairseq versions saved it."""
    from omegaconf import DictConfig, ListConfig, nodes
    from omegaconf.base import ContainerMetadata, Metadata, Node

    node_classes = [c for c in vars(nodes).values() if isinstance(c, type)
                    and issubclass(c, Node) and c.__module__ == nodes.__name__]
    return [DictConfig, ListConfig, ContainerMetadata, Metadata, *node_classes,
            # the types omegaconf records for a container (key_type, element_type, flags)
            typing.Any, dict, list, int]


def _fairseq_globals() -> list:
    """fairseq's meters (a checkpoint's training statistics, in versions that pickled them)."""
    from fairseq.logging import meters

    return [c for c in vars(meters).values() if isinstance(c, type)
            and c.__module__ == meters.__name__ and issubclass(c, (meters.Meter, dict))]


@functools.lru_cache(maxsize=1)
def checkpoint_globals() -> tuple:
    """Every global, beyond torch's own, that a checkpoint may hold: ``argparse.Namespace``
    (``state["args"]`` of every fairseq before 0.10 and of legacy-args runs, and values inside
    ``cfg``), ``collections.defaultdict``, omegaconf, numpy and fairseq's meters. Each one
    rebuilds data only: none runs code chosen by the file. (fairseq's enums, the
    ``ChoiceEnum`` classes, cannot be in a pickle: they are all named ``Choices``, which their
    module does not define, so fairseq stores their values as strings.)

    Built on the first load, not at import: :mod:`fairseq_hier.compat` imports this module
    while fairseq is importing the plugin, so the helpers import fairseq, omegaconf and numpy
    themselves."""
    return tuple([argparse.Namespace, collections.OrderedDict, collections.defaultdict,
                  *_omegaconf_globals(), *_numpy_globals(), *_fairseq_globals()])


def _name_of(entry) -> str:
    if isinstance(entry, tuple):
        return entry[1]
    return f"{entry.__module__}.{entry.__qualname__}"


def allowed_names() -> List[str]:
    """The allow list as the names a pickle gives them (``argparse.Namespace`` ...)."""
    return sorted({_name_of(g) for g in checkpoint_globals()})


@contextlib.contextmanager
def _allowed_globals(extra=()):
    """torch's safe unpickler accepts :func:`checkpoint_globals` and ``extra`` while active (and
    nothing that was not allowed before stays allowed afterwards)."""
    import torch

    already = set(map(_name_of, torch.serialization.get_safe_globals()))
    added = [g for g in (*checkpoint_globals(), *extra) if _name_of(g) not in already]
    with torch.serialization.safe_globals(added):
        yield


# -------------------------------------------------------------------------------------- trust
def trusted() -> bool:
    """Whether checkpoints are loaded as trusted files here: inside :func:`trusting`, or with
    ``FAIRSEQ_HIER_TRUST_CHECKPOINT=1`` in the environment."""
    return _TRUSTED.get() or os.environ.get(TRUST_ENV, "").strip() == "1"


@contextlib.contextmanager
def trusting(trust: bool = True) -> Iterator[None]:
    """Checkpoints loaded inside the block are trusted files when ``trust`` is true (a command's
    ``--trust-checkpoint``, the API's ``trust_checkpoint=True``); ``trust=False`` changes
    nothing. Scoped to the block and to this thread / task (a context variable)."""
    token = _TRUSTED.set(_TRUSTED.get() or bool(trust))
    try:
        yield
    finally:
        _TRUSTED.reset(token)


# ------------------------------------------------------------------------------------ loading
def describe_source(f) -> str:
    """The file a ``torch.load`` argument names, for messages."""
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.fsdecode(f)
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else "<in memory>"


_GLOBAL = re.compile(r"GLOBAL ([\w.]+)")
_FUNCTION = re.compile(r"unrecognized function (.+?)(?: which belongs to .*)?$", re.M)
_CLASS = re.compile(r"(?:Can only build|Can only create new object for).* but got (.+)$", re.M)


def _first_sentence(text: str) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return re.split(r"(?<=[a-z0-9)'\]])\. ", line)[0].rstrip(".")


def _header(f) -> Optional[bytes]:
    """The first bytes of the file ``f`` names (or of the open file, rewound), if readable."""
    try:
        if isinstance(f, (str, bytes, os.PathLike)):
            with open(f, "rb") as opened:
                return opened.read(8)
        f.seek(0)
        return f.read(8)
    except (OSError, AttributeError, ValueError):
        return None


def _refusal(source: str, error: Exception, header: Optional[bytes] = None) -> HierError:
    """torch.load's error on ``source`` (whose file starts with ``header``) -> the one-line
    error fairseq-hier raises."""
    text = str(error)
    unsafe = _GLOBAL.search(text) or _FUNCTION.search(text) or _CLASS.search(text)
    if unsafe is not None and "Unsupported operand" not in text:
        what = unsafe.group(1).strip()
        kind = "the global" if unsafe.re is _GLOBAL else "the object"
        return UnsafeCheckpoint(
            f"checkpoint {source} holds {kind} '{what}', which fairseq-hier does not load without "
            f"--trust-checkpoint (it could run code); {TRUST_HINT}")
    if isinstance(error, EOFError) or header == b"":
        reason = "it ends before its first object (an empty or truncated file)"
    elif isinstance(error, OSError):
        reason = (f"reading it failed ({error.strerror or error}), as it does on a file cut "
                  f"short")
    elif header is not None and not header.startswith((b"PK\x03\x04", b"\x80")):
        reason = (f"it starts with {header!r}, neither a zip archive (torch.save since torch "
                  f"1.6) nor a pickle (older torch)")
    elif "WeightsUnpickler error" in text or "Unsupported operand" in text:
        match = re.search(r"WeightsUnpickler error:\s*(.+?)\s*(?:\n|$)", text)
        reason = (match.group(1) if match else "") or _first_sentence(text)
        reason = f"not a pickle torch can read ({reason})"
    else:
        reason = f"{type(error).__name__}: {_first_sentence(text)}" if text else \
            type(error).__name__
    return UnreadableCheckpoint(f"checkpoint {source} is not a readable PyTorch checkpoint "
                                f"(corrupt, truncated or another kind of file): {reason}")


def load(f, *args, source: Optional[str] = None, extra_globals=(), **kwargs):
    """``torch.load(f, ...)`` of a checkpoint: with torch's safe unpickler and
    :func:`checkpoint_globals` (and ``extra_globals``), or as a trusted file (see
    :func:`trusted`). Raises :class:`UnsafeCheckpoint` or :class:`UnreadableCheckpoint` (one line
    naming ``source``, by default the file), also for the ``OSError`` that torch raises on some
    truncated files (``EINVAL`` from a seek past the end); an ``OSError`` of opening the file
    (no such file, permission, a folder) passes as it is."""
    import torch

    source = source or describe_source(f)
    kwargs.pop("weights_only", None)  # ours to choose
    try:
        if trusted():
            logger.warning(f"loading {source} as a trusted checkpoint (--trust-checkpoint or "
                           f"{TRUST_ENV}=1): torch.load(weights_only=False) runs any code "
                           f"pickled in it")
            return torch.load(f, *args, weights_only=False, **kwargs)
        with _allowed_globals(extra_globals):
            return torch.load(f, *args, weights_only=True, **kwargs)
    except OSError as e:
        if e.filename is not None:  # opening the file failed: the OSError names it
            raise
        raise _refusal(source, e, _header(f)) from None
    except Exception as e:  # noqa: B902  (whatever a damaged file makes the unpickler raise)
        raise _refusal(source, e, _header(f)) from None


def load_broadcast(f, *args, **kwargs):
    """The ``torch.load`` of ``fairseq.distributed.utils`` (ranks > 0 rebuilding what rank 0
    broadcast: a checkpoint it loaded, its tensors replaced by fairseq's placeholders)."""
    from fairseq.distributed.utils import _TensorPlaceholder

    return load(f, *args, source="broadcast by rank 0", extra_globals=(_TensorPlaceholder,),
                **kwargs)


# ------------------------------------------------------------------ what a checkpoint holds
def _get(obj, key):
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def checkpoint_task_and_arch(state: Mapping):
    """(task name, architecture name) a fairseq checkpoint was trained with (None if unknown):
    from ``args`` (Namespace era) or ``cfg``."""
    args = state.get("args")
    if args is not None:
        return getattr(args, "task", None), getattr(args, "arch", None)
    cfg = state.get("cfg")
    task, model = _get(cfg, "task"), _get(cfg, "model")
    return (_get(task, "_name") or _get(task, "task"),
            _get(model, "_name") or _get(model, "arch"))


def describe_checkpoint(state: Mapping) -> str:
    """``a pht model trained with task hierarchical_summarization`` (what a message says a
    checkpoint holds)."""
    task, arch = checkpoint_task_and_arch(state)
    return f"a {arch or 'model of unknown architecture'} model trained with task {task or '?'}"


def check_fairseq_checkpoint(state, source: str) -> None:
    """Refuse what fairseq's loader would die on with a KeyError or TypeError: an object that
    is not a dict holding the weights (``model``). (``cfg`` / ``args``, the options, are
    needed only to build a model; fairseq-train's ``--restore-file`` does without.)"""
    import torch

    where = f"checkpoint {source} is not a fairseq checkpoint"
    expected = "a dict with 'model' and 'cfg' (or 'args')"
    if not isinstance(state, Mapping):
        raise UnreadableCheckpoint(f"{where}: it holds a {type(state).__name__}, not {expected}")
    if state and all(torch.is_tensor(v) for v in state.values()):
        raise UnreadableCheckpoint(f"{where}: it holds a bare state dict of {len(state)} tensors "
                                   f"(e.g. a Hugging Face pytorch_model.bin: pass its directory), "
                                   f"not {expected}")
    if not isinstance(state.get("model"), Mapping):
        keys = sorted(map(str, state.keys()))
        shown = ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else "") if keys else "none"
        raise UnreadableCheckpoint(f"{where}: it has no 'model' (its keys: {shown}), not "
                                   f"{expected}")


# ------------------------------------------------------------------ the task a command expects
_EXPECTED_TASK = contextvars.ContextVar("fairseq_hier_expected_task", default=None)


def expected_task() -> Optional[str]:
    """The task the checkpoints loaded here must have been trained with (None: any)."""
    return _EXPECTED_TASK.get()


@contextlib.contextmanager
def expecting_task(task: Optional[str]) -> Iterator[None]:
    """Checkpoints loaded inside the block must have been trained with ``task`` (a registered
    task name; None checks nothing): another is refused in one line, before a model is built
    (:func:`check_task`)."""
    token = _EXPECTED_TASK.set(task)
    try:
        yield
    finally:
        _EXPECTED_TASK.reset(token)


def check_task(state: Mapping, source: str, task: str) -> None:
    """Refuse a checkpoint trained with a task other than ``task``, naming both."""
    saved, _ = checkpoint_task_and_arch(state)
    if saved is not None and saved != task:
        raise HierError(f"checkpoint {source} holds {describe_checkpoint(state)}, not a model of "
                        f"task {task} (what this command runs)")
