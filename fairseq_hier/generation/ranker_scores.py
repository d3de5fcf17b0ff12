"""Side file of extractive (ranker) scores for the ``extprob`` decoding strategy (001 Table 2).

Format: a plain-text file with one line per example of the split being decoded, in the order of
its raw files (line i = example id i - 1). Each line holds one non-negative number per non-empty
paragraph of that example's source, in source (ranked) order, the title counting as part of
paragraph 1 (the task's segmentation). Scores may be probabilities or any non-negative salience;
only their ratios matter: for decoding they are cut to the paragraphs the task keeps
(``--max-paragraphs``) and normalised to sum to 1 (001: "normalized extractive probabilities").
A line with more scores than kept paragraphs is fine (the extra paragraphs were cut, counted in
the log); fewer is an error, reported up front with file and line.
"""

import logging
from typing import List

import numpy as np
import torch
from torch import Tensor

from ..io import read_lines
from ..errors import HierError

logger = logging.getLogger(__name__)


class RankerScores:
    """Scores per example, read and validated once."""

    def __init__(self, path: str):
        self.path = path
        self.scores: List[np.ndarray] = []
        for number, line in enumerate(read_lines(path), start=1):
            try:
                values = np.array([float(v) for v in line.split()], dtype=np.float64)
            except ValueError as e:
                raise HierError(f"{path}:{number}: ranker scores must be numbers ({e})") from None
            if len(values) == 0:
                raise HierError(f"{path}:{number}: no ranker score on this line")
            if not np.all(np.isfinite(values)) or np.any(values < 0):
                raise HierError(f"{path}:{number}: ranker scores must be finite and non-negative, "
                                f"got {line.strip()[:80]!r}")
            self.scores.append(values)

    def check(self, num_paragraphs: np.ndarray, split: str):
        """Validate against a dataset's kept paragraph counts (one per example) before decoding."""
        if len(self.scores) != len(num_paragraphs):
            raise HierError(f"{self.path} has {len(self.scores)} lines, split '{split}' has "
                            f"{len(num_paragraphs)} examples")
        have = np.array([len(s) for s in self.scores])
        short = np.flatnonzero(have < num_paragraphs)
        if len(short):
            i = int(short[0])
            raise HierError(f"{self.path}:{i + 1}: {have[i]} ranker scores for {num_paragraphs[i]} "
                            f"kept paragraphs ({len(short)} lines too short)")
        zero = [i for i, n in enumerate(num_paragraphs) if not self.scores[i][:n].sum() > 0]
        if zero:
            raise HierError(f"{self.path}:{zero[0] + 1}: the scores of the kept paragraphs are all "
                            f"zero; they cannot be normalised ({len(zero)} lines)")
        extra = int((have > num_paragraphs).sum())
        logger.info(f"ranker scores {self.path}: {len(have)} lines; {extra} list more paragraphs "
                    f"than the task keeps (cut paragraphs, ignored)")

    def batch(self, ids: Tensor, present: Tensor) -> Tensor:
        """``B`` example ids, ``B x P`` present paragraphs -> ``B x P`` normalised scores."""
        out = torch.zeros(present.shape, dtype=torch.float64)
        counts = present.sum(-1).tolist()
        for row, (i, n) in enumerate(zip(ids.tolist(), counts)):  # per example, like a collater
            if i >= len(self.scores) or len(self.scores[i]) < n:
                got = len(self.scores[i]) if i < len(self.scores) else 0
                raise HierError(f"{self.path}:{i + 1}: {got} ranker scores for {n} paragraphs")
            out[row, :n] = torch.from_numpy(self.scores[i][:n])
        total = out.sum(-1, keepdim=True)
        if not bool((total > 0).all()):
            bad = int(ids[(total.squeeze(-1) <= 0)][0])
            raise HierError(f"{self.path}:{bad + 1}: kept paragraphs all have score 0")
        return (out / total).to(present.device, torch.float32)
