"""LexRank baseline (Erkan & Radev 2004) as Liu & Lapata 2019 (002, "Comparison Systems") run it:
"we build a graph with paragraphs as nodes and edges weighted by tf-idf cosine similarity; we
run a PageRank-like algorithm on this graph to rank and select paragraphs until the length of
the ground-truth summary is reached". Run by ``fairseq-hier-baseline lexrank``.

Nodes: the dataset's paragraphs (:func:`fairseq_hier.data.paragraphs.text_paragraphs`); edges:
:func:`fairseq_hier.text.tfidf.cosine_matrix` (the ``tfidf`` graph's matrix); scores: continuous
or thresholded LexRank by power iteration (:func:`lexrank_scores`); output: paragraphs by score
until the reference's token count, cut to it. The readings and why our own implementation:
docs/evaluation.md, section fairseq_hier.baselines.lexrank.

May import: :mod:`fairseq_hier.data`, :mod:`fairseq_hier.text`, :mod:`fairseq_hier.io`,
:mod:`fairseq_hier.errors`, numpy; tqdm inside the function that shows progress.
"""

from typing import List, Optional, Tuple

import numpy as np

from fairseq_hier.data.paragraphs import text_paragraphs
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, check_parallel, read_lines
from fairseq_hier.text.tfidf import cosine_matrix

TIE_DECIMALS = 10  # scores equal to 1e-10 are ties (power iteration leaves ~1e-12 noise)


def lexrank_scores(similarity: np.ndarray, damping: float = 0.85,
                   threshold: Optional[float] = None, tol: float = 1e-8,
                   max_iter: int = 10000) -> np.ndarray:
    """LexRank scores (a distribution over the P nodes) of a ``P x P`` similarity matrix.

    ``threshold`` None: continuous LexRank (weights = similarities); else binary edges where the
    similarity exceeds ``threshold``. Rows are normalised to sum to 1 (a zero row becomes
    uniform); then ``p = (1 - damping) / P + damping * M^T p`` from ``p = 1 / P`` until
    ``|p_new - p|_1 < tol``."""
    if not 0.0 < damping <= 1.0:
        raise HierError(f"--damping must be in (0, 1], got {damping}")
    s = np.asarray(similarity, dtype=np.float64)
    p_count = s.shape[0]
    if threshold is not None:
        s = (s > threshold).astype(np.float64)
    row = s.sum(axis=1, keepdims=True)  # P x 1
    m = np.where(row > 0, s / np.where(row > 0, row, 1.0), 1.0 / p_count)  # row-stochastic
    p = np.full(p_count, 1.0 / p_count)
    for _ in range(max_iter):
        new = (1.0 - damping) / p_count + damping * (m.T @ p)
        if np.abs(new - p).sum() < tol:
            return new
        p = new
    return p


def rank_paragraphs(scores: np.ndarray) -> List[int]:
    """Paragraph indices by decreasing score, ties (to 1e-10) by index."""
    rounded = np.round(np.asarray(scores, dtype=np.float64), TIE_DECIMALS)
    return sorted(range(len(rounded)), key=lambda i: (-rounded[i], i))


def select_tokens(paragraphs: List[List[str]], order: List[int], k: int) -> List[str]:
    """Paragraphs in ``order`` until ``k`` tokens are reached, concatenated, cut to ``k``."""
    tokens: List[str] = []
    for i in order:
        if len(tokens) >= k:
            break
        tokens.extend(paragraphs[i])
    return tokens[:k]


def lexrank(paragraphs: List[List[str]], k: int, damping: float = 0.85,
            threshold: Optional[float] = None) -> List[str]:
    """The LexRank summary (``k`` tokens at most) of one example's paragraphs."""
    if k <= 0:
        return []
    scores = lexrank_scores(cosine_matrix(paragraphs), damping, threshold)
    return select_tokens(paragraphs, rank_paragraphs(scores), k)


def lexrank_file(source_path: str, reference_path: str, output_path: str,
                 separator: str = "<P>", damping: float = 0.85,
                 threshold: Optional[float] = None, progress: bool = False) -> Tuple[int, int, int]:
    """Write one LexRank summary per line of ``source_path``; returns (written, sources shorter
    than their reference, empty references)."""
    from tqdm import tqdm

    if not 0.0 < damping <= 1.0:
        raise HierError(f"--damping must be in (0, 1], got {damping}")
    if threshold is not None and not 0.0 <= threshold < 1.0:
        raise HierError(f"--threshold must be in [0, 1) (a cosine; 1 would leave no edge), "
                        f"got {threshold}")
    sources, references = read_lines(source_path), read_lines(reference_path)
    check_parallel(source_path, sources, reference_path, references)
    examples = [text_paragraphs(s, separator) for s in sources]
    for lineno, paragraphs in enumerate(examples, 1):
        if not paragraphs:
            raise HierError(f"{source_path}:{lineno}: no paragraph (expected 'title {separator} "
                            f"paragraph 1 {separator} ...' with at least one non-empty "
                            f"paragraph)")
    short = empty = 0
    with atomic_outputs([output_path], inputs=[source_path, reference_path]) as (out,):
        for paragraphs, reference in tqdm(list(zip(examples, references)), disable=not progress,
                                          unit="ex", mininterval=1.0, desc="lexrank"):
            k = len(reference.split())
            summary = lexrank(paragraphs, k, damping, threshold)
            short += len(summary) < k
            empty += k == 0
            out.write(" ".join(summary) + "\n")
    return len(sources), short, empty
