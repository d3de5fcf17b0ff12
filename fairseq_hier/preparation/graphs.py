"""The paragraph-graph step of Liu & Lapata 2019 (002, Eq. 24), ``fairseq-hier-graph``: every
example of a raw source file read and checked (its paragraphs by the dataset's rules,
:func:`fairseq_hier.data.paragraphs.text_paragraphs`), its graph built in worker processes
(:class:`fairseq_hier.text.graphs.GraphBuilder`, the builder the task also runs at inference) and
written (:mod:`fairseq_hier.data.paragraph_graph`); the command documents the kinds and rates.

May import: :mod:`fairseq_hier.data`, :mod:`fairseq_hier.text`, :mod:`fairseq_hier.io`,
:mod:`fairseq_hier.workers`, :mod:`fairseq_hier.errors`; numpy (through the graphs) and tqdm
inside the functions, so that the command's ``--help`` stays light.
"""

import logging
import time
from typing import Iterable, List, Optional, Tuple

from fairseq_hier.data.shards import Shard, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import batches, iter_lines
from fairseq_hier.workers import ordered_map

logger = logging.getLogger("fairseq_hier.paragraph_graph")


def build_graphs(builder, work: Iterable, workers: int = 1,
                 in_flight: Optional[int] = None) -> Iterable[list]:
    """``builder(batch)`` for each batch of ``work``, in order, with ``workers`` processes
    (:func:`fairseq_hier.workers.ordered_map`: at most ``in_flight`` batches, default 2 per
    worker, are read ahead, so that a split larger than memory streams)."""
    return ordered_map(builder, work, workers, "graph", in_flight)


class LineWork:
    """Picklable ``batch of (line number, raw line) of path -> per line`` work, run in the worker
    processes (so that the main process only reads lines and writes graphs): each line split into
    its paragraphs by the dataset's rules and checked, then counted (``builder`` None) or turned
    into its graph by ``builder`` (:class:`fairseq_hier.text.graphs.GraphBuilder`)."""

    def __init__(self, path: str, separator: str, builder=None):
        self.path, self.separator, self.builder = path, separator, builder

    def __call__(self, lines: List[Tuple[int, str]]):
        from fairseq_hier.data.paragraphs import text_paragraphs  # numpy: imported when used

        examples = []
        for lineno, line in lines:
            paragraphs = text_paragraphs(line, self.separator)
            if not paragraphs:
                raise HierError(
                    f"{self.path}:{lineno}: no paragraph (expected 'title {self.separator} "
                    f"paragraph 1 {self.separator} ...' with at least one non-empty paragraph)")
            examples.append(paragraphs)
        if self.builder is None:
            return [len(p) for p in examples]
        return self.builder(examples)


def paragraph_counts(path: str, separator: str, workers: int = 1,
                     batch_size: int = 64) -> List[int]:
    """Check every line of ``path`` (:class:`LineWork`, with ``workers`` processes); returns the
    paragraphs of each example. Lines end at ``\\n`` only (as :func:`fairseq_hier.io.read_lines`);
    HierError for an unreadable file, a non-UTF-8 line, a line without paragraph or no line."""
    counts = [c for batch in build_graphs(LineWork(path, separator),
                                          batches(iter_lines(path), batch_size), workers)
              for c in batch]
    if not counts:
        raise HierError(f"{path} holds no example (empty file)")
    return counts


def write_graphs(source: str, kind: str, output_prefix: str, separator: str = "<P>",
                 workers: int = 1, batch_size: int = 64, progress_bar: bool = True,
                 shard: Optional[Shard] = None) -> int:
    """Write the ``kind`` graph (``tfidf``, ``adg``) of every example of ``source`` (or of its
    ``shard``: :mod:`fairseq_hier.data.shards`) to ``output_prefix.{sizes,offsets,values}.npy``
    (:mod:`fairseq_hier.data.paragraph_graph`); logs the rate and returns the number of
    examples."""
    # tqdm, and numpy through the graph modules, imported here: --help stays light
    from tqdm import tqdm

    from fairseq_hier.data.paragraph_graph import ParagraphGraphWriter
    from fairseq_hier.text.graphs import GraphBuilder

    builder = GraphBuilder(kind)
    start = time.perf_counter()
    counts = paragraph_counts(source, separator, workers, batch_size)
    selection = select(shard, [source], lambda: len(counts))
    counts = selection.slice(counts)
    n, paragraphs = len(counts), sum(counts)
    bar = tqdm(total=n, unit="ex", disable=not progress_bar, mininterval=1.0,
               desc=f"graph {kind}")
    with ParagraphGraphWriter(output_prefix, inputs=[source]) as writer:
        lines = batches(selection.take(iter_lines(source)), batch_size)
        for graphs in build_graphs(LineWork(source, separator, builder), lines, workers):
            for g in graphs:
                writer.add(g)
            bar.update(len(graphs))
    bar.close()
    seconds = max(time.perf_counter() - start, 1e-9)
    logger.info(f"{selection.label}wrote {n} {kind} graphs ({paragraphs} paragraphs) of {source} "
                f"to {output_prefix}.{{sizes,offsets,values}}.npy in {seconds:.1f} s "
                f"({n / seconds:.1f} examples/s, {paragraphs / seconds:.0f} paragraphs/s with "
                f"{workers} worker(s))")
    return n
