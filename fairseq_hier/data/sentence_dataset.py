"""Sources with a BOS symbol at every sentence start, checked against their sidecar files, and
the speaker segments that ride with them (paper 004; written by :mod:`.sentence_bos`).

:func:`check_sentences` checks a whole split before training against ``{split}.sentences`` and
``{split}.segments``; the sidecar files and the checks: docs/data-formats.md#sentence-bos-files.
Batch keys: the comment below.
Imports ``data``, ``io``, ``errors``; numpy, torch, fairseq.
"""
# Batch keys added by :class:`SentenceSegmentsDataset` to fairseq's ``LanguagePairDataset`` batch:
#     net_input.src_segments   B x N   speaker index of every sentence (0 beyond an example's N_b)

import logging
import os
from typing import List, Optional

import numpy as np
import torch
from fairseq.data import BaseWrapperDataset

from ..errors import HierError
from ..io import read_lines
from .hierarchical_dataset import token_buffer, token_chunks

logger = logging.getLogger(__name__)
HINT = "(fairseq-hier-sentence-bos writes it; copy it next to the binarized data)"


def _lines(path: str) -> List[str]:
    if not os.path.exists(path):
        raise HierError(f"{path} not found {HINT}")
    return read_lines(path)


def read_sentence_counts(path: str, expected: int) -> np.ndarray:
    """``{split}.sentences``: one non-negative integer per line, ``expected`` lines."""
    lines = _lines(path)
    if len(lines) != expected:
        raise HierError(f"{path} has {len(lines)} lines, the binarized source has {expected} "
                        f"examples")
    counts = np.zeros(expected, np.int64)
    for i, line in enumerate(lines):
        if not line.strip().isdigit():
            raise HierError(f"{path}:{i + 1}: expected a sentence count, got {line!r}")
        counts[i] = int(line)
    return counts


def read_segments(path: str, counts: np.ndarray) -> List[np.ndarray]:
    """``{split}.segments``: per line one speaker index per sentence (``counts[i]`` of them)."""
    lines = _lines(path)
    if len(lines) != len(counts):
        raise HierError(f"{path} has {len(lines)} lines, the binarized source has {len(counts)} "
                        f"examples")
    out = []
    for i, line in enumerate(lines):
        fields = line.split()
        if not all(f.isdigit() for f in fields):
            raise HierError(f"{path}:{i + 1}: expected non-negative speaker indices, got {line!r}")
        if len(fields) != counts[i]:
            raise HierError(f"{path}:{i + 1}: {len(fields)} speaker indices for "
                            f"{counts[i]} sentences")
        out.append(np.asarray([int(f) for f in fields], np.int64))
    return out


def check_sentences(src, bos: int, counts: np.ndarray, max_source_positions: int,
                    src_path: str, counts_path: str,
                    limit_name: str = "--max-source-positions",
                    cut_by: str = "fairseq-hier-sentence-bos") -> None:
    """Raise ValueError naming the first bad examples unless every source starts with BOS, has
    ``counts[i]`` BOS symbols and at most ``max_source_positions`` tokens (EOS included; the
    option that sets the limit is ``limit_name``, the command that inserts BOS ``cut_by``)."""
    n = len(src)
    sizes = np.asarray(src.sizes, dtype=np.int64)
    bos_counts = np.zeros(n, np.int64)
    first = np.zeros(n, np.int64)
    for start, stop in token_chunks(sizes):
        tokens, lengths = token_buffer(src, start, stop)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        # per example: BOS count (reduceat over each example's slice) and its first token
        bos_counts[start:stop] = np.add.reduceat((tokens == bos).astype(np.int64), offsets)
        first[start:stop] = tokens[offsets]
    problems = []
    for name, bad, what in (
            ("no BOS", np.flatnonzero(bos_counts == 0), lambda i: "the source has no BOS symbol"),
            ("text before the first BOS", np.flatnonzero((bos_counts > 0) & (first != bos)),
             lambda i: "the source does not start with the BOS symbol"),
            ("BOS count", np.flatnonzero((bos_counts > 0) & (bos_counts != counts)),
             lambda i: f"{bos_counts[i]} BOS symbols but {counts[i]} sentences in {counts_path}"),
            ("too long", np.flatnonzero(sizes > max_source_positions),
             lambda i: f"{sizes[i]} tokens > {limit_name} {max_source_positions}")):
        if len(bad):
            shown = "; ".join(f"example {i + 1}: {what(i)}" for i in bad[:3])
            more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
            problems.append(f"{len(bad)} example(s) with {name}: {shown}{more}")
    if problems:
        raise HierError(f"{src_path}: " + " | ".join(problems) + "; every sentence must open "
                        f"with BOS ({cut_by}) and sources must be cut at sentence boundaries "
                        "there, not by --truncate-source")
    logger.info(f"{src_path}: {n} examples, {int(bos_counts.sum())} sentences (BOS), "
                f"{int(bos_counts.max()) if n else 0} at most; all match {counts_path}")


class SentenceSegmentsDataset(BaseWrapperDataset):
    """fairseq's ``LanguagePairDataset`` plus ``net_input.src_segments`` ``B x N``."""

    def __init__(self, dataset, segments: List[np.ndarray]):
        super().__init__(dataset)
        self.segments = segments

    def collater(self, samples):
        batch = self.dataset.collater(samples)
        if len(batch) == 0:
            return batch
        rows = [self.segments[int(i)] for i in batch["id"]]  # the batch's (sorted) order
        width = max(1, max(len(r) for r in rows))
        out = torch.zeros(len(rows), width, dtype=torch.long)  # B x N
        for b, r in enumerate(rows):
            out[b, : len(r)] = torch.from_numpy(r)
        batch["net_input"]["src_segments"] = out
        return batch


def max_segment(segments: Optional[List[np.ndarray]]) -> int:
    """The largest speaker index of a split (-1 if none)."""
    if not segments:
        return -1
    return max((int(r.max()) for r in segments if len(r)), default=-1)
