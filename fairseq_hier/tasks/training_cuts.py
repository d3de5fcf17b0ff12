"""Decoding takes the training cuts from the checkpoint: the task options that shape the data
(paragraph cuts, source layout, chunk limit, the extra inputs a model reads), left at their
defaults on a decoding command line, are the checkpoint's.

Each task names its options once, as :attr:`TrainingCuts.checkpoint_options`. When a checkpoint
is decoded, for each of them:

- left at its dataclass default on the command line, with another value in the checkpoint: the
  checkpoint's value is set on the task's config before any split or raw input is cut, so the
  cuts, the checks and the task's ``max_positions()`` agree; one info line lists what was taken,
  ``taking the training cuts from the checkpoint: --max-paragraphs 20 --max-paragraph-tokens 50``;
- given on the command line with another value than the checkpoint's: kept, and one warning
  line per option, ``decoding with --max-paragraphs 10, the model was trained with 20``.

A value given equal to the default cannot be told from a value not given: the checkpoint's is
taken. The options of :attr:`TrainingCuts.checkpoint_checked` (the languages, which choose the
dictionaries when the task is set up, before any checkpoint is read) are never taken; a
difference is a warning. Decoding options (attention alignment, blocking,
``--print-sentence-attention``) and ``data`` are never taken; a checkpoint of another task gives
nothing.

The checkpoint's values reach the task through two fairseq hooks:

1. the task's checkpoint state: every task records its values there when it is set up
   (:meth:`TrainingCuts.remember_training_cuts`), fairseq saves that state in each checkpoint
   (``task_state``), and ``checkpoint_utils.load_model_ensemble`` hands it to the task's
   ``load_state_dict`` before the model is built: in ``fairseq-generate`` and in
   ``fairseq-interactive``, whose raw lines are then cut as the training data was;
2. ``load_dataset(split, task_cfg=...)``: ``fairseq-generate`` passes the checkpoint's task
   config when it loads the split to decode, so a checkpoint whose state does not hold the
   values is still decoded with its cuts; the options that decide how the model is built
   (``--dependency-parse``, ``--paragraph-graph``) must then be given, and
   ``fairseq-interactive`` needs every cut on its command line.

A task set up from the checkpoint's own config (``setup_task(..., from_checkpoint=True)``:
``fairseq-validate``, ``HierSummarizer``, the library's loaders) already decodes with the
checkpoint's values and deliberate overrides: it takes nothing, and warns about an override
that differs from the training value.
"""

import dataclasses
import logging
import shlex
from enum import Enum
from typing import Dict, List, Optional, Sequence, Tuple

from fairseq.tasks import TASK_DATACLASS_REGISTRY, TASK_REGISTRY
from omegaconf import DictConfig, open_dict

from .checks import flag

logger = logging.getLogger(__name__)

STATE_KEY = "training_cuts"  # key in the task's checkpoint state: {"task": NAME, "options": {...}}
_ABSENT = object()


def set_option(cfg, name: str, value) -> None:
    """Set an option of a config: a dataclass, a Namespace or an omegaconf DictConfig (struct
    mode lets an absent key in only inside ``open_dict``)."""
    if isinstance(cfg, DictConfig):
        with open_dict(cfg):
            cfg[name] = value
    else:
        setattr(cfg, name, value)


def _plain(value):
    """A config value as checkpoints keep it: a choice (fairseq's ``StrEnum``) as its string."""
    return value.value if isinstance(value, Enum) else value


def _shown(value) -> str:
    return shlex.quote(str(_plain(value)))


def difference(name: str, decoding, trained) -> str:
    """``decoding with --max-paragraphs 10, the model was trained with 20``."""
    option = flag(name)
    now = (f"decoding without {option}" if decoding is None
           else f"decoding with {option} {_shown(decoding)}")
    then = "without it" if trained is None else f"with {_shown(trained)}"
    return f"{now}, the model was trained {then}"


