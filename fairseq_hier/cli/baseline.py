"""``fairseq-hier baseline``: the extractive baselines, cut at the reference's length: lead,
lexrank (Liu & Lapata 2019; Ma & Zong 2020).

    fairseq-hier baseline lead --source test.src --reference test.tgt -o lead.hyp
    fairseq-hier baseline lexrank --source test.src --reference test.tgt -o lexrank.hyp

Specification: docs/commands.md, section baseline (the methods, our reading of them and their
warnings: :mod:`fairseq_hier.baselines`). Imports the library packages it calls and
``fairseq_hier.cli.common``; nothing imports it.
"""

import argparse
import logging
import sys
from typing import List, Optional

from fairseq_hier.baselines.lead import lead_file
from fairseq_hier.baselines.lexrank import lexrank_file
from fairseq_hier.cli.common import (family_parser, ranged, run_command, run_subcommand,
                                     subcommand)

PROG = "fairseq-hier-baseline"
logger = logging.getLogger("fairseq_hier.baseline")


def lead(args) -> None:
    n = lead_file(args.source, args.reference, args.output, args.paragraph_separator)
    logger.info(f"wrote {n} Lead summaries to {args.output}")


def lexrank(args) -> None:
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


def _add_files(p: argparse.ArgumentParser, name: str) -> None:
    """The options both baselines share: the split's sources, references and the output."""
    p.add_argument("--source", required=True,
                   help="raw source lines: title <P> paragraph 1 <P> paragraph 2 ...")
    p.add_argument("--reference", required=True,
                   help="reference summaries, one per line (their token counts give K)")
    p.add_argument("-o", "--output", required=True, help=f"{name} summaries, one per line")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="paragraph-boundary token, removed from the output (default <P>, as the "
                        "task's)")


def get_parser() -> argparse.ArgumentParser:
    parser, sub = family_parser(PROG, __doc__)
    p = subcommand(sub, "lead", lead, "Lead: the first K tokens of the title followed by the "
                   "ranked paragraphs, K the token length of the example's reference summary")
    _add_files(p, "Lead")
    p = subcommand(sub, "lexrank", lexrank, "LexRank (Erkan & Radev 2004) as 002 ran it: "
                   "paragraphs ranked by PageRank on their tf-idf cosine graph, selected until "
                   "the reference's length")
    _add_files(p, "LexRank")
    p.add_argument("--damping", type=ranged(float, 0, 1, low_open=True), default=0.85,
                   help="probability of following an edge (PageRank's d; default 0.85)")
    p.add_argument("--threshold", type=ranged(float, 0, 1), default=None,
                   help="thresholded LexRank: binary edges where the cosine exceeds this "
                        "(default: continuous LexRank, edges weighted by the cosines)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    return parser


run = run_subcommand


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
