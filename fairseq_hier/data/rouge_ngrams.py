"""Fast ROUGE recall on whitespace token lists: the ranker's labels and Table 1 of Liu & Lapata
(2019, paper 002), plus the split of a raw source line into title and paragraphs.

Token lists are whitespace tokens (any subword scheme: words, sentencepiece pieces); nothing is
stemmed, stripped or re-tokenised, and :func:`tokenize` lowercases only on request. On lowercase
alphanumeric tokens the numbers equal the ``rouge-score`` package's recall
(``RougeScorer(['rouge2', 'rougeL'], use_stemmer=False)``, tested), which re-tokenises its input.

- :func:`rouge_n_recall`: ROUGE-N recall of every paragraph of an example against one target at
  once (002's labels: "ROUGE-2 recall of paragraph P_i against gold target text D"): matched
  target n-grams, counts clipped (``min(count in paragraph, count in target)``), over the
  target's n-gram count; 0 when the target has no n-gram (rouge-score's ``max(count, 1)``).
  Vectorised over the paragraphs: tokens become ids of the target's vocabulary (one C-level
  ``map``), n-grams integer codes, and the clipped matches one ``np.unique`` / ``bincount``; a
  WikiSum example (~500 paragraphs x 70 tokens) takes a few milliseconds.
- :func:`lcs_length`, :func:`rouge_l_recall`, :func:`rouge_l_recall_prefixes`: ROUGE-L recall
  (LCS over target length; 0 for an empty side, as rouge-score). The LCS is the bit-parallel
  algorithm of Hyyroe (2004) on Python integers (one bit per target token), so a whole
  ranking's prefixes (L = 5, 10, 20, 40 paragraphs) come out of a single pass over its tokens.
- :func:`split_source`: ``title <P> paragraph <P> paragraph ...`` -> title tokens, non-empty
  paragraphs, number of empty ones (the ranker's rules, :mod:`fairseq_hier.data.ranking_dataset`).

Standard library and numpy only: the commands that use this module start without torch/fairseq.
"""

from itertools import chain, repeat
from typing import Dict, List, Sequence, Tuple

import numpy as np

_INT64_SAFE = 1 << 62  # codes stay below this before they are multiplied by the radix


def tokenize(text: str, lowercase: bool = False) -> List[str]:
    """Whitespace tokens of ``text`` (lowercased first when asked)."""
    return (text.lower() if lowercase else text).split()


def split_source(line: str, separator: str = "<P>",
                 lowercase: bool = False) -> Tuple[List[str], List[List[str]], int]:
    """Split a raw source line ``title <P> p1 <P> p2 ...`` (separator as a whole token).

    Returns ``(title, paragraphs, empty)``: the tokens before the first separator (possibly
    none), the non-empty segments after it as token lists in line order, and how many empty
    segments (two separators in a row, a trailing separator) were dropped. A line without
    separator is all title and has no paragraph. ``lowercase`` lowercases the tokens (the
    separator is matched before lowercasing).
    """
    tokens = line.split()
    seps = [i for i, t in enumerate(tokens) if t == separator]
    if lowercase:
        tokens = [t.lower() for t in tokens]
    if not seps:
        return tokens, [], 0
    title = tokens[: seps[0]]
    bounds = zip(seps, seps[1:] + [len(tokens)])
    segments = [tokens[a + 1: b] for a, b in bounds]
    paragraphs = [s for s in segments if s]
    return title, paragraphs, len(segments) - len(paragraphs)


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
