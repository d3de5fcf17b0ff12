"""LexRank baseline (Erkan & Radev 2004) as Liu & Lapata 2019 (002, "Comparison Systems") run it:
"we build a graph with paragraphs as nodes and edges weighted by tf-idf cosine similarity; we
run a PageRank-like algorithm on this graph to rank and select paragraphs until the length of
the ground-truth summary is reached".

    fairseq-hier-lexrank --source test.src --reference test.tgt --output lexrank.hyp

The method, our reading of it and its errors: :mod:`fairseq_hier.baselines.lexrank`.
"""

import logging
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, ranged, run_command
from fairseq_hier.baselines.lexrank import lexrank_file

logger = logging.getLogger("fairseq_hier.lexrank")
PROG = "fairseq-hier-lexrank"


def run(args) -> None:
    n, short, empty = lexrank_file(args.source, args.reference, args.output,
                                   args.paragraph_separator, args.damping, args.threshold,
                                   progress=not args.no_progress_bar)
    if short:
        logger.warning(f"{short} source(s) are shorter than their reference: their LexRank "
                       f"summary is the whole source (paragraphs in score order)")
    if empty:
        logger.warning(f"{empty} reference(s) are empty: their LexRank summary is empty")
    variant = "continuous" if args.threshold is None else f"threshold {args.threshold}"
    logger.info(f"wrote {n} LexRank summaries ({variant}, damping {args.damping}) to "
                f"{args.output}")


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--source", required=True,
                   help="raw source lines: title <P> paragraph 1 <P> paragraph 2 ...")
    p.add_argument("--reference", required=True,
                   help="reference summaries, one per line (their token counts give K)")
    p.add_argument("--output", required=True, help="LexRank summaries, one per line")
    p.add_argument("--damping", type=ranged(float, 0, 1, low_open=True), default=0.85,
                   help="probability of following an edge (PageRank's d; default 0.85)")
    p.add_argument("--threshold", type=ranged(float, 0, 1), default=None,
                   help="thresholded LexRank: binary edges where the cosine exceeds this "
                        "(default: continuous LexRank, edges weighted by the cosines)")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="paragraph-boundary token (default <P>, as the task's)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
