"""``fairseq-hier-ptb-tokenize IN OUT``: the PTB-style tokenisation step before ROUGE that
fairseq's BART summarisation recipe runs (Stanford CoreNLP's ``PTBTokenizer -preserveLines`` on
hypotheses and references), with Python libraries instead of Java: each line is split into
sentences by pysbd, each sentence tokenised by NLTK's Penn Treebank word tokenizer
(``TreebankWordTokenizer``, regular expressions only: no NLTK data needed), and the sentences are
joined again on the one line. So every sentence ends in a separate ``.`` (``rouge -e .`` splits
there for summary-level ROUGE-L), ``can't`` becomes ``ca n't``, quotes become ```` `` '' ````.

Why not sacremoses: its ``penn_tokenize`` fails on every input in sacremoses 0.2.0. Why split
sentences first: the Treebank tokenizer detaches only a line's final period, as CoreNLP does
for each sentence. Line i of OUT is line i of IN (an empty line stays empty); ``--lower``
lowercases as well. OUT is written whole or not at all, never over IN. Bad input (missing file,
not UTF-8) is a one-line error, exit 1.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import command_parser, run_command
from fairseq_hier.preparation.ptb_tokenize import tokenize_file

PROG = "fairseq-hier-ptb-tokenize"


def run(args) -> None:
    tokenize_file(args.input, args.output, args.lower)


def cli_main(argv: Optional[List[str]] = None) -> int:
    parser = command_parser(PROG, __doc__)
    parser.add_argument("input", help="text file, one summary per line")
    parser.add_argument("output", help="tokenised file (same line count)")
    parser.add_argument("--lower", action="store_true", help="lowercase as well")
    return run_command(PROG, run, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
