"""Fast ROUGE recall on whitespace token lists (any subword scheme; nothing stemmed, stripped or
re-tokenised; :func:`tokenize` lowercases only on request): the paragraph ranker's labels and 002
Table 1's measure. On lowercase alphanumeric tokens the numbers equal the ``rouge-score``
package's recall (``RougeScorer(['rouge2', 'rougeL'], use_stemmer=False)``, tested).

- :func:`rouge_n_recall`: ROUGE-N recall of every paragraph of an example against one target
  (002's labels): clipped n-gram matches over the target's n-grams (0 without any), vectorised
  over the paragraphs (n-grams as integer codes, one ``np.unique``/``bincount``).
- :func:`lcs_length`, :func:`rouge_l_recall`, :func:`rouge_l_recall_prefixes`: ROUGE-L recall
  (LCS over target length; 0 for an empty side) by the bit-parallel LCS of Hyyroe (2004), so
  the prefixes of a whole ranking (L = 5, 10, 20, 40 paragraphs) come out of one pass.

May import: the standard library and numpy (its commands start without torch or fairseq).
"""

from itertools import chain, repeat
from typing import Dict, List, Sequence

import numpy as np

_INT64_SAFE = 1 << 62  # codes stay below this before they are multiplied by the radix


def tokenize(text: str, lowercase: bool = False) -> List[str]:
    """Whitespace tokens of ``text`` (lowercased first when asked)."""
    return (text.lower() if lowercase else text).split()


# ------------------------------------------------------------------------------------ ROUGE-N
def _ngram_codes(rows: np.ndarray, radix: int) -> np.ndarray:
    """One int64 code per row of ``rows`` (R x n ids in [0, radix)), equal iff the rows are.

    Mixed radix, re-numbered densely (``np.unique``) whenever the next digit could overflow."""
    codes = rows[:, 0].copy()
    for k in range(1, rows.shape[1]):
        if codes.size and (int(codes.max()) + 1) * radix >= _INT64_SAFE:
            codes = np.unique(codes, return_inverse=True)[1].reshape(-1)
        codes = codes * radix + rows[:, k]
    return codes


def rouge_n_recall(paragraphs: Sequence[Sequence[str]], target: Sequence[str],
                   n: int = 2) -> np.ndarray:
    """ROUGE-N recall of each paragraph against ``target`` (float64 array, one per paragraph).

    ``paragraphs``: token lists (an empty one scores 0); ``target``: a token list.
    """
    num = len(paragraphs)
    out = np.zeros(num, dtype=np.float64)
    num_target = len(target) - n + 1  # target n-grams
    if num == 0 or num_target <= 0:
        return out
    vocab: Dict[str, int] = {}
    target_ids = np.fromiter((vocab.setdefault(t, len(vocab)) for t in target), np.int64,
                             len(target))
    lengths = np.fromiter(map(len, paragraphs), np.int64, num)
    # paragraph tokens as target-vocabulary ids, -1 for a token the target does not have
    flat = np.fromiter(map(vocab.get, chain.from_iterable(paragraphs), repeat(-1)), np.int64,
                       int(lengths.sum()))
    if flat.size < n:
        return out
    owner = np.repeat(np.arange(num), lengths)  # paragraph of each flat token
    windows = np.lib.stride_tricks.sliding_window_view(flat, n)  # (M-n+1) x n
    # an n-gram counts if it lies inside one paragraph and every token is in the target
    valid = (owner[: len(windows)] == owner[n - 1:]) & (windows >= 0).all(axis=1)
    target_windows = np.lib.stride_tricks.sliding_window_view(target_ids, n)  # Tn x n
    codes = _ngram_codes(np.concatenate([target_windows, windows[valid]]), len(vocab))
    target_codes, para_codes = codes[:num_target], codes[num_target:]
    uniq, target_count = np.unique(target_codes, return_counts=True)  # K distinct target n-grams
    slot = np.searchsorted(uniq, para_codes)
    hit = (slot < len(uniq)) & (uniq[np.minimum(slot, len(uniq) - 1)] == para_codes)
    # (paragraph, target n-gram) pairs: count in the paragraph, clipped to the target's count
    key = owner[: len(windows)][valid][hit] * len(uniq) + slot[hit]
    pair, pair_count = np.unique(key, return_counts=True)
    clipped = np.minimum(pair_count, target_count[pair % len(uniq)])
    matched = np.bincount(pair // len(uniq), weights=clipped, minlength=num)
    return matched / num_target


# ------------------------------------------------------------------------------------ ROUGE-L
def _lcs_prefixes(tokens: Sequence[str], target: Sequence[str],
                  prefix_lengths: Sequence[int]) -> List[int]:
    """LCS length of ``tokens[:k]`` and ``target`` for every k in ``prefix_lengths``, in one
    pass over ``tokens``: the bit-parallel LCS of Hyyroe (2004) on a Python integer ``v`` of
    m = len(target) bits, where bit i is 0 iff the LCS with ``target[:i+1]`` grew at position
    i; LCS = the number of zero bits. Prefix lengths beyond ``len(tokens)`` read it all."""
    masks: Dict[str, int] = {}  # token -> bits of its positions in the target
    for i, t in enumerate(target):
        masks[t] = masks.get(t, 0) | (1 << i)
    full = (1 << len(target)) - 1
    out = [0] * len(prefix_lengths)
    v, read = full, 0
    for i in sorted(range(len(prefix_lengths)), key=lambda i: prefix_lengths[i]):
        stop = min(max(int(prefix_lengths[i]), read), len(tokens))
        for t in tokens[read:stop]:
            u = v & masks.get(t, 0)
            if u:
                v = ((v + u) | (v - u)) & full
        read = stop
        out[i] = len(target) - v.bit_count()
    return out


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists."""
    return _lcs_prefixes(a, b, [len(a)])[0]


def rouge_l_recall(tokens: Sequence[str], target: Sequence[str]) -> float:
    """ROUGE-L recall of ``tokens`` against ``target``: LCS / len(target) (0 if either is empty)."""
    return lcs_length(tokens, target) / len(target) if target else 0.0


def rouge_l_recall_prefixes(tokens: Sequence[str], target: Sequence[str],
                            prefix_lengths: Sequence[int]) -> np.ndarray:
    """ROUGE-L recall against ``target`` of ``tokens[:k]`` for every k in ``prefix_lengths``
    (float64 array), from a single pass over ``tokens``."""
    if not target:
        return np.zeros(len(prefix_lengths), dtype=np.float64)
    return np.asarray(_lcs_prefixes(tokens, target, prefix_lengths), np.float64) / len(target)
