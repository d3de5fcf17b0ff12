"""The paragraph graphs of a split for the graph-informed attention of Liu & Lapata 2019 (002,
Eq. 24): every example of a raw source file read and checked, its graph built
(:mod:`fairseq_hier.data.graphs`, in worker processes) and written
(:mod:`fairseq_hier.data.paragraph_graph`); ``fairseq-hier-graph`` documents the kinds and rates.
"""

import logging
import time
from typing import Iterator, List, Tuple

from fairseq_hier.errors import HierError
from fairseq_hier.io import batches, iter_lines

logger = logging.getLogger("fairseq_hier.paragraph_graph")


def iter_examples(path: str, separator: str) -> Iterator[Tuple[int, List[List[str]]]]:
    """``(line number, paragraphs)`` of each line of ``path``, 1-based, paragraphs by the
    dataset's rules. Lines end at ``\\n`` only (as :func:`fairseq_hier.io.read_lines`). Raises
    ValueError for an unreadable file, a non-UTF-8 line or a line without paragraph."""
    from fairseq_hier.data.paragraphs import text_paragraphs  # numpy: imported when used

    for lineno, line in iter_lines(path):
        paragraphs = text_paragraphs(line, separator)
        if not paragraphs:
            raise HierError(
                f"{path}:{lineno}: no paragraph (expected 'title {separator} paragraph 1 "
                f"{separator} ...' with at least one non-empty paragraph)")
        yield lineno, paragraphs


def count_examples(path: str, separator: str) -> Tuple[int, int]:
    """Check every line (:func:`iter_examples`); returns (examples, paragraphs)."""
    examples = paragraphs = 0
    for _, p in iter_examples(path, separator):
        examples += 1
        paragraphs += len(p)
    if examples == 0:
        raise HierError(f"{path} holds no example (empty file)")
    return examples, paragraphs


def batched(path: str, separator: str, batch_size: int) -> Iterator[List[List[List[str]]]]:
    return batches((paragraphs for _, paragraphs in iter_examples(path, separator)), batch_size)


def write_graphs(source: str, kind: str, output_prefix: str, separator: str = "<P>",
                 workers: int = 1, batch_size: int = 64, progress_bar: bool = True) -> int:
    """Write the ``kind`` graph (``tfidf``, ``adg``) of every example of ``source`` to
    ``output_prefix.{sizes,offsets,values}.npy`` (:mod:`fairseq_hier.data.paragraph_graph`);
    logs the rate and returns the number of examples."""
    # tqdm, and numpy through the graph modules, imported here: --help stays light
    from tqdm import tqdm

    from fairseq_hier.data.graphs import GraphBuilder, build_graphs
    from fairseq_hier.data.paragraph_graph import ParagraphGraphWriter

    builder = GraphBuilder(kind)
    n, paragraphs = count_examples(source, separator)
    start = time.perf_counter()
    bar = tqdm(total=n, unit="ex", disable=not progress_bar, mininterval=1.0,
               desc=f"graph {kind}")
    with ParagraphGraphWriter(output_prefix, inputs=[source]) as writer:
        batches = batched(source, separator, batch_size)
        for graphs in build_graphs(builder, batches, workers):
            for g in graphs:
                writer.add(g)
            bar.update(len(graphs))
    bar.close()
    seconds = max(time.perf_counter() - start, 1e-9)
    logger.info(f"wrote {n} {kind} graphs ({paragraphs} paragraphs) of {source} to "
                f"{output_prefix}.{{sizes,offsets,values}}.npy in {seconds:.1f} s "
                f"({n / seconds:.1f} examples/s, {paragraphs / seconds:.0f} paragraphs/s with "
                f"{workers} worker(s))")
    return n
