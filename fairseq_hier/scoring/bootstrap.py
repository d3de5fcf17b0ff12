"""The percentile bootstrap over documents: the resample indices shared by every paired
comparison of :mod:`fairseq_hier.scoring.significance`, and a mean with its bootstrap interval
(the intervals of ``rouge``'s fallback report and of the attention analysis); the significance
level and the text tables the comparisons print.

One numpy ``default_rng(seed)`` draws ``samples`` resamples of the N document indices with
replacement; the draw is the one sacreBLEU's bootstrap makes (module docstring of
:mod:`fairseq_hier.scoring.significance`).
"""

from typing import Optional, Sequence

from ..errors import HierError

SAMPLES, ROUGE_SEED = 1000, 0
#: the significance level the scoring commands mark with ``*``
ALPHA = 0.05


def text_table(rows) -> str:
    """Rows of strings as left-aligned columns two spaces apart (the tables of the scoring
    commands and of the paired comparisons)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def bootstrap_indices(n: int, samples: int = SAMPLES, seed: Optional[int] = ROUGE_SEED):
    """``samples x n`` document indices drawn with replacement by ``default_rng(seed)``; the
    same draw as sacreBLEU's ``rng.choice(n, size=(samples, n), replace=True)``. ``seed`` None:
    :data:`ROUGE_SEED` (never an unseeded draw)."""
    import numpy as np  # lazy, as everywhere in this module: the scoring commands start light

    seed = ROUGE_SEED if seed is None else seed

    if n < 1:
        raise HierError("the bootstrap needs at least one document")
    if samples < 1:
        raise HierError(f"samples must be >= 1, got {samples}")
    return np.random.default_rng(seed).integers(0, n, size=(samples, n))


def mean_interval(values: Sequence[float], samples: int = SAMPLES, seed: Optional[int] = ROUGE_SEED,
                  level: float = 0.95):
    """Mean of per-document ``values`` and its percentile-bootstrap interval (``level``) ->
    ``(mean, low, high)``: the draw of :func:`bootstrap_indices`, taken 100 resamples at a time
    (the same indices, in bounded memory on a large split)."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        raise HierError("bootstrap interval of no values")
    seed = ROUGE_SEED if seed is None else seed
    rng = np.random.default_rng(seed)
    means = np.concatenate([
        values[rng.integers(0, len(values), size=(min(100, samples - start), len(values)))]
        .mean(axis=1) for start in range(0, samples, 100)])
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(values.mean()), float(low), float(high)
