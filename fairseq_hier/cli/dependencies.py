"""``fairseq-hier-deps``: a dependency parse projected onto the pieces of a binarized source, for
ParsingSum (003): ``PREFIX.{bin,idx}``, one int16 code per source token and EOS.

    fairseq-hier-deps --conllu parsed/train.conllu --source bpe/train.src \
        --subword sentencepiece --output-prefix data-bin/train.parse.spacy

Inputs, rules and errors: docs/commands.md, section fairseq_hier.cli.dependencies (the codes:
:mod:`fairseq_hier.data.dependency_codes`).
Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_shard_argument, command_parser, run_command
from fairseq_hier.preparation.dependencies import SUBWORD_SCHEMES, project_dependencies

PROG = "fairseq-hier-deps"


def run(args) -> None:
    project_dependencies(args.conllu, args.source, args.subword, args.output_prefix,
                         separator=args.separator, shard=args.shard)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    p.add_argument("--conllu", required=True,
                   help="the split's parse (fairseq-hier-parse's PREFIX.conllu or any CoNLL-U "
                        "with '# newdoc' per example)")
    p.add_argument("--source", required=True,
                   help="the split's subword source, as given to fairseq-preprocess")
    p.add_argument("--subword", required=True, choices=SUBWORD_SCHEMES,
                   help="how the source's pieces make words: sentencepiece (U+2581 starts a "
                        "word), bpe (@@ continues), none (one token, one word)")
    p.add_argument("--output-prefix", required=True,
                   help="writes PREFIX.{bin,idx}; the task reads DATA/SPLIT.parse.NAME")
    p.add_argument("--separator", default="<P>",
                   help="paragraph separator token of the source (default <P>); never a word")
    add_shard_argument(p)
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
