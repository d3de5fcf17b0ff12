"""A fairseq dataset whose examples have one size each (a cost, not a (source, target) pair).

Shared by the datasets that batch whole examples of one kind (paragraph embeddings for attention
prediction, paragraph lists for the ranker): batching by that size, shortest first (random order
within a size when shuffling), and filtering examples above fairseq's limit.
"""

import math

import numpy as np
from fairseq.data import FairseqDataset


class SizedDataset(FairseqDataset):
    """Subclasses set ``self._sizes`` (int64 numpy array, one size per example) and
    ``self.shuffle``; the size is what ``--max-tokens`` and ``--max-positions`` limit."""

    _sizes: np.ndarray
    shuffle: bool = True

    @property
    def sizes(self):
        return self._sizes

    def num_tokens(self, index):
        return int(self._sizes[index])

    def num_tokens_vec(self, indices):
        return self._sizes[indices]

    def size(self, index):
        return int(self._sizes[index])

    def ordered_indices(self):
        order = np.random.permutation(len(self)) if self.shuffle else np.arange(len(self))
        return order[np.argsort(self._sizes[order], kind="mergesort")]

    def filter_indices_by_size(self, indices, max_sizes):
        """Drop examples whose size exceeds ``max_sizes`` (an int; for a tuple, its first entry;
        None or infinity keeps everything). Returns (kept indices, ignored indices as a list)."""
        if isinstance(max_sizes, (tuple, list)):
            max_sizes = max_sizes[0] if max_sizes else None
        if max_sizes is None or (isinstance(max_sizes, float) and math.isinf(max_sizes)):
            return indices, []
        indices = np.asarray(indices)
        too_big = self._sizes[indices] > max_sizes
        return indices[~too_big], indices[too_big].tolist()

    @property
    def supports_prefetch(self):
        return False
