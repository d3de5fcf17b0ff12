"""``fairseq-hier-rank-labels``: the paragraph ranker's training labels, the ROUGE-2 recall of each
paragraph against the target summary (Liu & Lapata 2019, paper 002 Sec. 3.1 and 4).

    fairseq-hier-rank-labels --source R/train.src --target R/train.tgt --output RB/train.labels

Input, label definition, output and errors: docs/commands.md, section fairseq_hier.cli.rank_labels.
Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, positive_int, run_command
from fairseq_hier.preparation.rank_labels import write_labels

PROG = "fairseq-hier-rank-labels"


def run(args) -> int:
    return write_labels(args.source, args.target, args.output,
                        separator=args.paragraph_separator, lowercase=args.lowercase, n=args.n,
                        workers=args.workers, progress_bar=not args.no_progress_bar,
                        shard=args.shard)


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
    add_shard_argument(p)
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
