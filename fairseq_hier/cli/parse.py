"""``fairseq-hier-parse``: the dependency parse of a raw source split with spaCy, for ParsingSum
(003): ``PREFIX.conllu`` (the parse) and ``PREFIX.tok`` (the source tokenised as parsed).

    fairseq-hier-parse --input raw/train.src --output-prefix parsed/train --workers 2

Input, outputs, workers and measured rates: docs/commands.md, section fairseq_hier.cli.parse.
Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, positive_int, run_command
from fairseq_hier.preparation.parse import DEFAULT_MODEL, parse_file

PROG = "fairseq-hier-parse"


def run(args) -> None:
    parse_file(args.input, args.output_prefix, model=args.model, separator=args.separator,
               batch_size=args.batch_size, workers=args.workers,
               progress_bar=not args.no_progress_bar, shard=args.shard)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--input", required=True,
                   help="raw source lines of one split: title <P> paragraph 1 <P> ...")
    p.add_argument("--output-prefix", required=True,
                   help="writes PREFIX.conllu (the parse) and PREFIX.tok (the tokenised source)")
    p.add_argument("--separator", default="<P>",
                   help="segment separator (default <P>, the task's paragraph separator)")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"spaCy pipeline: installed package name or path (default {DEFAULT_MODEL})")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="parsing processes, each with its own spaCy pipeline (default 1)")
    p.add_argument("--batch-size", type=positive_int, default=64,
                   help="segments per nlp.pipe batch (default 64)")
    p.add_argument("--no-progress-bar", action="store_true", help="no tqdm progress bar")
    add_shard_argument(p)
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
