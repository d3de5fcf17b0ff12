"""``fairseq-hier-rank-eval``: how much of the target the first L paragraphs of a ranking cover,
Table 1 of Liu & Lapata (2019, paper 002): ROUGE-L recall of the concatenated L best paragraphs
against the gold target, averaged over examples (x100), for the original order, the tf-idf
similarity to the title (the order ``fairseq-hier-rank --method tfidf`` writes) and each
``--ranked NAME=FILE``, with bootstrap intervals.

    fairseq-hier-rank-eval --source R/test.src --target R/test.tgt \\
        --ranked ranker=ranked/test.src --L 5 10 20 40

Orderings, checks and output: docs/commands.md, section fairseq_hier.cli.rank_eval. Imports the
library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import json
import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, count, positive_int, run_command
from fairseq_hier.ranking.evaluation import evaluate_rankings

PROG = "fairseq-hier-rank-eval"


def run(args) -> dict:
    table, result = evaluate_rankings(
        args.source, args.target, args.ranked or [], args.L, lowercase=args.lowercase,
        separator=args.paragraph_separator, similarity=not args.no_similarity,
        bootstrap=args.bootstrap, seed=args.seed, workers=args.workers,
        progress_bar=not args.no_progress_bar)
    print(table)
    print(json.dumps(result))
    sys.stdout.flush()
    return result


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--source", required=True,
                   help="raw sources in their original order: title <P> paragraph <P> ...")
    p.add_argument("--target", required=True, help="target summaries, one per line")
    p.add_argument("--ranked", nargs="+", metavar="NAME=FILE", action="extend",
                   help="ranked versions of --source (fairseq-hier-rank output), by name")
    p.add_argument("--L", nargs="+", type=positive_int, default=[5, 10, 20, 40],
                   help="numbers of leading paragraphs measured (002 Table 1: 5 10 20 40)")
    p.add_argument("--lowercase", action="store_true", help="lowercase every side first")
    p.add_argument("--paragraph-separator", default="<P>",
                   help="paragraph-boundary token (default <P>)")
    p.add_argument("--no-similarity", action="store_true",
                   help="skip the tf-idf similarity ranking (the slowest part)")
    p.add_argument("--bootstrap", type=count, default=1000,
                   help="bootstrap resamples for the 95%% intervals (0: none)")
    p.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    p.add_argument("--workers", type=positive_int, default=1, help="processes scoring examples")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
