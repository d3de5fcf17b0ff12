"""The paragraph ranker's training labels (Liu & Lapata 2019, paper 002 Sec. 3.1 and 4): the
ROUGE-2 recall of each paragraph of a raw source line against the target summary
(``fairseq-hier-rank labels`` documents the files), and the pairing of two line-aligned raw
files that the ranker's other steps share.
"""

import logging
import time
from typing import Iterator, Optional, Tuple

from fairseq_hier.data.paragraphs import split_source
from fairseq_hier.data.shards import Shard, mark_outputs, select
from fairseq_hier.errors import HierError
from fairseq_hier.io import atomic_outputs, batches
from fairseq_hier.readers.lines import line_texts, progress_total
from fairseq_hier.text.rouge_ngrams import rouge_n_recall, tokenize
from fairseq_hier.workers import ordered_map

logger = logging.getLogger("fairseq_hier.rank_labels")
DECIMALS = 4


def iter_parallel(path_a: str, path_b: str) -> Iterator[Tuple[str, str]]:
    """Pairs of lines of two line-aligned files; ValueError naming both when one ends first."""
    a, b = line_texts(path_a), line_texts(path_b)
    number = 0
    for number, line_a in enumerate(a, start=1):
        line_b = next(b, None)
        if line_b is None:
            raise HierError(f"line counts differ: {path_b} has {number - 1} lines, {path_a} has "
                            f"more (one example per line is expected)")
        yield line_a, line_b
    if next(b, None) is not None:
        raise HierError(f"line counts differ: {path_a} has {number} lines, {path_b} has more "
                        f"(one example per line is expected)")


def example_labels(pair: Tuple[str, str], separator: str = "<P>", lowercase: bool = False,
                   n: int = 2):
    """(source line, target line) -> (labels line or None if no paragraph, paragraphs, empty
    paragraphs dropped, whether the target has no n-gram)."""
    source, target = pair
    _, paragraphs, empty = split_source(source, separator, lowercase)
    if not paragraphs:
        return None, 0, empty, False
    target_tokens = tokenize(target, lowercase)
    recall = rouge_n_recall(paragraphs, target_tokens, n)
    return (" ".join(f"{v:.{DECIMALS}f}" for v in recall), len(paragraphs), empty,
            len(target_tokens) < n)


def _labels_worker(jobs):
    return [example_labels(pair, separator, lowercase, n)
            for pair, separator, lowercase, n in jobs]


def write_labels(source: str, target: str, output: str, separator: str = "<P>",
                 lowercase: bool = False, n: int = 2, workers: int = 1,
                 progress_bar: bool = True, shard: Optional[Shard] = None) -> int:
    """Write the labels of every example of ``source`` and ``target`` (or of their ``shard``:
    :mod:`fairseq_hier.data.shards`) to ``output`` (one line per example; the file appears only
    when every line succeeded); logs the counts and returns the number of examples."""
    from tqdm import tqdm

    selection = select(shard, [source, target], lambda: sum(1 for _ in line_texts(source)))
    pairs = selection.take(iter_parallel(source, target))
    jobs = ((pair, separator, lowercase, n) for pair in pairs)
    stats = dict(examples=0, paragraphs=0, empty=0, no_ngram=0)
    start = time.time()
    results = (line for chunk in ordered_map(_labels_worker, batches(jobs, 32), workers,
                                             "rank-labels") for line in chunk)
    with atomic_outputs([output], inputs=[source, target]) as (out,):
        total = progress_total(target)  # the progress bar's: the shard's examples of it
        bar = tqdm(results, total=total and len(selection.slice(range(total))), unit="ex",
                   mininterval=1.0, desc="labels", disable=not progress_bar)
        for number, (line, num_p, empty, no_ngram) in enumerate(bar, selection.first + 1):
            if line is None:
                raise HierError(f"{source}:{number}: no paragraph (no non-empty segment "
                                f"after a {separator!r} separator): the "
                                f"ranker needs at least one")
            out.write(line + "\n")
            stats["examples"] += 1
            stats["paragraphs"] += num_p
            stats["empty"] += empty
            stats["no_ngram"] += no_ngram
    mark_outputs([output], selection)
    seconds = max(time.time() - start, 1e-9)
    examples = stats["examples"]
    logger.info(f"{selection.label}wrote {output}: {examples} examples, {stats['paragraphs']} "
                f"paragraphs ({stats['paragraphs'] / max(examples, 1):.1f} per example) in "
                f"{seconds:.1f} s ({examples / seconds:.0f} examples/s); {stats['empty']} empty "
                f"paragraphs dropped; {stats['no_ngram']} targets with fewer than {n} tokens "
                f"(all labels 0)")
    return examples
