"""ParsingSum's dependency codes (003): one int16 code per binarized source token, the word's
head as an offset on its first piece, read by ``hierarchical_summarization`` for the
linguistic-guided attention (a word attends to its syntactic head).

Lives here: the code values, :func:`decode` (codes -> word and head word per token), and
:class:`DependencyParses` (a split's ``PREFIX.{bin,idx}``, memory-mapped, checked against the
binarized source). The codes, why int16 offsets, and the CoNLL-U read: docs/data-formats.md,
section "Dependency codes"; :mod:`fairseq_hier.preparation.dependencies` writes them.

May import: ``errors``; numpy, and fairseq inside the functions that open the files.
"""

import os
from typing import Tuple

import numpy as np

from ..errors import HierError

NOT_A_WORD = -32768    # a separator (<P>) or the EOS
CONTINUATION = 32767   # a piece that is not the first piece of its word
MAX_OFFSET = 32766     # the farthest head: codes in [-MAX_OFFSET, MAX_OFFSET] are word offsets
COMMAND = "fairseq-hier-parse project"


def decode(codes: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(word, head)``, int64 ``(M,)`` each, from an example's ``(M,)`` codes: per token its
    word index in the example (0-based, -1 for NOT_A_WORD) and its word's head word index (-1
    for a root and for NOT_A_WORD). Continuation pieces share their word's index and head."""
    codes = np.asarray(codes)
    valid = codes != NOT_A_WORD
    first = valid & (codes != CONTINUATION)
    word = np.where(valid, np.cumsum(first) - 1, -1)  # (M,)
    if np.any(valid & (word < 0)):
        raise HierError("a CONTINUATION code before the first word of the example")
    offsets = codes[first].astype(np.int64)  # (W,)
    word_head = np.where(offsets == 0, -1, np.arange(len(offsets)) + offsets)  # (W,)
    if np.any(word_head >= len(offsets)) or np.any(word_head < -1):
        raise HierError(f"a head outside the example's {len(offsets)} words")
    head = np.where(valid, word_head[np.maximum(word, 0)] if len(offsets) else -1, -1)
    return word, head


# --------------------------------------------------------------------------- the .bin/.idx
def parse_files(prefix: str) -> Tuple[str, str]:
    return f"{prefix}.bin", f"{prefix}.idx"


class DependencyParses:
    """The codes of one split (``PREFIX.{bin,idx}``, docs/data-formats.md), memory-mapped through
    fairseq's ``MMapIndexedDataset``. ``sizes[i]``: the number of codes of example ``i`` (line
    ``i + 1``); ``codes(i)``: its int16 codes. Raises HierError (naming the command that
    writes them) when a file is missing, ValueError when they do not hold int16 codes."""

    def __init__(self, prefix: str):
        from fairseq.data.indexed_dataset import MMapIndexedDataset

        self.prefix = prefix
        missing = [p for p in parse_files(prefix) if not os.path.exists(p)]
        if missing:
            raise HierError(
                f"no dependency parse at {prefix} ({', '.join(missing)} missing): write it with "
                f"{COMMAND} --conllu PARSED/SPLIT.conllu --source BPE/SPLIT.src --subword ... "
                f"--output-prefix {prefix}")
        self._data = MMapIndexedDataset(prefix)
        if self._data._index.dtype != np.int16:
            raise HierError(f"{prefix}.idx holds {np.dtype(self._data._index.dtype).name} "
                            f"arrays, not the int16 codes that {COMMAND} writes")

    def __len__(self) -> int:
        return len(self._data)

    def __getstate__(self):
        return {"prefix": self.prefix}  # a spawned data loader worker re-opens the files

    def __setstate__(self, state):
        self.__init__(state["prefix"])

    @property
    def sizes(self) -> np.ndarray:
        return self._data.sizes

    def codes(self, i: int) -> np.ndarray:
        """Example ``i``'s codes: int16 ``(sizes[i],)``, a read-only view of the mapped file."""
        pointer, size = self._data._index[i]
        return np.frombuffer(self._data._bin_buffer, dtype=np.int16, count=size, offset=pointer)

    def check(self, source_sizes: np.ndarray, source_path: str) -> None:
        """Raise ValueError (one message) unless every example has one code per token of the
        binarized source ``source_path`` (``source_sizes``: its dataset sizes, EOS included)."""
        source_sizes = np.asarray(source_sizes, dtype=np.int64)
        rerun = f"rerun {COMMAND} on the source you binarized"
        if len(source_sizes) != len(self):
            raise HierError(f"dependency parse does not match the source: {self.prefix}.idx "
                            f"has {len(self)} examples, {source_path} has {len(source_sizes)} "
                            f"({rerun})")
        wrong = np.flatnonzero(np.asarray(self.sizes, dtype=np.int64) != source_sizes)
        if len(wrong):
            i = int(wrong[0])
            raise HierError(f"dependency parse does not match the source: {self.prefix}.idx "
                            f"example {i + 1} (line {i + 1}): {int(self.sizes[i])} codes in the "
                            f"parse, {int(source_sizes[i])} tokens in {source_path} "
                            f"({len(wrong)} of {len(source_sizes)} examples differ); {rerun}")
