"""Shards of a preparation step: ``--shard K/N`` cuts a split into N contiguous blocks of its
examples, so that a cluster's job array (Slurm or similar) prepares a corpus on N machines.

The cut and the shard markers (``FILE.shard``) beside every sharded output:
docs/data-formats.md#shards-preparation-split-across-machines.
Standard library only.
"""

import json
import logging
import os
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional, Sequence, Tuple

from ..errors import HierError
from ..io import read_json_object, write_text

logger = logging.getLogger(__name__)

MARKER_SUFFIX = ".shard"
# the fields that say which block a marker's file holds (``input`` and ``unit`` describe it)
_BLOCK = ("shard", "first", "stop", "of")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``--shard index/count``)."""

    index: int
    count: int

    def bounds(self, n: int) -> Tuple[int, int]:
        """``[first, stop)``: the 0-based examples of this shard of ``n``."""
        return self.index * n // self.count, (self.index + 1) * n // self.count

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"K/N"`` -> :class:`Shard`; HierError unless K and N are integers with ``0 <= K < N``."""
    parts = str(text).split("/")
    try:
        index, count = (int(p) for p in parts)
    except ValueError:
        raise HierError(f"expected K/N (shard K of N, 0 <= K < N), got '{text}'") from None
    if count < 1 or not 0 <= index < count:
        raise HierError(f"expected K/N with 0 <= K < N, got '{text}'")
    return Shard(index, count)


def marker_path(path: str) -> str:
    return path + MARKER_SUFFIX


def read_marker(path: str) -> Optional[dict]:
    """The marker beside ``path`` (module docstring), None for a whole file."""
    marker = marker_path(path)
    if not os.path.isfile(marker):
        return None
    value = read_json_object(marker, "a shard marker (a JSON object)")
    if any(k not in value for k in _BLOCK):
        raise HierError(f"{marker}: not a shard marker (expected a JSON object with "
                        f"{', '.join(_BLOCK)})")
    return value


def describe(marker: dict) -> str:
    """``shard 1/2 (examples 500-999 of 1000 of raw/train.src)``."""
    return (f"shard {marker['shard']} ({marker.get('unit', 'examples')} {marker['first']}-"
            f"{marker['stop'] - 1} of {marker['of']} of {marker.get('input', '?')})")


def inputs_marker(paths: Sequence[Optional[str]]) -> Optional[dict]:
    """The shard that the files ``paths`` are (their markers, which must agree), None when they
    are whole; HierError naming two files of different shards (or a shard and a whole file)."""
    paths = [p for p in paths if p is not None and os.path.isfile(p)]
    markers = [(p, read_marker(p)) for p in paths]
    first_path, first = markers[0] if markers else (None, None)
    for path, marker in markers[1:]:
        same = (marker is None and first is None) or (
            marker is not None and first is not None
            and all(marker[k] == first[k] for k in _BLOCK))
        if not same:
            what = [f"{p} is " + (describe(m) if m else "whole (no shard marker)")
                    for p, m in ((first_path, first), (path, marker))]
            raise HierError(f"inputs of different shards: {'; '.join(what)}")
    return first


class Selection:
    """The examples a step processes: all (``first=0``, ``stop=None``) or one shard's block;
    ``marker``: what to write beside the step's text outputs (None: they are whole)."""

    def __init__(self, first: int = 0, stop: Optional[int] = None,
                 marker: Optional[dict] = None, cut: bool = False):
        self.first, self.stop, self.marker, self.cut = first, stop, marker, cut

    def take(self, items: Iterable) -> Iterator:
        """The items of this selection, the input read to its end all the same (so that checks
        over the whole input, such as unique ids, still run)."""
        for i, item in enumerate(items):
            if self.contains(i):
                yield item

    def contains(self, i: int) -> bool:
        """Whether example ``i`` (0-based, of the whole input) is selected."""
        return self.first <= i and (self.stop is None or i < self.stop)

    def slice(self, items: Sequence) -> Sequence:
        return items[self.first:self.stop] if self.cut else items

    @property
    def label(self) -> str:
        """``shard 1/2 `` for a log line's start, empty for whole outputs."""
        return f"shard {self.marker['shard']} " if self.marker else ""


def select(shard: Optional[Shard], inputs: Sequence[Optional[str]],
           count: Callable[[], int], unit: str = "examples") -> Selection:
    """What a step with ``--shard shard`` (None: without) processes of ``inputs`` (the first is
    named in the marker); ``count()``: the number of examples of the whole input, called only to
    cut it. Refuses ``--shard`` on inputs that are already a shard, and an empty shard. Logs
    which shard and how many examples."""
    found = inputs_marker(inputs)
    source = next(p for p in inputs if p is not None)
    if shard is None:
        if found:
            logger.info(f"{source} is {describe(found)}: processed whole")
        return Selection(marker=found)
    if found:
        raise HierError(f"--shard {shard}: {source} is already {describe(found)} "
                        f"({marker_path(source)}); run this step without --shard to process it "
                        f"whole")
    n = count()
    first, stop = shard.bounds(n)
    if first == stop:
        raise HierError(f"--shard {shard}: {source} has {n} {unit}, so shard {shard.index} of "
                        f"{shard.count} would be empty (use at most {n} shards)")
    marker = {"shard": str(shard), "unit": unit, "first": first, "stop": stop, "of": n,
              "input": source}
    logger.info(f"{describe(marker)}: {stop - first} {unit}")
    return Selection(first, stop, marker, cut=True)


def mark_outputs(paths: Iterable[str], selection: Selection) -> None:
    """Once a step's outputs are in place: write the selection's marker beside each text output
    ``paths``, or remove a stale marker beside whole ones."""
    for path in paths:
        marker = marker_path(path)
        if selection.marker is None:
            if os.path.isfile(marker):
                os.remove(marker)
                logger.info(f"removed {marker}: {path} is whole")
            continue
        if not os.path.isfile(path):  # an optional output this run did not write
            if os.path.isfile(marker):
                os.remove(marker)
            continue
        write_text(marker, json.dumps(selection.marker, ensure_ascii=False) + "\n")


def epoch_data_path(paths: Sequence[str], split: str, epoch: int,
                    train_subset: Optional[str]) -> str:
    """The data-bin folder that ``split`` is read from in ``epoch`` (1-based), with sidecars
    (graphs, parses, sentence counts, segments, chunk maps, labels) beside it: fairseq's rule
    for ``data-bin/shard0:data-bin/shard1:...`` (``paths``: the folders, as fairseq's
    ``utils.split_paths`` gives them), as its translation task applies it: the training split
    rotates through the folders, one per epoch; every other split comes from the first folder.
    ``train_subset``: fairseq's ``--train-subset`` (an unresolved interpolation, outside
    fairseq's commands, counts as ``train``)."""
    if not paths:
        raise HierError("no data-bin folder given (the data argument)")
    if not isinstance(train_subset, str) or train_subset.startswith("${"):
        train_subset = "train"
    if split != train_subset:
        return paths[0]
    return paths[(epoch - 1) % len(paths)]
