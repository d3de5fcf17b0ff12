"""``fairseq-hier-rank-labels``: the paragraph ranker's training labels, the ROUGE-2 recall of each
paragraph against the target summary (Liu & Lapata 2019, paper 002 Sec. 3.1 and 4).

    fairseq-hier-rank-labels --source R/train.src --target R/train.tgt --output RB/train.labels

Reads raw sources ``title <P> paragraph <P> paragraph ...`` (whitespace tokens, any subword
scheme; paragraphs in any order) and targets, one example per line. The paragraphs are the
non-empty segments after the first separator (the title, before it, gets no label; empty
segments are dropped and counted). Writes one line per example, one label per paragraph in the
paragraphs' order, 4 decimals: ``0.1250 0.0000 0.0417``; the task ``paragraph_ranking`` checks the
counts against the binarised source.

Label y_i = matched target bigrams (counts clipped) / target bigrams, on whitespace tokens as they
are (``--lowercase`` lowercases both sides first); 0 for every paragraph of a target with fewer
than two tokens (counted in the log). :mod:`fairseq_hier.data.rouge_ngrams` computes it (equal
to rouge-score's rouge2 recall on lowercase alphanumeric tokens). Errors, one line naming file and
line: different line counts, an example without paragraph. Files are streamed (WikiSum's train
sources do not fit in memory); the output appears only when every line succeeded.
"""

import logging
import sys
import time
from typing import Iterator, List, Optional, Tuple

from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.data.rouge_ngrams import rouge_n_recall, split_source, tokenize
from fairseq_hier.errors import HierError

logger = logging.getLogger("fairseq_hier.rank_labels")
PROG = "fairseq-hier-rank-labels"
DECIMALS = 4


def iter_lines(path: str) -> Iterator[str]:
    """The lines of a UTF-8 file without their ends, streamed (only ``\\n`` ends a line, as
    :func:`fairseq_hier.io.read_lines`). HierError naming the file (and line) if it cannot be
    read."""
    from fairseq_hier.io import iter_lines as numbered_lines

    for _, line in numbered_lines(path):
        yield line.rstrip("\n").rstrip("\r")


def iter_parallel(path_a: str, path_b: str) -> Iterator[Tuple[str, str]]:
    """Pairs of lines of two line-aligned files; ValueError naming both when one ends first."""
    a, b = iter_lines(path_a), iter_lines(path_b)
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


def count_lines(path: str) -> Optional[int]:
    """Number of lines of a file (for a progress bar's total), None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    except OSError:
        return None


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


def _labels_worker(args):
    pair, separator, lowercase, n = args
    return example_labels(pair, separator, lowercase, n)


def run(args) -> int:
    from multiprocessing import Pool

    from tqdm import tqdm

    from fairseq_hier.io import atomic_outputs

    pairs = iter_parallel(args.source, args.target)
    jobs = ((pair, args.paragraph_separator, args.lowercase, args.n) for pair in pairs)
    stats = dict(examples=0, paragraphs=0, empty=0, no_ngram=0)
    start = time.time()
    pool = Pool(args.workers) if args.workers > 1 else None
    results = (pool.imap(_labels_worker, jobs, chunksize=32) if pool
               else map(_labels_worker, jobs))
    try:
        with atomic_outputs([args.output], inputs=[args.source, args.target]) as (out,):
            bar = tqdm(results, total=count_lines(args.target), unit="ex", mininterval=1.0,
                       desc="labels", disable=args.no_progress_bar)
            for number, (line, num_p, empty, no_ngram) in enumerate(bar, start=1):
                if line is None:
                    raise HierError(f"{args.source}:{number}: no paragraph (no non-empty segment "
                                    f"after a {args.paragraph_separator!r} separator): the "
                                    f"ranker needs at least one")
                out.write(line + "\n")
                stats["examples"] += 1
                stats["paragraphs"] += num_p
                stats["empty"] += empty
                stats["no_ngram"] += no_ngram
    finally:
        if pool:
            pool.terminate()
    seconds = max(time.time() - start, 1e-9)
    n = stats["examples"]
    logger.info(f"wrote {args.output}: {n} examples, {stats['paragraphs']} paragraphs "
                f"({stats['paragraphs'] / max(n, 1):.1f} per example) in {seconds:.1f} s "
                f"({n / seconds:.0f} examples/s); {stats['empty']} empty paragraphs dropped; "
                f"{stats['no_ngram']} targets with fewer than {args.n} tokens (all labels 0)")
    return n


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--source", required=True,
                   help="raw sources, one example per line: title <P> paragraph <P> ...")
    p.add_argument("--target", required=True, help="target summaries, one per line")
    p.add_argument("--output", required=True,
                   help="labels: one line per example, one ROUGE-2 recall per paragraph")
    p.add_argument("--lowercase", action="store_true", help="lowercase sources and targets first")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="paragraph-boundary token (default <P>)")
    p.add_argument("-n", type=positive_int, default=2,
                   help="n of the ROUGE-N recall (002: ROUGE-2; default 2)")
    p.add_argument("--workers", type=positive_int, default=1, help="processes computing labels")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
