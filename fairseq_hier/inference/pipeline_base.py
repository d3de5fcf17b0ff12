"""What every inference pipeline shares: the raw example, the :class:`Pipeline` base class and
its registry, the errors a pipeline raises (bad input, a bad preprocessing record) and fairseq's
``--post-process`` of hypotheses. The pipelines (:mod:`fairseq_hier.inference.pipelines` and the
modules it imports) and the preprocessing record (:mod:`fairseq_hier.inference.record`) both
build on this module, which imports nothing of theirs.
"""

import collections
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Type

from ..data.preprocessing_record import RecordError
from ..errors import HierError


class InputError(HierError):
    """Bad raw input (one line naming the example or file)."""


@dataclass
class RawExample:
    """One input of the summarizer: raw documents (a document's paragraphs or sentences are its
    lines), an optional title, and where it came from (for error messages)."""

    documents: List[str]
    title: Optional[str] = None
    where: str = "example 1"


class Pipeline:
    """Base class: see the module docstring. Subclasses set ``name``, ``TASKS``, ``OPTIONS``
    (option -> (default, help)) and ``ASSETS``."""

    name = ""
    TASKS: Tuple[str, ...] = ()
    OPTIONS: Dict[str, Tuple[object, str]] = {}
    ASSETS: Tuple[str, ...] = ()

    def __init__(self, options: dict, assets):
        self.options = self.resolve_options(options)
        self.assets = assets
        self.counts = collections.Counter()  # what encode dropped or changed, logged by the API

    @classmethod
    def resolve_options(cls, options: dict) -> dict:
        """The record's options over the defaults."""
        return {**{k: default for k, (default, _) in cls.OPTIONS.items()}, **options}

    @classmethod
    def check_options(cls, options: dict, where: str) -> None:
        """Raise ``RecordError`` for a bad option value (called when a record is written/read)."""

    @classmethod
    def required_assets(cls, options: dict) -> Tuple[str, ...]:
        return cls.ASSETS

    def encode(self, example: RawExample) -> List[str]:
        raise NotImplementedError

    def decode(self, outputs: List[str]) -> str:
        raise NotImplementedError


PIPELINES: Dict[str, Type[Pipeline]] = {}


def register_pipeline(cls: Type[Pipeline]) -> Type[Pipeline]:
    if cls.name in PIPELINES:
        raise HierError(f"pipeline {cls.name!r} registered twice")
    PIPELINES[cls.name] = cls
    return cls


def choice(options: dict, key: str, choices: Tuple[str, ...], where: str) -> None:
    """Raise ``RecordError`` unless ``options[key]`` is one of ``choices``."""
    if options[key] not in choices:
        raise RecordError(f"{where}: option {key}={options[key]!r} is not one of "
                          f"{', '.join(choices)}")


def post_process(text: str, scheme: str) -> str:
    """fairseq's ``--post-process`` of a hypothesis string (``none``: unchanged)."""
    if scheme == "none":
        return text
    from fairseq.data import data_utils  # fairseq imported lazily: keeps startup light

    return data_utils.post_process(text, scheme)
