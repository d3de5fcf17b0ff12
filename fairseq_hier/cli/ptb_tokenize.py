"""``fairseq-hier ptb-tokenize``: the PTB-style tokenisation before ROUGE of fairseq's BART
summarisation recipe (CoreNLP's ``PTBTokenizer -preserveLines``), with pysbd's sentences and
NLTK's Treebank word tokenizer instead of Java.

    fairseq-hier ptb-tokenize test.hyp -o test.hyp.tok [--lower]

Line i of OUTPUT is line i of the input, written whole or not at all, never over it (the rules:
:mod:`fairseq_hier.preparation.ptb_tokenize`). Specification: docs/commands.md, section
ptb-tokenize. Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing
imports it.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, renamed_positional, run_command
from fairseq_hier.preparation.ptb_tokenize import tokenize_file

PROG = "fairseq-hier-ptb-tokenize"


def run(args) -> None:
    tokenize_file(args.input, args.output, args.lower)


def get_parser():
    parser = command_parser(PROG, __doc__)
    parser.add_argument("input", help="text file, one summary per line")
    parser.add_argument("-o", "--output", required=True, help="tokenised file (same line count)")
    renamed_positional(parser, "OUT", "--output")
    parser.add_argument("--lower", action="store_true", help="lowercase as well")
    return parser


def cli_main(argv: Optional[List[str]] = None) -> int:
    return run_command(PROG, run, get_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
