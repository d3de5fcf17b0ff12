"""``fairseq-hier-doc-tokenize``: tokenise a split of parallel documents (paper 004 Sec. 4.2: "We
use Moses for preprocessing the English, German and Czech text and Jieba for tokenizing the
Chinese text"), for any language pair.

    fairseq-hier-doc-tokenize --input work/raw/train --output work/tok/train \
        --src-lang en --tgt-lang de --workers 8

Layout, the tokenizer choices and how they are recorded: docs/commands.md, section
fairseq_hier.cli.doc_tokenize.
Imports the library packages it calls and ``fairseq_hier.cli.common``; nothing imports it.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import (add_shard_argument, add_split_arguments, command_parser,
                                     positive_int, run_command)
from fairseq_hier.preparation.doc_tokenize import tokenize_split
from fairseq_hier.text.tokenizers import TOKENIZERS

PROG = "fairseq-hier-doc-tokenize"


def run(args) -> int:
    return tokenize_split(args.input, args.output, args.src_lang, args.tgt_lang,
                          workers=args.workers, progress_bar=not args.no_progress_bar,
                          src_tokenizer=args.src_tokenizer or args.tokenizer,
                          tgt_tokenizer=args.tgt_tokenizer or args.tokenizer, shard=args.shard)


def cli_main(argv: Optional[List[str]] = None) -> int:
    p = command_parser(PROG, __doc__)
    add_split_arguments(p, "prefix of INPUT.{src,tgt,docids}",
                        "prefix of the tokenised OUTPUT.{src,tgt,docids}")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes")
    p.add_argument("--tokenizer", choices=TOKENIZERS, default="auto",
                   help="both sides' tokenizer (default auto: jieba for zh, Moses otherwise, "
                        "with language-independent rules where sacremoses has none)")
    p.add_argument("--src-tokenizer", choices=TOKENIZERS, default=None,
                   help="the source side's tokenizer (default: --tokenizer)")
    p.add_argument("--tgt-tokenizer", choices=TOKENIZERS, default=None,
                   help="the target side's tokenizer (default: --tokenizer)")
    add_shard_argument(p)
    return run_command(PROG, run, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(cli_main())