class TrainingCuts:
    """Mixin of our tasks (before fairseq's task class among the bases): the options that shape
    the data are taken from the checkpoint being decoded (see the module docstring). A task
    calls :meth:`remember_training_cuts` when it is set up and :meth:`take_training_cuts` with
    ``load_dataset``'s ``task_cfg``; it overrides :meth:`training_cuts_taken` when it derives
    state from those options."""

    #: options that shape the data: taken from the checkpoint when left at their default
    checkpoint_options: Tuple[str, ...] = ()
    #: options compared with the checkpoint's but never taken (a difference is a warning)
    checkpoint_checked: Tuple[str, ...] = ()
    #: why the checked options are not taken (ends their warning)
    checked_reason = ("pass them: they choose the dictionaries when the task is set up, before "
                      "the checkpoint is read")

    def remember_training_cuts(self, from_checkpoint: bool = False) -> None:
        """Note the values this task was set up with (the command line's) and put them into its
        checkpoint state; ``from_checkpoint``: the task's config is a checkpoint's own."""
        self._cuts_given = {name: _plain(getattr(self.cfg, name, None))
                            for name in self.checkpoint_options + self.checkpoint_checked}
        self._cuts_from_checkpoint = from_checkpoint
        self._cuts_reported = set()
        self.state.merge_state_dict({STATE_KEY: {"task": self._task_name(),
                                                 "options": dict(self._cuts_given)}})

    def load_state_dict(self, state_dict):
        """fairseq's hook, called with a checkpoint's task state before its model is built."""
        super().load_state_dict(state_dict)
        saved = (state_dict or {}).get(STATE_KEY)
        if isinstance(saved, dict) and isinstance(saved.get("options"), dict):
            self._take(saved.get("task"), saved["options"])

    def take_training_cuts(self, task_cfg) -> None:
        """The rule of the module docstring with ``task_cfg``, a checkpoint's task config
        (``load_dataset``'s keyword; None: nothing to take)."""
        if task_cfg is None:
            return
        name = getattr(task_cfg, "_name", None) or getattr(task_cfg, "task", None)
        values = {}
        for option in self.checkpoint_options + self.checkpoint_checked:
            value = getattr(task_cfg, option, _ABSENT)
            if value is not _ABSENT:
                values[option] = _plain(value)
        self._take(name, values)

    def training_cuts_taken(self, names: Sequence[str]) -> None:
        """Called after options ``names`` were set from the checkpoint (a task re-derives
        what it computed from them)."""

    # ------------------------------------------------------------------ the rule
    def _take(self, task_name: Optional[str], saved: Dict[str, object]) -> None:
        if task_name != self._task_name() or not hasattr(self, "_cuts_given"):
            return
        defaults = self._defaults()
        taken: List[str] = []
        for name in self.checkpoint_options + self.checkpoint_checked:
            if name not in saved:
                continue
            given, trained = self._cuts_given[name], saved[name]
            if given == trained:
                continue
            if (name in self.checkpoint_checked or self._cuts_from_checkpoint
                    or given != defaults.get(name, _ABSENT)):
                why = f" ({self.checked_reason})" if name in self.checkpoint_checked else ""
                self._report(logger.warning, difference(name, given, trained) + why)
            elif _plain(getattr(self.cfg, name, None)) != trained:
                set_option(self.cfg, name, trained)
                taken.append(name)
        if taken:
            self.training_cuts_taken(taken)
            self._report(logger.info, "taking the training cuts from the checkpoint: " + " ".join(
                f"{flag(name)} {_shown(saved[name])}" for name in taken))

    def _report(self, log, message: str) -> None:
        if message not in self._cuts_reported:  # both hooks may see the same checkpoint
            self._cuts_reported.add(message)
            log(message)

    def _task_name(self) -> Optional[str]:
        return next((name for name, cls in TASK_REGISTRY.items() if cls is type(self)), None)

    def _defaults(self) -> Dict[str, object]:
        """The task dataclass's default of each option."""
        config = TASK_DATACLASS_REGISTRY.get(self._task_name())
        if config is None:
            return {}
        return {f.name: _plain(f.default) for f in dataclasses.fields(config)
                if f.default is not dataclasses.MISSING}
