"""fairseq's compiled ``batch_by_size`` checked: when it dropped examples (a last partial batch
with ``--required-batch-size-multiple`` > 1), they are rebatched with a plain-Python version of
fairseq's own algorithm. Why: docs/fairseq-fixes.md, section "Batching". Imports ``errors``;
numpy, fairseq.
"""

import logging

import numpy as np

from ..errors import HierError

logger = logging.getLogger("fairseq_hier.compat")  # the log lines name the package


def _batch_by_size_python(indices, num_tokens, max_tokens, max_sentences, bsz_mult):
    """fairseq's batching algorithm (data_utils_fast.batch_by_size_*) in plain Python."""
    max_tokens = max_tokens if max_tokens and max_tokens > 0 else float("inf")
    max_sentences = max_sentences if max_sentences and max_sentences > 0 else float("inf")
    batches, batch, lens = [], [], []
    for idx, n in zip(indices.tolist(), num_tokens.tolist()):
        if n > max_tokens:
            raise HierError(f"sentence at index {idx} of size {n} exceeds max_tokens limit of {max_tokens}!")
        if batch and (len(batch) + 1 > max_sentences or max(max(lens), n) * (len(batch) + 1) > max_tokens):
            keep = max(bsz_mult * (len(batch) // bsz_mult), len(batch) % bsz_mult)
            batches.append(np.array(batch[:keep], dtype=np.int64))
            batch, lens = batch[keep:], lens[keep:]
        batch.append(idx)
        lens.append(n)
    if batch:
        batches.append(np.array(batch, dtype=np.int64))
    return batches


def patch_batch_by_size() -> None:
    """Keep every example when fairseq's compiled batching drops a partial batch. Idempotent."""
    from fairseq.data import data_utils

    original = data_utils.batch_by_size
    if getattr(original, "_fairseq_hier", False):
        return

    def batch_by_size(indices, num_tokens_fn, num_tokens_vec=None, max_tokens=None,
                      max_sentences=None, required_batch_size_multiple=1, fixed_shapes=None):
        batches = original(indices, num_tokens_fn, num_tokens_vec, max_tokens, max_sentences,
                           required_batch_size_multiple, fixed_shapes)
        indices = np.asarray(indices, dtype=np.int64)
        if fixed_shapes is not None or sum(len(b) for b in batches) == len(indices):
            return batches
        if num_tokens_vec is None:
            num_tokens_vec = np.fromiter((num_tokens_fn(i) for i in indices), np.int64, len(indices))
        else:
            num_tokens_vec = np.asarray(num_tokens_vec, dtype=np.int64)
        logger.info(f"fairseq's compiled batch_by_size kept {sum(len(b) for b in batches)} of "
                    f"{len(indices)} examples; rebatching in Python so none is dropped")
        return _batch_by_size_python(indices, num_tokens_vec, max_tokens, max_sentences,
                                     required_batch_size_multiple)

    batch_by_size._fairseq_hier = True
    data_utils.batch_by_size = batch_by_size
