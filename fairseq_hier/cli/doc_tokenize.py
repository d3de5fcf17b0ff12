"""``fairseq-hier-doc-tokenize``: tokenise a split of parallel documents (paper 004 Sec. 4.2: "We
use Moses for preprocessing the English, German and Czech text and Jieba for tokenizing the
Chinese text"), for any language pair.

    fairseq-hier-doc-tokenize --input work/raw/train --output work/tok/train \\
        --src-lang en --tgt-lang de --workers 8
    fairseq-hier-doc-tokenize --input raw/test --output tok/test --src-lang th --tgt-lang en \\
        --src-tokenizer none

Reads ``INPUT.{src,tgt,docids}`` (our raw layout, :mod:`fairseq_hier.data.documents`, written by
``fairseq-hier-doc-extract``) and writes ``OUTPUT.{src,tgt,docids}`` in the same layout, every
sentence tokenised (:func:`fairseq_hier.data.doc_chunks.tokenizer`). ``--tokenizer`` (both
sides; ``--src-tokenizer`` / ``--tgt-tokenizer`` set one side):

- ``auto`` (default): jieba for ``zh``; sacremoses normalisation and tokenisation with
  ``@-@`` hyphen splits and the language's rules for the languages sacremoses has rules for;
  Moses' language-independent rules for the other Latin-script languages and, with one warning
  line saying so, for every other language code (a made-up one too);
- ``moses``: Moses, with the language's rules where sacremoses has them, else its
  language-independent rules;
- ``jieba``: jieba's word segmentation (Chinese characters);
- ``none``: split at whitespace only, the text kept as is (text tokenised beforehand).

The choice is the prepare step's, recorded with ``fairseq-hier-record --option
src_tokenizer=... --option tgt_tokenizer=...`` so that inference tokenises new documents alike
and ``fairseq-hier-doc-bleu`` detokenises with the inverse. Logs each side's tokenizer and the
rate (sentences per second) that the recipes' time estimates come from. Errors: one line,
exit 1.
"""

import sys
from typing import List, Optional

from fairseq_hier.cli.common import (add_shard_argument, add_split_arguments, command_parser,
                                     positive_int, run_command)
from fairseq_hier.data.doc_chunks import TOKENIZERS
from fairseq_hier.preparation.doc_tokenize import tokenize_split

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
