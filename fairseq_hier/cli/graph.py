"""``fairseq-hier graph``: the paragraph graphs (tf-idf, discourse) of 002's graph-informed
attention (Liu & Lapata 2019, Eq. 24).

    fairseq-hier graph --input raw/test.src --kind adg --output-prefix data-bin/test.graph.adg \\
        --workers 8

Specification: docs/commands.md, section graph (the files: :mod:`fairseq_hier.data.
paragraph_graph`). Imports the library packages it calls and ``fairseq_hier.cli.common``;
nothing imports it.
"""

import argparse
import sys
from typing import List, Optional

from fairseq_hier.cli.common import (add_shard_argument, command_parser, positive_int, renamed,
                                     run_command)
from fairseq_hier.preparation.graphs import write_graphs

PROG = "fairseq-hier-graph"


def run(args) -> None:
    write_graphs(args.input, args.kind, args.output_prefix, args.paragraph_separator,
                 workers=args.workers, batch_size=args.batch_size,
                 progress_bar=not args.no_progress_bar, shard=args.shard)


def get_parser() -> argparse.ArgumentParser:
    p = command_parser(PROG, __doc__)
    p.add_argument("-i", "--input", required=True,
                   help="raw source lines of one split: title <P> paragraph 1 <P> paragraph 2 ...")
    renamed(p, "--input", "--source")
    p.add_argument("--kind", required=True, choices=("tfidf", "adg"),
                   help="tfidf: tf-idf cosine similarities; adg: approximate discourse graph")
    p.add_argument("--output-prefix", required=True,
                   help="writes PREFIX.{sizes,offsets,values}.npy; the task reads "
                        "DATA/SPLIT.graph.KIND")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="paragraph-boundary token (default <P>, as the task's)")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes (default 1)")
    p.add_argument("--batch-size", type=positive_int, default=64,
                   help="examples per batch handed to a worker; for adg, the paragraphs of a "
                        "batch go through spaCy's nlp.pipe together (default 64)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    add_shard_argument(p)
    return p


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
