"""Extract hypotheses from fairseq-generate's output, in example order (one per line).

    fairseq-hier-hypotheses GENERATE_LOG --expected N [-o OUT] [--lines D]

Checks that every example id 0..N-1 has exactly one ``H-`` line (fairseq prints them in batch
order, not input order), so that a silently dropped example cannot shift the ROUGE alignment,
that no id lies beyond ``--expected`` (a log of another split or data set), and that the log is
complete: fairseq-generate's closing ``Generate ... with beam=`` line follows the last hypothesis
and the last line is not cut (:mod:`fairseq_hier.analysis.generate_log`). An empty hypothesis
(``H-i<TAB>score<TAB>``) is kept as an empty line: it must be scored, not dropped. ``--lines D``
reads the detokenised ``D-`` lines instead (fairseq-generate run with ``--bpe``, e.g. GPT-2 BPE
for BART: ``H-`` then holds BPE ids). The output is written whole or not at all, and never over
the log. Bad input gives a one-line error and exit status 1.
"""

import sys
from typing import List, Optional

from fairseq_hier.analysis.generate_log import read_hypotheses
from fairseq_hier.cli.common import command_parser, positive_int, run_command
from fairseq_hier.io import atomic_outputs

PROG = "fairseq-hier-hypotheses"
__all__ = ["read_hypotheses", "cli_main"]


def run(args) -> None:
    if args.output != "-":  # refused before the log is read when it is the log itself
        with atomic_outputs([args.output], inputs=[args.log]) as (out,):
            out.writelines(h + "\n" for h in read_hypotheses(args.log, args.expected, args.lines))
    else:
        sys.stdout.writelines(h + "\n" for h in read_hypotheses(args.log, args.expected,
                                                                 args.lines))


def get_parser():
    parser = command_parser(PROG, __doc__)
    parser.add_argument("log", help="fairseq-generate output (stdout)")
    parser.add_argument("--expected", type=positive_int, default=None,
                        help="number of examples (ids 0..N-1 must each have one hypothesis; "
                             "default: up to the largest id found)")
    parser.add_argument("--output", "-o", default="-", help="output file (default stdout)")
    parser.add_argument("--lines", choices=("H", "D"), default="H",
                        help="H: hypotheses as printed (after --post-process); D: detokenised "
                             "(fairseq-generate --bpe ...)")
    return parser


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
