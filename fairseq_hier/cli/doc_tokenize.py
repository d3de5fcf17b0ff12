"""``fairseq-hier-doc-tokenize``: tokenise a split of parallel documents (paper 004 Sec. 4.2: "We
use Moses for preprocessing the English, German and Czech text and Jieba for tokenizing the
Chinese text").

    fairseq-hier-doc-tokenize --input work/raw/train --output work/tok/train \\
        --src-lang en --tgt-lang de --workers 8

Reads ``INPUT.{src,tgt,docids}`` (our raw layout, :mod:`fairseq_hier.data.documents`, written by
``fairseq-hier-doc-extract``) and writes ``OUTPUT.{src,tgt,docids}`` in the same layout, every
sentence tokenised (:func:`fairseq_hier.data.doc_chunks.tokenizer`: sacremoses normalisation and
tokenisation with ``@-@`` hyphen splits for Moses languages, jieba for ``zh``). Prints the rate
(sentences per second) that the recipes' time estimates come from. Errors: one line, exit 1.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import add_split_arguments, command_parser, positive_int, run_command
from fairseq_hier.preparation.doc_tokenize import tokenize_split

PROG = "fairseq-hier-doc-tokenize"


def run(args) -> int:
    return tokenize_split(args.input, args.output, args.src_lang, args.tgt_lang,
                          workers=args.workers, progress_bar=not args.no_progress_bar)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    add_split_arguments(p, "prefix of INPUT.{src,tgt,docids}",
                        "prefix of the tokenised OUTPUT.{src,tgt,docids}")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes")
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
