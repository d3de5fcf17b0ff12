"""Decoding takes the training cuts from the checkpoint: the task options that shape the data
(paragraph cuts, source layout, chunk limit, the extra inputs a model reads), left at their
defaults on a decoding command line, are the checkpoint's.

Which options, how a default is told from a given value, and what is logged: docs/models.md,
section fairseq_hier.tasks.training_cuts.
Imports ``tasks.checks``, ``errors``; fairseq, omegaconf.
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
