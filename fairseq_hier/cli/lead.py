"""Lead baseline (Liu & Lapata 2019; Ma & Zong 2020): the first K tokens of the title followed by
the ranked paragraphs, where K is the token length of that example's reference summary.

    fairseq-hier-lead --source test.src --reference test.tgt --output lead.hyp

The baseline, its input format and its warnings: :mod:`fairseq_hier.baselines.lead`.
"""

import logging
import sys
from typing import List, Optional

from fairseq_hier.baselines.lead import lead_file
from fairseq_hier.cli.common import command_parser, run_command

PROG = "fairseq-hier-lead"
logger = logging.getLogger("fairseq_hier.lead")


def run(args) -> None:
    n = lead_file(args.source, args.reference, args.output, args.paragraph_separator)
    logger.info(f"wrote {n} Lead summaries to {args.output}")


def get_parser():
    parser = command_parser(PROG, __doc__)
    parser.add_argument("--source", required=True,
                        help="raw source lines: title <P> paragraph 1 <P> paragraph 2 ...")
    parser.add_argument("--reference", required=True,
                        help="reference summaries, one per line (their lengths give K)")
    parser.add_argument("--output", required=True, help="Lead summaries, one per line")
    parser.add_argument("--paragraph-separator", default="<P>",
                        help="paragraph-boundary token, removed from the output (default <P>)")
    return parser


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
